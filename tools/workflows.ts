/** Workflow progress and the audit trail (`docs/api.md#workflows-and-audit`). */
import { z } from 'zod';
import { InvalidParams, NotFound } from '../core/errors.js';
import { WorkflowApproval } from '../core/governance/approvals.js';
import { AuditEntry, ServiceName, TeamName, WorkflowStep } from '../core/model.js';
import { didYouMean } from '../core/near.js';
import { isOperationId, OPERATION_IDS } from '../core/operations/index.js';
import type { AuditRecord, AuditVisibility, Platform, TenantRef, WorkflowRun } from '../core/ports.js';
import type { Identity } from '../auth/identity.js';
import { requireTenantAccess, roleAllows, roleIn, visibleTenants } from './access.js';
import { defineTool, type StreamDefinition } from './define.js';
import { tenantNotFound } from './not-found.js';
import {
  WaitOutcome,
  WaitSeconds,
  WorkflowEvent,
  WorkflowPhase,
  settledDetails,
  viewPhase,
  waitForWorkflow,
  workflowEvents,
} from './workflow-view.js';

/** Entries `GET /api/v1/audit` returns (`docs/api.md#limits`). */
export const AUDIT_LIMIT = 50;

/** A workflow name as an execution returns it. */
export const WorkflowName = z
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

/**
 * The audit entry of workflow `name`, when `identity` may read it: its caller, a platform admin, or a viewer or more of
 * the tenant it belongs to (by the tenant's current identity, not a deleted tenant that had the same name).
 * @throws NotFound `workflow not found: <name>` both for no such workflow and for one the caller may not see, so
 *   workflow names of other tenants cannot be probed; with close names of workflows it may read (`; did you mean …?`).
 */
export async function readableAudit(platform: Platform, identity: Identity, name: string): Promise<AuditRecord> {
  const audit = await platform.audit.get(name);
  // The names it suggests (issue 19 item 5) are of workflows the caller may read, so none of another tenant leaks.
  const notFound = async () => {
    const seen = await platform.workflows.list({ visible: await visibilityOf(platform, identity), limit: MAX_WORKFLOWS });
    return new NotFound(`workflow not found: ${name}${didYouMean(name, seen.map((r) => r.name), { maxDistance: 2 })}`);
  };
  if (!audit) throw await notFound();
  if (!identity.admin && audit.userId !== identity.userId) {
    const team = audit.parameters.team_name ?? '';
    const tenant = await platform.backend.getTenant(team);
    if (!roleAllows(roleIn(tenant, identity), 'viewer')) throw await notFound();
    const ref = await platform.backend.getTenantRef(team);
    if (!ref || audit.tenantUid !== ref.uid) throw await notFound();
  }
  return audit;
}

/**
 * The engine is the source of truth: settle the audit entry of a settled `run` if its settle event was missed (e.g.
 * across a restart), and return the entry as it now stands.
 */
async function settleMissed(platform: Platform, audit: AuditRecord, run: WorkflowRun): Promise<AuditRecord> {
  if (run.phase === 'submitted' || audit.status !== 'submitted') return audit;
  await platform.audit.settle(audit.workflowName, run.phase, run.message);
  return { ...audit, status: run.phase, message: run.message };
}

export const getWorkflow = defineTool({
  name: 'platform_get_workflow',
  title: 'Get workflow progress',
  description:
    'A submitted operation: steps, phase (submitted, awaiting-approval, running, succeeded, failed), audit entry, and ' +
    'the approval it waits for (who may approve, until when); once settled the service host and any failed step with ' +
    'its log tail. wait_seconds answers when it settles or time is up ("settled": false: call again). Changes nothing.',
  input: z.object({
    name: WorkflowName.describe('Workflow name from an execution, e.g. "deploy-service-x7k2p"'),
    wait_seconds: WaitSeconds,
  }),
  output: WaitOutcome.extend({
    workflow: z.string(),
    audit: AuditEntry,
    note: z.string().describe('Progress or outcome as the workflow engine reports it'),
    steps: z.array(WorkflowStep),
    cancelledBy: z.string().optional().describe('Who cancelled it, once someone did'),
    retryOf: z.string().optional().describe('The failed workflow it retries'),
    approval: WorkflowApproval.optional().describe('The approval it waits or waited for, when its tenant\'s policy asked for one'),
  }),
  rest: { method: 'GET', path: '/api/v1/workflows/{name}' },
  access: 'authenticated',
  kind: 'read',
  toolset: 'observe',
  annotations: { idempotentHint: true, openWorldHint: true },
  handler: async ({ name, wait_seconds }, { platform, identity, settings, interaction }) => {
    let audit = await readableAudit(platform, identity, name);
    const run = await waitForWorkflow(platform, name, wait_seconds, interaction);
    if (run) audit = await settleMissed(platform, audit, run);
    const where = platform.kind === 'sandbox' ? 'the embedded sandbox workflow engine' : 'Argo Workflows';
    const phase = run ? viewPhase(run) : audit.status;
    const note = run
      ? `${phase} in ${where}${run.message ? `: ${run.message}` : ''}`
      : `${where} no longer has this workflow; the audit entry is the record`;
    const { tenantUid: _tenantUid, ...entry } = audit;
    const details = run ? await settledDetails(platform, settings.domain, run) : {};
    return {
      workflow: name,
      audit: entry,
      note,
      phase,
      settled: audit.status !== 'submitted',
      steps: run?.steps ?? [],
      ...details,
      ...(run?.approval ? { approval: run.approval } : {}),
      ...(run?.cancelledBy && { cancelledBy: run.cancelledBy }),
      ...(run?.retryOf && { retryOf: run.retryOf }),
    };
  },
});

/**
 * `GET /api/v1/workflows/{name}/events`: the workflow's step changes and its settlement as server-sent events, for
 * people's tools (`pds wait`, the console) that show a workflow as it runs. Same access as {@link getWorkflow}.
 */
export const followWorkflow: StreamDefinition<z.ZodObject<{ name: typeof WorkflowName }>, typeof WorkflowEvent> = {
  name: 'platform_follow_workflow',
  title: 'Follow a workflow',
  description:
    'Server-sent events (text/event-stream) of one workflow: a "step" event for each step that has started or ' +
    'finished (those before the request first, then each change once, as it happens), then one "settled" event with ' +
    'the outcome (phase, host, failed step with its log tail), after which the stream closes. Comment lines ' +
    '(": heartbeat") keep idle connections open. An "error" event ({"error"}) ends a stream that fails after it ' +
    'started. Not resumable (no event ids): reconnect and the steps so far are sent again. To wait without a stream, ' +
    'GET /api/v1/workflows/{name}?wait_seconds= answers once settled. Changes nothing. Not an MCP tool: MCP clients ' +
    'use platform_get_workflow with wait_seconds and progress notifications.',
  input: z.object({ name: WorkflowName.describe('Workflow name from an execution, e.g. "deploy-service-x7k2p"') }),
  event: WorkflowEvent,
  eventNames: ['step', 'settled', 'error'],
  rest: { method: 'GET', path: '/api/v1/workflows/{name}/events' },
  access: 'authenticated',
  kind: 'read',
  handler: async ({ name }, { platform, identity, settings, signal }) => {
    const audit = await readableAudit(platform, identity, name);
    return workflowEvents(
      platform,
      settings.domain,
      name,
      signal,
      async (run) => {
        const now = await platform.audit.get(name);
        if (now) await settleMissed(platform, now, run);
      },
      () => ({ workflow: name, phase: audit.status, settled: audit.status !== 'submitted', message: audit.message, steps: [] }),
    );
  },
};

/** Every stream, in OpenAPI order. */
export const workflowStreams = [followWorkflow] as const;

/** Most workflows one listing returns. */
export const MAX_WORKFLOWS = 100;

export const listWorkflows = defineTool({
  name: 'platform_list_workflows',
  title: 'List workflows',
  description:
    'Workflow history, newest first (name, operation, phase, times, caller, parameters, message) by team, service ' +
    'or operation.',
  input: z.object({
    team: TeamName.optional().describe('e.g. "acme"'),
    service: ServiceName.optional().describe('Needs team, e.g. "web"'),
    operation: z
      .string()
      .refine(isOperationId, `must be an operation name: ${OPERATION_IDS.join(', ')}`)
      .optional()
      .describe('e.g. "deploy-service"'),
    limit: z.coerce.number().int().min(1).max(MAX_WORKFLOWS).default(20).describe('e.g. 20'),
  }),
  output: z.object({
    items: z.array(
      z.object({
        name: z.string(),
        operation: z.string(),
        phase: WorkflowPhase,
        startedAt: z.string(),
        finishedAt: z.string().optional(),
        userId: z.string(),
        parameters: z.record(z.string(), z.string()),
        message: z.string(),
      }),
    ),
    count: z.number().int(),
  }),
  rest: { method: 'GET', path: '/api/v1/workflows' },
  access: 'authenticated',
  kind: 'read',
  toolset: 'observe',
  annotations: { idempotentHint: true, openWorldHint: true },
  handler: async ({ team, service, operation, limit }, { platform, identity }) => {
    if (service && !team) throw new InvalidParams('service: needs team, e.g. team=acme&service=web (a service name is unique within its tenant)');
    if (team) {
      await requireTenantAccess(platform.backend, identity, team, 'viewer');
      if (identity.admin && !(await platform.backend.getTenant(team))) throw await tenantNotFound(platform.backend, identity, team);
    }
    const runs = await platform.workflows.list({ visible: await visibilityOf(platform, identity), tenant: team, service, operation, limit });
    const items = runs.map((run) => ({
      name: run.name,
      operation: run.operation,
      phase: viewPhase(run),
      startedAt: run.startedAt,
      ...(run.finishedAt && { finishedAt: run.finishedAt }),
      userId: run.userId,
      parameters: run.parameters,
      message: run.message,
    }));
    return { items, count: items.length };
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

export const workflowTools = [getWorkflow, listWorkflows, listAudit] as const;
