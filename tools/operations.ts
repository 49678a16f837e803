/**
 * The eight operations (SPEC.md "Operations", "Operation risk levels"), each its own tool, and the catalog tools that
 * list, describe and execute them. An operation's published definition is derived from its zod schema, so
 * `GET /api/v1/operations` cannot drift from validation.
 *
 * Executing submits a workflow (WorkflowTemplate of the same name) and returns at once with `status: "submitted"`;
 * every execution is audited with the caller, parameters and risk level.
 */
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { InvalidParams, NotFound, PlatformError, Upstream } from '../core/errors.js';
import { AuditEntry, combinedNameProblem, RiskLevel, SemVerTag } from '../core/model.js';
import { createConfirmation, CONFIRM_TTL_SECONDS, redeemConfirmation } from './confirm.js';
import { deepFreeze } from './invoke.js';
import { defineTool, type AnyTool, type OperationMeta, type ToolContext, type ToolDefinition } from './define.js';
import {
  ComponentNameParam,
  EnvVarsParam,
  GitTagParam,
  HealthCheckPathParam,
  PortParam,
  QuantityParam,
  RelativePathParam,
  RepoParam,
  TeamNameParam,
  TtlHoursParam,
  UserListParam,
} from './parameters.js';

/** The execute response (SPEC.md "Operations": `POST /api/v1/operations/{name}/execute`). */
export const ExecuteResult = z.object({
  workflowName: z.string().describe('Name of the submitted workflow; follow it with platform_get_workflow'),
  operation: z.string().describe('Operation name, e.g. "deploy-service"'),
  status: z.literal('submitted'),
  message: z.string(),
});
export type ExecuteResult = z.infer<typeof ExecuteResult>;

/** SPEC.md "Operation definition". */
export const OperationDefinition = z.object({
  name: z.string(),
  displayName: z.string(),
  description: z.string(),
  workflowTemplate: z.string(),
  riskLevel: RiskLevel,
  requiresConfirm: z.boolean(),
  parameters: z.array(
    z.object({ name: z.string(), type: z.string(), required: z.boolean(), description: z.string() }),
  ),
});
export type OperationDefinition = z.infer<typeof OperationDefinition>;

const Confirm = z
  .string()
  .max(200)
  .optional()
  .describe('Confirmation value from the previous call\'s error message; omit it on the first call');

type OperationInput = z.ZodObject;

interface OperationSpec<I extends OperationInput> extends OperationMeta {
  tool: string;
  title: string;
  description: string;
  input: I;
  /** Role needed in the tenant; `admin` means platform admin (create-tenant). */
  access: 'member' | 'platform-admin';
  destructive: boolean;
  /** One line saying what this execution will do, for the execute message and the confirmation prompt. */
  summarize: (input: z.output<I>, ctx: ToolContext) => Promise<string> | string;
}

function randomSuffix(): string {
  const alphabet = 'bcdfghjklmnpqrstvwxz2456789';
  let s = '';
  for (const byte of crypto.getRandomValues(new Uint8Array(5))) s += alphabet[byte % alphabet.length];
  return s;
}

/** Operation parameters as submitted: strings only, without the confirmation value. */
function submittedParameters(input: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(input)) if (k !== 'confirm' && typeof v === 'string') out[k] = v;
  return out;
}

/**
 * Audit, then submit the workflow. The audit entry is written first, so a submission the engine refuses is recorded
 * as `failed`, never dropped.
 * @throws InvalidParams for a `requiresConfirm` operation without a valid `confirm` (the message carries a new value).
 * @throws Upstream when the workflow engine refuses the submission.
 */
async function execute<I extends OperationInput>(
  spec: OperationSpec<I>,
  input: z.output<I>,
  ctx: ToolContext,
): Promise<ExecuteResult> {
  const parameters = submittedParameters(input as Record<string, unknown>);
  const binding = { userId: ctx.identity.userId, operation: spec.name, parameters };
  const summary = await spec.summarize(input, ctx);
  if (spec.requiresConfirm) {
    const confirm = (input as { confirm?: string }).confirm;
    if (!confirm) {
      const value = createConfirmation(ctx.confirmSecret, binding);
      throw new InvalidParams(
        `${spec.name} needs confirmation: it will ${summary}. This cannot be undone. Nothing was changed. ` +
          `To proceed, repeat the call with the same parameters and "confirm": "${value}" within ${CONFIRM_TTL_SECONDS} seconds.`,
      );
    }
    await redeemConfirmation(ctx.confirmSecret, ctx.platform.once, binding, confirm);
  }
  const workflowName = `${spec.name}-${randomSuffix()}`;
  const entry: AuditEntry = {
    id: randomUUID(),
    timestamp: new Date().toISOString(),
    userId: ctx.identity.userId,
    operation: spec.name,
    parameters,
    workflowName,
    status: 'submitted',
    riskLevel: spec.riskLevel,
    message: '',
  };
  await ctx.platform.audit.append(entry);
  try {
    await ctx.platform.workflows.submit({
      name: workflowName,
      operation: spec.name,
      workflowTemplate: spec.workflowTemplate,
      parameters,
      userId: ctx.identity.userId,
    });
  } catch (err) {
    const failure = err instanceof PlatformError ? err : new Upstream('the workflow engine refused the submission', { cause: err });
    await ctx.platform.audit.settle(workflowName, 'failed', `submission failed: ${failure.message}`);
    throw failure;
  }
  return {
    workflowName,
    operation: spec.name,
    status: 'submitted',
    message:
      `Submitted workflow ${workflowName} to ${summary}. It runs in the background: follow it with ` +
      `GET /api/v1/workflows/${workflowName} (MCP: platform_get_workflow) until its status is succeeded or failed.`,
  };
}

function defineOperation<I extends OperationInput>(spec: OperationSpec<I>): ToolDefinition<I, typeof ExecuteResult> {
  return defineTool({
    name: spec.tool,
    title: spec.title,
    description: spec.description,
    input: spec.input,
    output: ExecuteResult,
    access:
      spec.access === 'platform-admin'
        ? 'admin'
        : { tenant: (i: z.output<I>) => (i as { team_name: string }).team_name, role: 'member' },
    kind: 'write',
    annotations: {
      title: spec.title,
      readOnlyHint: false,
      destructiveHint: spec.destructive,
      idempotentHint: false,
      openWorldHint: true,
    },
    operation: {
      name: spec.name,
      displayName: spec.displayName,
      workflowTemplate: spec.workflowTemplate,
      riskLevel: spec.riskLevel,
      requiresConfirm: spec.requiresConfirm,
    },
    handler: (input, ctx) => execute(spec, input, ctx),
  });
}

/** Adds a "<team>-<service> must fit a DNS label" issue to a schema that has `team_name` and `component_name`. */
function checkCombinedName(value: { team_name: string; component_name: string }, ctx: z.RefinementCtx): void {
  const problem = combinedNameProblem(value.team_name, value.component_name);
  if (problem) ctx.addIssue({ code: 'custom', message: problem, path: ['component_name'] });
}

const DEPLOY_ACTIONS = ['deploy', 'update-config', 'onboard'] as const;
/** Which optional parameters each `deploy-service` action requires and accepts. */
const DEPLOY_ACTION_RULES: Record<(typeof DEPLOY_ACTIONS)[number], { requires: string[]; accepts: string[] }> = {
  deploy: { requires: ['git_tag', 'dockerfile_repo'], accepts: ['dockerfile_path'] },
  'update-config': { requires: ['env_vars'], accepts: [] },
  onboard: {
    requires: ['git_tag', 'dockerfile_repo', 'port'],
    accepts: ['service_template', 'health_check_path', 'dockerfile_path'],
  },
};
const DEPLOY_OPTIONAL = ['git_tag', 'dockerfile_repo', 'dockerfile_path', 'env_vars', 'port', 'service_template', 'health_check_path'];

export const deployService = defineOperation({
  name: 'deploy-service',
  tool: 'platform_deploy_service',
  title: 'Deploy, onboard or reconfigure a service',
  displayName: 'Deploy Service',
  workflowTemplate: 'deploy-service',
  riskLevel: 'medium',
  requiresConfirm: false,
  access: 'member',
  destructive: false,
  description:
    'Builds the container image of a repository at a git tag and deploys it through GitOps, or changes a service\'s ' +
    'environment. action=onboard registers a new service (first tag usually "0.1.0") with its port, template and ' +
    'optional health check path; action=deploy ships a new tag of an onboarded service (what CI calls on every push to ' +
    'main); action=update-config replaces its environment variables. Returns a workflow name at once; the work happens ' +
    'in the background — poll platform_get_workflow, then platform_get_status. It will not deploy a service that was ' +
    'never onboarded (that workflow fails), and it does not create the repository\'s build file or CI job ' +
    '(see platform_scaffold_repository).',
  input: z
    .strictObject({
      action: z.enum(DEPLOY_ACTIONS).describe('"onboard" (first time), "deploy" (new tag) or "update-config" (environment)'),
      team_name: TeamNameParam,
      component_name: ComponentNameParam,
      git_tag: GitTagParam.optional().describe('Git tag to build and deploy, SemVer X.Y.Z, e.g. "0.1.1". Required for deploy and onboard'),
      dockerfile_repo: RepoParam.optional().describe('"<owner>/<repo>" holding the build file, e.g. "acme/web". Required for deploy and onboard'),
      dockerfile_path: RelativePathParam.optional(),
      env_vars: EnvVarsParam.optional().describe('KEY=VALUE entries separated by newlines, e.g. "LOG_LEVEL=info". Required for update-config'),
      port: PortParam.optional().describe('Container port as text, e.g. "8787". Required for onboard'),
      service_template: z
        .string()
        .regex(/^[a-z][a-z0-9-]{0,40}$/, 'must be a template name, e.g. "default"')
        .optional()
        .describe('Platform service template for onboard, e.g. "default" (the default)'),
      health_check_path: HealthCheckPathParam.optional().describe('Probe path for onboard when the app does not serve /healthz, e.g. "/api/health"'),
    })
    .superRefine((value, ctx) => {
      checkCombinedName(value, ctx);
      const rules = DEPLOY_ACTION_RULES[value.action];
      const given = value as Record<string, unknown>;
      for (const field of rules.requires) {
        if (given[field] === undefined) ctx.addIssue({ code: 'custom', path: [field], message: `is required for action=${value.action}` });
      }
      for (const field of DEPLOY_OPTIONAL) {
        if (given[field] !== undefined && !rules.requires.includes(field) && !rules.accepts.includes(field)) {
          const which = DEPLOY_ACTIONS.filter((a) => [...DEPLOY_ACTION_RULES[a].requires, ...DEPLOY_ACTION_RULES[a].accepts].includes(field));
          ctx.addIssue({ code: 'custom', path: [field], message: `is not used by action=${value.action}; it applies to action=${which.join(' or ')}` });
        }
      }
    }),
  summarize: (i) =>
    i.action === 'update-config'
      ? `update the environment of ${i.team_name}/${i.component_name} (${i.env_vars!.split(/\r?\n/).filter((l) => l.trim()).length} variables)`
      : `${i.action} ${i.team_name}/${i.component_name} at ${i.git_tag} from ${i.dockerfile_repo}`,
});

export const createTenant = defineOperation({
  name: 'create-tenant',
  tool: 'platform_create_tenant',
  title: 'Create a tenant',
  displayName: 'Create Tenant',
  workflowTemplate: 'create-tenant',
  riskLevel: 'medium',
  requiresConfirm: false,
  access: 'platform-admin',
  destructive: false,
  description:
    'Creates a team workspace (tenant): its namespace, ResourceQuota and member roles. Platform admins only. Users in ' +
    '"admins" get role admin (the caller when none are named), "members" role member (deploy and operate), "viewers" ' +
    'role viewer (read only). Returns a workflow name at once. Fails (in the workflow) when the tenant already exists; ' +
    'it never changes an existing tenant.',
  input: z.strictObject({
    team_name: TeamNameParam.describe('Name of the new tenant, a DNS label, e.g. "acme"'),
    display_name: z.string().min(1).max(100).optional().describe('Human-readable name, e.g. "Acme Payments"'),
    description: z.string().max(500).optional().describe('What the team does, e.g. "Payments APIs"'),
    contact_email: z.email('must be an e-mail address, e.g. "team@example.com"').optional().describe('Team contact, e.g. "acme@example.com"'),
    admins: UserListParam.optional().describe('Comma-separated user ids who become tenant admins (default: the caller), e.g. "alice,bob@example.com"'),
    members: UserListParam.optional().describe('Comma-separated user ids who may deploy and operate in the tenant (role member), e.g. "carol"'),
    viewers: UserListParam.optional().describe('Comma-separated user ids who may only read the tenant (role viewer), e.g. "dave"'),
    cpu: QuantityParam('4').optional().describe('CPU quota, a Kubernetes quantity, e.g. "4" (default "4")'),
    memory: QuantityParam('8Gi').optional().describe('Memory quota with unit suffix, e.g. "8Gi" (default "8Gi")'),
    pods: z.string().regex(/^[1-9]\d{0,4}$/, 'must be a pod count as text, e.g. "20"').optional().describe('Pod quota, e.g. "20" (default "20")'),
  }),
  summarize: (i) => `create tenant ${i.team_name}`,
});

export const provisionDatabase = defineOperation({
  name: 'provision-database',
  tool: 'platform_provision_database',
  title: 'Provision a database for a service',
  displayName: 'Provision Database',
  workflowTemplate: 'provision-database',
  riskLevel: 'medium',
  requiresConfirm: false,
  access: 'member',
  destructive: false,
  description:
    'Provisions a relational database (PostgreSQL) for one service and hands its connection to the service; ' +
    'afterwards the service shows hasDatabase=true. Returns a workflow name at once. It does not migrate data or ' +
    'resize an existing database.',
  input: z
    .strictObject({
      team_name: TeamNameParam,
      component_name: ComponentNameParam,
      engine: z.enum(['postgres']).optional().describe('Database engine; only "postgres" (the default)'),
      storage: QuantityParam('1Gi').optional().describe('Volume size, e.g. "1Gi" (default "1Gi")'),
    })
    .superRefine(checkCombinedName),
  summarize: (i) => `provision a ${i.engine ?? 'postgres'} database (${i.storage ?? '1Gi'}) for ${i.team_name}/${i.component_name}`,
});

export const retireService = defineOperation({
  name: 'retire-service',
  tool: 'platform_retire_service',
  title: 'Retire a service permanently',
  displayName: 'Retire Service',
  workflowTemplate: 'retire-service',
  riskLevel: 'high',
  requiresConfirm: true,
  access: 'member',
  destructive: true,
  description:
    'Permanently removes a service: its deployment, GitOps Application, host, database and preview environments. ' +
    'Needs confirmation: the first call changes nothing and answers with what would happen and a "confirm" value; ' +
    'repeat the call with that value (valid 5 minutes, once) to proceed. Use rollback or a deploy instead to fix a ' +
    'bad release.',
  input: z
    .strictObject({ team_name: TeamNameParam, component_name: ComponentNameParam, confirm: Confirm })
    .superRefine(checkCombinedName),
  summarize: (i, ctx) =>
    `permanently remove service ${i.team_name}/${i.component_name} (Application ${i.team_name}-${i.component_name}, ` +
    `host ${i.team_name}-${i.component_name}.${ctx.config.domain}, its database and preview environments)`,
});

export const deleteTenant = defineOperation({
  name: 'delete-tenant',
  tool: 'platform_delete_tenant',
  title: 'Delete a tenant and everything in it',
  displayName: 'Delete Tenant',
  workflowTemplate: 'delete-tenant',
  riskLevel: 'high',
  requiresConfirm: true,
  access: 'member',
  destructive: true,
  description:
    'Permanently deletes a tenant with all its services, databases and preview environments. Tenant admins or members ' +
    'and platform admins only. Needs confirmation: the first call changes nothing and answers with what would be ' +
    'deleted and a "confirm" value; repeat the call with that value (valid 5 minutes, once) to proceed.',
  input: z.strictObject({ team_name: TeamNameParam, confirm: Confirm }),
  summarize: async (i, ctx) => {
    const services = await ctx.platform.backend.listServices(i.team_name);
    const list = services.length ? `: ${services.map((s) => s.name).join(', ')}` : '';
    return `permanently delete tenant ${i.team_name} and its ${services.length} service${services.length === 1 ? '' : 's'}${list}`;
  },
});

export const rollbackService = defineOperation({
  name: 'rollback-service',
  tool: 'platform_rollback_service',
  title: 'Roll a service back to an earlier image tag',
  displayName: 'Rollback Service',
  workflowTemplate: 'rollback-service',
  riskLevel: 'medium',
  requiresConfirm: false,
  access: 'member',
  destructive: false,
  description:
    'Returns a service to an image tag it ran before, without rebuilding. Use when a release is bad; check the tags ' +
    'with platform_list_audit or platform_get_service. Returns a workflow name at once. The workflow fails if that tag ' +
    'was never deployed for the service.',
  input: z
    .strictObject({
      team_name: TeamNameParam,
      component_name: ComponentNameParam,
      target_tag: SemVerTag.describe('Image tag to return to, SemVer X.Y.Z, e.g. "0.1.0"'),
    })
    .superRefine(checkCombinedName),
  summarize: (i) => `roll ${i.team_name}/${i.component_name} back to ${i.target_tag}`,
});

export const deployPreview = defineOperation({
  name: 'preview-deploy',
  tool: 'platform_deploy_preview',
  title: 'Open a preview environment',
  displayName: 'Deploy Preview',
  workflowTemplate: 'preview-deploy',
  riskLevel: 'low',
  requiresConfirm: false,
  access: 'member',
  destructive: false,
  description:
    'Starts an ephemeral preview environment of a service at an image tag, with its own host, removed automatically ' +
    'after ttl_hours (at most 720). Use to review a build before it goes to the main environment. Returns a workflow ' +
    'name at once; the preview appears in platform_list_services with componentType "preview".',
  input: z
    .strictObject({
      team_name: TeamNameParam,
      component_name: ComponentNameParam,
      image_tag: SemVerTag.describe('Image tag to preview, SemVer X.Y.Z, e.g. "0.2.0"'),
      ttl_hours: TtlHoursParam,
    })
    .superRefine(checkCombinedName),
  summarize: (i) => `open a preview of ${i.team_name}/${i.component_name} at ${i.image_tag} for ${i.ttl_hours} h`,
});

export const deletePreview = defineOperation({
  name: 'preview-delete',
  tool: 'platform_delete_preview',
  title: 'Remove a preview environment',
  displayName: 'Delete Preview',
  workflowTemplate: 'preview-delete',
  riskLevel: 'low',
  requiresConfirm: false,
  access: 'member',
  destructive: true,
  description:
    'Removes a preview environment before its TTL ends. Touches only the preview of that image tag, never the main ' +
    'service. Returns a workflow name at once.',
  input: z
    .strictObject({
      team_name: TeamNameParam,
      component_name: ComponentNameParam,
      image_tag: SemVerTag.describe('Image tag of the preview to remove, e.g. "0.2.0"'),
    })
    .superRefine(checkCombinedName),
  summarize: (i) => `remove the preview of ${i.team_name}/${i.component_name} at ${i.image_tag}`,
});

/** The eight operations, in SPEC.md order. */
export const operationTools = [
  deployService,
  createTenant,
  provisionDatabase,
  retireService,
  deleteTenant,
  rollbackService,
  deployPreview,
  deletePreview,
] as const satisfies readonly AnyTool[];

const byOperation = new Map<string, AnyTool>(operationTools.map((t) => [t.operation!.name, t]));
const OPERATION_NAMES = [...byOperation.keys()];

function findOperation(name: string): AnyTool {
  const tool = byOperation.get(name);
  if (!tool) throw new NotFound(`operation not found: "${name}"; registered operations: ${OPERATION_NAMES.join(', ')}`);
  return tool;
}

/** The published definition of one operation tool, derived from its schema. */
export function describeOperation(tool: AnyTool): OperationDefinition {
  const meta = tool.operation!;
  const shape = tool.input.shape as Record<string, z.ZodType>;
  return {
    name: meta.name,
    displayName: meta.displayName,
    description: tool.description,
    workflowTemplate: meta.workflowTemplate,
    riskLevel: meta.riskLevel,
    requiresConfirm: meta.requiresConfirm,
    parameters: Object.entries(shape).map(([name, field]) => {
      const json = z.toJSONSchema(field, { io: 'input' }) as { type?: string };
      return {
        name,
        type: json.type ?? 'string',
        required: !field.safeParse(undefined).success,
        description: field.description ?? '',
      };
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
    'Lists the eight platform operations with their parameters (name, type, required, description), risk level and ' +
    'whether they need confirmation. Use it to learn what to pass to an operation tool or platform_execute_operation. ' +
    'Changes nothing.',
  input: z.object({}),
  output: z.object({ items: z.array(OperationDefinition), count: z.number().int() }),
  rest: { method: 'GET', path: '/api/v1/operations' },
  access: 'authenticated',
  kind: 'read',
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  handler: async () => CATALOG,
});

export const getOperation = defineTool({
  name: 'platform_get_operation',
  title: 'Describe an operation',
  description:
    'The definition of one operation: parameters with required flags and descriptions, WorkflowTemplate, risk level, ' +
    'confirmation. Changes nothing. Unknown names answer "operation not found" with the registered names.',
  input: z.object({ name: OperationName }),
  output: OperationDefinition,
  rest: { method: 'GET', path: '/api/v1/operations/{name}' },
  access: 'authenticated',
  kind: 'read',
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  handler: async ({ name }) => describeOperation(findOperation(name)),
});

export const executeOperation = defineTool({
  name: 'platform_execute_operation',
  title: 'Execute any operation by name',
  description:
    'Executes one of the eight operations by name with its parameters as strings — the same as calling its own tool ' +
    '(e.g. platform_deploy_service). Use when a client prefers one generic tool. Validation, access checks, the write ' +
    'limit (20 per minute) and confirmation rules are those of the named operation. Returns a workflow name at once.',
  input: z.object({
    name: OperationName,
    parameters: z
      .record(z.string(), z.unknown())
      .default({})
      .describe('Operation parameters as strings, e.g. {"action": "deploy", "team_name": "acme", "component_name": "web", "git_tag": "0.1.1", "dockerfile_repo": "acme/web"}'),
  }),
  output: ExecuteResult,
  rest: { method: 'POST', path: '/api/v1/operations/{name}/execute', bodyField: 'parameters' },
  access: 'authenticated',
  kind: 'write',
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  docs: { requestBody: z.union(operationTools.map((t) => t.input)) },
  dispatch: ({ name, parameters }) => ({ tool: findOperation(name), input: parameters }),
  handler: async () => {
    throw new Error('platform_execute_operation dispatches; invoke() never calls its handler');
  },
});

/** Catalog tools plus the eight operation tools. */
export const operationsTools: readonly AnyTool[] = [listOperations, getOperation, executeOperation, ...operationTools];
