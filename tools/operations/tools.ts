/**
 * One MCP tool per operation (DESIGN.md "One capability, one definition"), derived from the operation's contract in
 * `core/operations/`: its parameters (plus `confirm` where a person must confirm), who may run it, its annotations, and
 * its own REST binding on `POST /api/v1/operations/{name}/execute`.
 */
import { z } from 'zod';
import { OPERATION_IDS, OPERATIONS, type AnyOperationContract, type OperationRole } from '../../core/operations/index.js';
import { defineTool, type AnyTool } from '../define.js';
import { ConfirmationRequest, ExecuteResult, executeOperation, type OperationInput } from './execute.js';

/** The REST path every operation tool is bound to, with `{name}` pinned to its operation id. */
export const EXECUTE_PATH = '/api/v1/operations/{name}/execute';

const Confirm = z
  .string()
  .max(200)
  .optional()
  .describe('The "confirm" value of the previous call\'s answer; omit it on the first call');

/** Appended to every operation's description: who may run it (SPEC.md "Authentication" 4). */
const WHO_MAY_RUN: Readonly<Record<OperationRole, string>> = {
  member: 'Who may run it: the tenant\'s members and admins, and platform admins.',
  admin: 'Who may run it: the tenant\'s admins and platform admins.',
  'platform-admin': 'Who may run it: platform admins only.',
};

/**
 * The description an operation is published with: its own words, what follows a call (the workflow to follow, how
 * long it usually takes, what to call once it succeeded), then who may run it.
 */
export function operationDescription(contract: AnyOperationContract): string {
  const then = contract.followUp ? `, then ${contract.followUp.tool} to ${contract.followUp.why}` : '';
  const follows = `Returns a workflow name at once; it usually takes ${contract.duration}: follow it with platform_get_workflow${then}.`;
  return `${contract.description} ${follows} ${WHO_MAY_RUN[contract.role]}`;
}

/** The tool of one operation. */
export function operationTool(contract: AnyOperationContract): AnyTool {
  const input = contract.requiresConfirm ? contract.parameters.safeExtend({ confirm: Confirm }) : contract.parameters;
  return defineTool({
    name: contract.tool,
    title: contract.title,
    description: operationDescription(contract),
    input,
    output: ExecuteResult,
    ...(contract.requiresConfirm && { errorOutput: ConfirmationRequest }),
    rest: { method: 'POST', path: EXECUTE_PATH, pathValues: { name: contract.id } },
    access:
      contract.role === 'platform-admin'
        ? 'admin'
        : { tenant: (i: Record<string, unknown>) => contract.target(i).team, role: contract.role },
    kind: 'write',
    toolset: contract.toolset,
    annotations: { destructiveHint: contract.destructive, idempotentHint: false, openWorldHint: true },
    operation: contract,
    handler: (i, ctx) => executeOperation(contract, i as OperationInput, ctx),
  });
}

/** Every operation's tool, in the contract's order. */
export const operationTools: readonly AnyTool[] = OPERATION_IDS.map((id) => operationTool(OPERATIONS[id]));
