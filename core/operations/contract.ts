/**
 * The shape of one operation (`docs/api.md#operations`, "Operation definition", "Operation risk levels"; DESIGN.md
 * "Operations: one contract, two implementations"). An operation is declared once, here in `core/operations/`: its
 * id, the zod schema of its parameters (the door: validated once, typed thereafter), risk, confirmation rule, who may
 * run it, and the facts derived from its parameters. `tools/` turns each into an MCP tool with a REST binding; each
 * backend supplies one implementation per id.
 */
import { z } from 'zod';
import type { AuditStore, CodeHost, PlatformBackend } from '../ports.js';
import type { RiskLevel } from '../model.js';

/**
 * Who may run an operation: `member` (tenant roles `member` and `admin`), `admin` (the tenant's `admin` role) or
 * `platform-admin` (only platform admins). Platform admins may run every operation.
 */
export const OperationRole = z.enum(['member', 'admin', 'platform-admin']);
export type OperationRole = z.infer<typeof OperationRole>;

/** The tenant (and, for service operations, the service) an execution acts on. */
export interface OperationTarget {
  team: string;
  /** Absent for tenant operations (create-tenant, delete-tenant). */
  service?: string;
}

/** What {@link OperationContract.summarize} may consult. */
export interface SummaryContext {
  /** `PDS_DOMAIN`: service hosts are `<team>-<service>.<domain>`. */
  domain: string;
  backend: PlatformBackend;
}

/** A call a caller can make next: an MCP tool and its arguments. Each {@link Door} names it in its own words. */
export interface NextCall {
  /** MCP tool name, e.g. `platform_get_status`. */
  tool: string;
  /**
   * Its arguments, e.g. `{ team: 'acme', app: 'web', wait_seconds: 45 }`: each value of the JSON type its input
   * schema gives (a number for an integer field), so an agent can send the named call as written.
   */
  arguments: Record<string, string | number>;
}

/**
 * The door a caller came through, for messages that tell it what to call next (issue 11 item 10): over MCP a tool
 * and its arguments, over REST a method and path. Messages name a {@link NextCall}; the door words it.
 */
export interface Door {
  readonly kind: 'mcp' | 'rest';
  /**
   * The call in this door's words.
   * @example mcp.name({ tool: 'platform_get_status', arguments: { team: 'acme', app: 'web' } })
   *   // 'platform_get_status {"team":"acme","app":"web"}'; REST: 'GET /api/v1/status/acme/web'
   */
  name(call: NextCall): string;
}

/** Kubernetes namespaces pds itself uses: tenant names may not take them (create-tenant refuses them). */
export interface PlatformNamespaces {
  /** `PDS_WORKFLOW_NAMESPACE` (default `pds-workflows`): where Workflows run. */
  workflows: string;
  /** `PDS_ARGOCD_NAMESPACE` (default `argocd`): where Argo CD Applications live. */
  argocd: string;
}

/** What {@link OperationContract.preflight} may consult: the platform as it is now, and the caller's door. */
export interface PreflightContext {
  /** `PDS_DOMAIN`. */
  domain: string;
  backend: PlatformBackend;
  codeHost: CodeHost;
  /** The audit trail, for what earlier executions did (e.g. which tags a service ran: rollback-service). */
  audit: AuditStore;
  namespaces: PlatformNamespaces;
  /** How error messages name the call that fixes the problem. */
  door: Door;
  /** Names of the tenants the caller may see, for refusals that suggest a close one (never others' names). */
  visibleTenants(): Promise<readonly string[]>;
}

/** What a preflight that lets a call through may add: warnings the execute result's `message` carries. */
export interface PreflightOutcome {
  /** Problems that do not stop the call, each a sentence with its fix (e.g. a CI workflow without a deploy job). */
  warnings: string[];
}

/** What to call once an execution has succeeded, e.g. `platform_get_status` after a deploy. */
export interface FollowUp<P> {
  /** MCP tool name. */
  tool: string;
  /** Why, as the end of a sentence: "check its sync and health status". */
  why: string;
  /** The tool's arguments for these parameters. */
  arguments(params: P): Record<string, string>;
}

/**
 * One operation. `P` is its typed parameters: the output of `parameters` after validation (for `deploy-service` a
 * union on `action`), which is all a backend ever receives.
 */
export interface OperationContract<Id extends string = string, P = unknown> {
  /** Operation name, used in `/api/v1/operations/{name}/execute` and as the Argo WorkflowTemplate name. */
  id: Id;
  /** MCP tool name, `platform_<verb>_<noun>`. */
  tool: string;
  /** The MCP toolset the tool is listed in (`tools/toolsets.ts`): `deploy` for a service's lifecycle, `tenants`. */
  toolset: 'deploy' | 'tenants';
  /** Short title for the tool and the docs. */
  title: string;
  /** `docs/api.md#operation-definition` `displayName`. */
  displayName: string;
  /** For agents and people: what it does, when to use it, what it will not do. Who may run it is appended. */
  description: string;
  riskLevel: RiskLevel;
  /** Destructive operations answer a confirmation value first and run only when it is sent back. */
  requiresConfirm: boolean;
  /** How long its workflow usually runs, for agents deciding how to wait, e.g. `2-10 minutes (image build and rollout)`. */
  duration: string;
  /** What to call once it has succeeded; absent when nothing is left to look at (a removal). */
  followUp?: FollowUp<P>;
  /** MCP `destructiveHint`: the operation removes or replaces something a caller cannot get back by calling again. */
  destructive: boolean;
  role: OperationRole;
  /**
   * The parameters as a zod object (strict: unknown keys are refused). Each field carries `.describe()` with an
   * example; cross-field rules are refinements on the object. Its output must be `P`.
   */
  parameters: z.ZodObject;
  /** Names of parameters whose values are secrets: kept out of audit entries, workflow records and logs. */
  secretParameters: readonly string[];
  /** The tenant (and service) the execution acts on. */
  target(params: P): OperationTarget;
  /** One line saying what this execution will do, for the execute message and the confirmation question. */
  summarize(params: P, ctx: SummaryContext): string | Promise<string>;
  /**
   * Checks against the platform's current state that can fail a call at once instead of inside its workflow, run
   * after access checks and before anything is confirmed, audited or submitted: a refusal changes nothing.
   * @returns warnings for the execute result's `message` (problems that do not stop the call), or nothing.
   * @throws PlatformError — `FORBIDDEN` for what the caller may not use, `NOT_FOUND` for what does not exist,
   *   `INVALID_PARAMS` for the rest (`docs/api.md#errors`: execute statuses 400/403/404); the message names the fix in the words of
   *   `ctx.door`.
   */
  preflight?(params: P, ctx: PreflightContext): Promise<PreflightOutcome | void>;
}

/**
 * Declare an operation. An identity function that fixes the parameter type: `P` defaults to the schema's output;
 * pass it explicitly when the refinements narrow it further (e.g. a union on `action`).
 * @example
 * export const rollbackService = defineOperation({ id: 'rollback-service', parameters: z.strictObject({ … }), … });
 */
export function defineOperation<const Id extends string, S extends z.ZodObject, P = z.output<S>>(
  contract: Omit<OperationContract<Id, P>, 'parameters' | 'secretParameters' | 'target' | 'summarize' | 'preflight' | 'followUp'> & {
    parameters: S;
    secretParameters?: readonly string[];
    target(params: NoInfer<P>): OperationTarget;
    summarize(params: NoInfer<P>, ctx: SummaryContext): string | Promise<string>;
    preflight?(params: NoInfer<P>, ctx: PreflightContext): Promise<PreflightOutcome | void>;
    followUp?: FollowUp<NoInfer<P>>;
  },
): OperationContract<Id, P> {
  return { secretParameters: [], ...contract };
}

/** The parameter type of a contract. */
export type ParamsOf<C> = C extends OperationContract<string, infer P> ? P : never;
