/**
 * Stop and retry workflows (issue 22 item 5), beside the contract's endpoints (`docs/api.md#beside-the-contract`):
 *
 * - `POST /api/v1/workflows/{name}/cancel` stops a workflow that has not settled; it settles `failed` with `cancelled
 *   by <user>`, the service stays on its last good version, and the cancellation is a `workflow.cancelled` event in
 *   the tenant's feed (never an audit entry: the execution's own entry settles `failed`). With `force` (Kubernetes:
 *   Argo's Terminate) the exit handler that undoes a deploy does not run, and the answer warns so.
 * - `POST /api/v1/workflows/{name}/retry` executes the failed workflow's operation again, by whoever retries, with its
 *   recorded parameters, through the execute pipeline every execution takes (access, scopes, preflight, freeze
 *   windows, confirmation, audit); it never copies `confirm`, `override_reason` or secret values.
 *
 * Both need the role `member` (or more) in the workflow's tenant, or a platform admin. A workflow the caller may not
 * read is "not found", as for `GET /api/v1/workflows/{name}`. A workflow in the wrong state is a 409 (`CONFLICT`).
 */
import { z } from 'zod';
import { Conflict } from '../core/errors.js';
import { protectedResourceMetadataUrl } from '../core/names.js';
import { cancelledMessage } from '../core/workflow-control.js';
import { isOperationId, OPERATIONS } from '../core/operations/index.js';
import type { AuditRecord } from '../core/ports.js';
import { authorize, requireTenantAccess } from './access.js';
import { defineTool, type ToolContext } from './define.js';
import { ConfirmationRequest, ExecuteResult, submitOperation } from './operations/execute.js';
import { findOperationTool } from './operations/catalog.js';
import { requireScopes } from './scopes.js';
import { parseInput } from './validation.js';
import { WorkflowPhase, viewPhase } from './workflow-view.js';
import { readableAudit, WorkflowName } from './workflows.js';

/**
 * The audit entry of workflow `name` when the caller may act on it: they may read it (else NotFound) and hold the role
 * `member` or more in its tenant (else Forbidden; viewers read only).
 */
async function controllableAudit(ctx: ToolContext, name: string): Promise<AuditRecord> {
  const audit = await readableAudit(ctx.platform, ctx.identity, name);
  await requireTenantAccess(ctx.platform.backend, ctx.identity, audit.parameters.team_name ?? '', 'member');
  return audit;
}

export const cancelWorkflow = defineTool({
  name: 'platform_cancel_workflow',
  title: 'Cancel a workflow',
  description:
    'Stop a running or awaiting workflow: it settles failed ("cancelled by <you>"); the service stays on its last ' +
    'good version. Tenant members and admins.',
  input: z.object({
    name: WorkflowName.describe('Workflow name, e.g. "deploy-service-x7k2p"'),
    reason: z.string().trim().min(1).max(200).optional().describe('Why, e.g. "wrong tag"'),
    force: z.boolean().optional().describe('Kubernetes: terminate, not stop'),
  }),
  output: z.object({
    workflow: z.string(),
    phase: WorkflowPhase,
    settled: z.boolean().describe('false: still stopping'),
    message: z.string(),
  }),
  rest: { method: 'POST', path: '/api/v1/workflows/{name}/cancel', conflict: 'the workflow has settled already' },
  access: 'authenticated',
  kind: 'write',
  toolset: 'deploy',
  annotations: { destructiveHint: true, idempotentHint: false, openWorldHint: true },
  handler: async ({ name, reason, force }, ctx) => {
    const { platform, identity } = ctx;
    const audit = await controllableAudit(ctx, name);
    const run = await platform.workflows.cancel(name, { userId: identity.userId, ...(reason && { reason }), ...(force && { force }) });
    const team = audit.parameters.team_name;
    const tenant = team ? await platform.backend.getTenantRef(team) : undefined;
    let warning = '';
    // The feed of the tenant the workflow belongs to (a create-tenant stopped before its tenant existed has none).
    if (tenant && (audit.tenantUid === undefined || audit.tenantUid === tenant.uid)) {
      // The workflow is stopped: a feed that cannot be written must not read as a refused call.
      await platform.governance
        .record(tenant, {
          type: 'workflow.cancelled',
          userId: identity.userId,
          timestamp: new Date().toISOString(),
          data: { workflowName: name, operation: audit.operation, ...(reason && { reason }) },
        })
        .catch(() => (warning = ' Warning: the cancellation could not be added to the tenant\'s event feed.'));
    }
    // Argo's Terminate runs no exit handler: deploy-service's undo (abort the release, revert its commit) is skipped.
    if (force) {
      const app = audit.parameters.component_name;
      const check = team && app ? `; check it with ${ctx.door.name({ tool: 'platform_get_status', arguments: { team, app } })}` : '';
      warning += ` Warning: force terminates the workflow without its exit handler, so on Kubernetes nothing it already changed is undone and the service may be left half-rolled${check}.`;
    }
    const settled = run.phase !== 'submitted';
    const message = settled
      ? `Workflow ${name} ${run.message}.${warning}`
      : `Workflow ${name} is stopping (${cancelledMessage({ userId: identity.userId, reason })}); follow it with ${ctx.door.name({ tool: 'platform_get_workflow', arguments: { name, wait_seconds: 45 } })}.${warning}`;
    return { workflow: name, phase: viewPhase(run), settled, message };
  },
});

/** What a retry answers: the execute response of the new workflow, with the workflow it retries beside. */
export const RetryResult = ExecuteResult.extend({ retryOf: z.string().describe('The workflow retried') });

export const retryWorkflow = defineTool({
  name: 'platform_retry_workflow',
  title: 'Retry a failed workflow',
  description:
    'Run a failed workflow\'s operation again with its recorded parameters, as you, with the checks and audit of any ' +
    'execution. Secret values are not kept: an update-config cannot be retried.',
  input: z.object({
    name: WorkflowName.describe('The failed workflow, e.g. "deploy-service-x7k2p"'),
    confirm: z.string().max(200).optional().describe('The "confirm" value, when asked'),
    override_reason: z.string().trim().max(200).optional().describe('Freeze window override: why'),
  }),
  output: RetryResult,
  errorOutput: ConfirmationRequest,
  rest: {
    method: 'POST',
    path: '/api/v1/workflows/{name}/retry',
    conflict: 'the workflow did not fail (it runs, or succeeded), or its secret values (env_vars) are not kept',
  },
  access: 'authenticated',
  kind: 'write',
  toolset: 'deploy',
  annotations: { destructiveHint: true, idempotentHint: false, openWorldHint: true },
  handler: async ({ name, confirm, override_reason: overrideReason }, ctx) => {
    const { platform, identity } = ctx;
    const audit = await controllableAudit(ctx, name);
    const run = await platform.workflows.get(name);
    const status = run?.phase ?? audit.status;
    if (status === 'submitted') {
      throw new Conflict(`workflow ${name} has not settled yet; only a failed workflow can be retried (cancel it first with platform_cancel_workflow, or wait for it)`);
    }
    if (status === 'succeeded') {
      throw new Conflict(
        `workflow ${name} succeeded; only a failed workflow can be retried. To run ${audit.operation} again, execute it with the parameters you want`,
      );
    }
    if (!isOperationId(audit.operation)) throw new Conflict(`workflow ${name} ran "${audit.operation}", which this pds no longer offers`);
    const contract = OPERATIONS[audit.operation];
    const { override_reason: _override, ...recorded } = audit.parameters;
    const redacted = contract.secretParameters.filter((p) => recorded[p] !== undefined);
    if (redacted.length > 0) {
      const action = recorded.action ? ` with action=${recorded.action}` : '';
      throw new Conflict(
        `workflow ${name} cannot be retried: its ${redacted.join(', ')} values are not kept (only ${recorded[redacted[0]!]}). ` +
          `Run ${contract.id}${action} again with the values`,
      );
    }
    const tool = findOperationTool(contract.id);
    // The operation tool's own door, as invoke() runs it: its schema, its scopes, its access (retire needs a tenant admin).
    const input = parseInput(tool.input, { ...recorded, ...(confirm && { confirm }), ...(overrideReason && { override_reason: overrideReason }) }) as Record<string, unknown>;
    requireScopes(tool, identity, protectedResourceMetadataUrl(ctx.settings.baseUrl));
    await authorize(tool.access, input, identity, platform.backend);
    const { wait_seconds: _wait, ...params } = input;
    const { result } = await submitOperation(contract, params, ctx, { retryOf: name });
    return { ...result, retryOf: name };
  },
});

/** The workflow control tools, in listing order. */
export const workflowControlTools = [cancelWorkflow, retryWorkflow] as const;
