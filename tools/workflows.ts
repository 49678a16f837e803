/** Workflow progress and the audit trail (SPEC.md "Workflows and audit"). */
import { z } from 'zod';
import { NotFound } from '../core/errors.js';
import { AuditEntry } from '../core/model.js';
import type { AuditVisibility, Platform, TenantRef } from '../core/ports.js';
import type { Identity } from '../auth/identity.js';
import { roleAllows, roleIn, visibleTenants } from './access.js';
import { defineTool } from './define.js';

/** Entries `GET /api/v1/audit` returns (SPEC.md "Limits"). */
export const AUDIT_LIMIT = 50;

const WorkflowName = z
  .string()
  .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'must be a workflow name as returned by an execution, e.g. "deploy-service-x7k2p"')
  .max(253);

/**
 * What the caller may read of the audit trail and workflows: admins everything; others their own records and those of
 * the tenants they belong to, by the tenants' current identity (so a re-created tenant does not see its predecessor's
 * history: issue 7 item 4).
 */
export async function visibilityOf(platform: Platform, identity: Identity): Promise<AuditVisibility> {
  const tenants = await visibleTenants(platform.backend, identity);
  if (tenants === 'all') return 'all';
  const refs = await Promise.all([...tenants].map((name) => platform.backend.getTenantRef(name)));
  return { userId: identity.userId, tenants: refs.filter((ref): ref is TenantRef => ref !== undefined) };
}

export const getWorkflow = defineTool({
  name: 'platform_get_workflow',
  title: 'Get workflow progress',
  description:
    'Progress of one submitted operation: its audit entry (caller, parameters, risk level) whose status is submitted ' +
    'while it runs, then succeeded or failed, with a message saying what happened; "note" shows the current step. ' +
    'Poll it after any operation tool until the status is final (every few seconds). Changes nothing.',
  input: z.object({ name: WorkflowName.describe('Workflow name from an execution, e.g. "deploy-service-x7k2p"') }),
  output: z.object({
    workflow: z.string(),
    audit: AuditEntry,
    note: z.string().describe('Progress or outcome as the workflow engine reports it'),
  }),
  rest: { method: 'GET', path: '/api/v1/workflows/{name}' },
  access: 'authenticated',
  kind: 'read',
  toolset: 'observe',
  annotations: { idempotentHint: true, openWorldHint: true },
  handler: async ({ name }, { platform, identity }) => {
    let audit = await platform.audit.get(name);
    // One answer for "no such workflow" and "not yours to see", so workflow names of other tenants cannot be probed.
    const notFound = new NotFound(`workflow not found: ${name}`);
    if (!audit) throw notFound;
    if (!identity.admin && audit.userId !== identity.userId) {
      // A member of the tenant's current identity only: not of a deleted tenant that had the same name.
      const name = audit.parameters.team_name ?? '';
      const tenant = await platform.backend.getTenant(name);
      if (!roleAllows(roleIn(tenant, identity), 'viewer')) throw notFound;
      const ref = await platform.backend.getTenantRef(name);
      if (!ref || audit.tenantUid !== ref.uid) throw notFound;
    }
    const run = await platform.workflows.get(name);
    // The engine is the source of truth; settle the audit entry if a settle event was missed (e.g. a restart).
    if (run && run.phase !== 'submitted' && audit.status === 'submitted') {
      await platform.audit.settle(name, run.phase, run.message);
      audit = { ...audit, status: run.phase, message: run.message };
    }
    const where = platform.kind === 'sandbox' ? 'the embedded sandbox workflow engine' : 'Argo Workflows';
    const note = run
      ? `${audit.status === 'submitted' ? 'running' : audit.status} in ${where}${run.message ? `: ${run.message}` : ''}`
      : `${where} no longer has this workflow; the audit entry is the record`;
    const { tenantUid: _tenantUid, ...entry } = audit;
    return { workflow: name, audit: entry, note };
  },
});

export const listAudit = defineTool({
  name: 'platform_list_audit',
  title: 'List the audit trail',
  description:
    'The 50 most recent operation executions, newest first: who ran what with which parameters, risk level, workflow ' +
    'name and status (submitted, succeeded, failed). Platform admins see all; others see their tenants\' entries and ' +
    'their own. For a failure message use platform_get_workflow. Changes nothing.',
  input: z.object({}),
  output: z.object({ items: z.array(AuditEntry.omit({ message: true })), count: z.number().int() }),
  rest: { method: 'GET', path: '/api/v1/audit' },
  access: 'authenticated',
  kind: 'read',
  toolset: 'observe',
  annotations: { idempotentHint: true, openWorldHint: false },
  handler: async (_input, { platform, identity }) => {
    const entries = await platform.audit.query({ visible: await visibilityOf(platform, identity), limit: AUDIT_LIMIT });
    const items = entries.map(({ message: _message, tenantUid: _tenantUid, ...rest }) => rest);
    return { items, count: items.length };
  },
});

export const workflowTools = [getWorkflow, listAudit] as const;
