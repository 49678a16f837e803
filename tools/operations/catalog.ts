/**
 * The operation catalog (`docs/api.md#operations`): list and describe the operations, and `platform_execute_operation`,
 * the one generic MCP tool for clients that prefer it to the per-operation tools. A definition is derived from the
 * operation tool's schema, so `GET /api/v1/operations` cannot drift from validation.
 */
import { z } from 'zod';
import { NotFound } from '../../core/errors.js';
import { RiskLevel } from '../../core/model.js';
import { OperationRole } from '../../core/operations/index.js';
import { workflowTemplateName } from '../../core/names.js';
import { defineTool, type AnyTool } from '../define.js';
import { deepFreeze } from '../invoke.js';
import { ConfirmationRequest, ExecuteResult } from './execute.js';
import { OperationResult, operationTools } from './tools.js';
import { WaitSeconds } from '../workflow-view.js';

/** `docs/api.md#operation-definition`, plus who may run it. */
export const OperationDefinition = z.object({
  name: z.string(),
  displayName: z.string(),
  description: z.string(),
  workflowTemplate: z.string(),
  riskLevel: RiskLevel,
  requiresConfirm: z.boolean(),
  requiredRole: OperationRole.describe(
    'Who may run it: "member" (tenant members and admins), "admin" (tenant admins) or "platform-admin"; platform admins may run every operation',
  ),
  parameters: z.array(z.object({ name: z.string(), type: z.string(), required: z.boolean(), description: z.string() })),
});
export type OperationDefinition = z.infer<typeof OperationDefinition>;

const byOperation = new Map<string, AnyTool>(operationTools.map((t) => [t.operation!.id, t]));

/**
 * The tool of operation `name`.
 * @throws NotFound `operation not found: "<name>"; registered operations: …`.
 */
export function findOperationTool(name: string): AnyTool {
  const tool = byOperation.get(name);
  if (!tool) throw new NotFound(`operation not found: "${name}"; registered operations: ${[...byOperation.keys()].join(', ')}`);
  return tool;
}

/** The published definition of one operation tool, derived from its input schema. */
export function describeOperation(tool: AnyTool): OperationDefinition {
  const contract = tool.operation!;
  const shape = tool.input.shape as Record<string, z.ZodType>;
  return {
    name: contract.id,
    displayName: contract.displayName,
    description: tool.description,
    workflowTemplate: workflowTemplateName(contract.id),
    riskLevel: contract.riskLevel,
    requiresConfirm: contract.requiresConfirm,
    requiredRole: contract.role,
    // Fields read from the query string (wait_seconds) say how to call, not what to submit: no operation parameters.
    parameters: Object.entries(shape).filter(([name]) => !tool.rest?.query?.includes(name)).map(([name, field]) => {
      const json = z.toJSONSchema(field, { io: 'input' }) as { type?: string };
      return { name, type: json.type ?? 'string', required: !field.safeParse(undefined).success, description: field.description ?? '' };
    }),
  };
}

// Frozen: the catalog never changes while pds runs, so invoke() validates it once (see deepFreeze).
const CATALOG = deepFreeze({ items: operationTools.map(describeOperation), count: operationTools.length });

const OperationName = z.string().min(1).describe('Operation name, e.g. "deploy-service"');

export const listOperations = defineTool({
  name: 'platform_list_operations',
  title: 'List operations',
  description:
    `Lists the ${operationTools.length} platform operations with their parameters (name, type, required, description), risk ` +
    'level, whether they need confirmation and who may run them. Use it to learn what to pass to an operation tool or ' +
    'platform_execute_operation. Changes nothing.',
  input: z.object({}),
  output: z.object({ items: z.array(OperationDefinition), count: z.number().int() }),
  rest: { method: 'GET', path: '/api/v1/operations' },
  access: 'authenticated',
  kind: 'read',
  toolset: 'catalog',
  annotations: { idempotentHint: true, openWorldHint: false },
  handler: async () => CATALOG,
});

export const getOperation = defineTool({
  name: 'platform_get_operation',
  title: 'Describe an operation',
  description:
    'The definition of one operation: parameters with required flags and descriptions, WorkflowTemplate, risk level, ' +
    'confirmation, who may run it. Changes nothing. Unknown names answer "operation not found" with the registered names.',
  input: z.object({ name: OperationName }),
  output: OperationDefinition,
  rest: { method: 'GET', path: '/api/v1/operations/{name}' },
  access: 'authenticated',
  kind: 'read',
  toolset: 'catalog',
  annotations: { idempotentHint: true, openWorldHint: false },
  handler: async ({ name }) => describeOperation(findOperationTool(name)),
});

export const executeOperation = defineTool({
  name: 'platform_execute_operation',
  title: 'Execute any operation by name',
  description:
    `Executes one of the ${operationTools.length} operations by name with its parameters as strings — the same as calling ` +
    'its own tool (e.g. platform_deploy_service). Use when a client prefers one generic tool. Validation, access checks, ' +
    'the write limit (20 per minute) and confirmation rules are those of the named operation. Returns a workflow name ' +
    'at once (or with wait_seconds when it settles); follow it with platform_get_workflow. MCP only: over REST each operation has its own POST ' +
    '/api/v1/operations/{name}/execute.',
  input: z.object({
    name: OperationName,
    parameters: z
      .record(z.string(), z.unknown())
      .default({})
      .describe('Operation parameters, e.g. {"action": "deploy", "team_name": "acme", "component_name": "web", "git_tag": "0.1.1", "dockerfile_repo": "acme/web"}'),
    wait_seconds: WaitSeconds,
  }),
  output: OperationResult,
  listedOutput: ExecuteResult,
  errorOutput: ConfirmationRequest,
  access: 'authenticated',
  kind: 'write',
  toolset: 'catalog',
  annotations: { destructiveHint: true, idempotentHint: false, openWorldHint: true },
  dispatch: ({ name, parameters, wait_seconds }) => ({
    tool: findOperationTool(name),
    // wait_seconds is the generic tool's own; one inside parameters is the operation's to refuse.
    input: wait_seconds ? { ...parameters, wait_seconds } : parameters,
  }),
  handler: async () => {
    throw new Error('platform_execute_operation dispatches; invoke() never calls its handler');
  },
});

/** The catalog tools. */
export const catalogTools: readonly AnyTool[] = [listOperations, getOperation, executeOperation];
