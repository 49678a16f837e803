/**
 * One MCP tool per operation (DESIGN.md "One capability, one definition"), derived from the operation's contract in
 * `core/operations/`: its parameters (plus `confirm` where a person must confirm), who may run it, its annotations, and
 * its own REST binding on `POST /api/v1/operations/{name}/execute`.
 */
import { z } from 'zod';
import { OPERATION_IDS, OPERATIONS, type AnyOperationContract, type OperationRole } from '../../core/operations/index.js';
import { defineTool, type AnyTool } from '../define.js';
import { WaitOutcome, WaitSeconds, waitForWorkflow, waitOutcome } from '../workflow-view.js';
import { ConfirmationRequest, ExecuteResult, settledMessage, submitOperation, type OperationInput } from './execute.js';

/**
 * An operation tool's result: the contract's execute response (`docs/api.md#operations`), and — when the call waited (`wait_seconds` > 0) — the
 * workflow's phase, whether it settled, and once settled the service host and any failed step.
 */
export const OperationResult = ExecuteResult.extend(WaitOutcome.partial().shape);

/** The REST path every operation tool is bound to, with `{name}` pinned to its operation id. */
export const EXECUTE_PATH = '/api/v1/operations/{name}/execute';

const Confirm = z
  .string()
  .max(200)
  .optional()
  .describe('The "confirm" value of the previous call\'s answer; omit it on the first call');

/**
 * Break-glass during a freeze window (issue 20): beside the operation's parameters (`docs/api.md#beside-the-contract`),
 * never one of them.
 */
const OverrideReason = z
  .string()
  .trim()
  .max(200)
  .optional()
  .describe('Freeze window override: why, e.g. "incident 42" (tenant admins, signed in)');

/** Appended to every operation's description: who may run it (`docs/api.md#authentication` 4). */
const WHO_MAY_RUN: Readonly<Record<OperationRole, string>> = {
  member: 'Who may run it: tenant members and admins, platform admins.',
  admin: 'Who may run it: the tenant\'s admins and platform admins.',
  'platform-admin': 'Who may run it: platform admins only.',
};

/**
 * The description an operation is published with: its own words, what follows a call (the workflow to follow, how
 * long it usually takes, what to call once it succeeded), then who may run it.
 */
export function operationDescription(contract: AnyOperationContract): string {
  const then = contract.followUp ? `; then ${contract.followUp.tool} to ${contract.followUp.why}` : '';
  const follows = `Usually takes ${contract.duration}${then}.`;
  return `${contract.description} ${follows} ${WHO_MAY_RUN[contract.role]}`;
}

/** The tool of one operation. */
export function operationTool(contract: AnyOperationContract): AnyTool {
  const extended = (contract.requiresConfirm ? contract.parameters.safeExtend({ confirm: Confirm }) : contract.parameters).safeExtend({
    wait_seconds: WaitSeconds,
    override_reason: OverrideReason,
  });
  // An extension is a new schema: carry the contract's JSON Schema additions (deploy-service's per-action oneOf) over.
  const meta = contract.parameters.meta();
  const input = meta ? extended.meta(meta) : extended;
  return defineTool({
    name: contract.tool,
    title: contract.title,
    description: operationDescription(contract),
    input,
    output: OperationResult,
    listedOutput: ExecuteResult,
    ...(contract.requiresConfirm && { errorOutput: ConfirmationRequest }),
    // wait_seconds is how the caller waits, not what it submits: ?wait_seconds= on REST, never audited.
    rest: { method: 'POST', path: EXECUTE_PATH, pathValues: { name: contract.id }, query: ['wait_seconds'] },
    access:
      contract.role === 'platform-admin'
        ? 'admin'
        : { tenant: (i: Record<string, unknown>) => contract.target(i).team, role: contract.role },
    kind: 'write',
    toolset: contract.toolset,
    annotations: { destructiveHint: contract.destructive, idempotentHint: false, openWorldHint: true },
    operation: contract,
    handler: async (i, ctx) => {
      const { wait_seconds: wait, ...params } = i as OperationInput & { wait_seconds?: number };
      const submission = await submitOperation(contract, params, ctx);
      const { result } = submission;
      if (!wait) return result;
      const run = await waitForWorkflow(ctx.platform, result.workflowName, wait, ctx.interaction);
      if (!run) return result;
      const outcome = await waitOutcome(ctx.platform, ctx.settings.domain, run);
      // Settled while waiting: the message says how it ended, not "it runs in the background".
      const message =
        outcome.phase === 'succeeded' || outcome.phase === 'failed'
          ? settledMessage(contract, submission, { phase: outcome.phase, failedStep: outcome.failedStep }, ctx.door)
          : result.message;
      return { ...result, ...outcome, message };
    },
  });
}

/** Every operation's tool, in the contract's order. */
export const operationTools: readonly AnyTool[] = OPERATION_IDS.map((id) => operationTool(OPERATIONS[id]));
