/**
 * The shape of one operation (SPEC.md "Operations", "Operation definition", "Operation risk levels"; DESIGN.md
 * "Operations: one contract, two implementations"). An operation is declared once, here in `core/operations/`: its
 * id, the zod schema of its parameters (the door: validated once, typed thereafter), risk, confirmation rule, who may
 * run it, and the facts derived from its parameters. `tools/` turns each into an MCP tool with a REST binding; each
 * backend supplies one implementation per id.
 */
import { z } from 'zod';
import type { CodeHost, PlatformBackend } from '../ports.js';
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

/** What {@link OperationContract.preflight} may consult: the platform as it is now. */
export interface PreflightContext {
  /** `PDS_DOMAIN`. */
  domain: string;
  backend: PlatformBackend;
  codeHost: CodeHost;
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
  /** SPEC.md "Operation definition" `displayName`. */
  displayName: string;
  /** For agents and people: what it does, when to use it, what it will not do. Who may run it is appended. */
  description: string;
  riskLevel: RiskLevel;
  /** Destructive operations answer a confirmation value first and run only when it is sent back. */
  requiresConfirm: boolean;
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
   * @throws PlatformError — `FORBIDDEN` for what the caller may not use, `NOT_FOUND` for what does not exist,
   *   `INVALID_PARAMS` for the rest (SPEC.md execute statuses 400/403/404); the message says how to fix it.
   */
  preflight?(params: P, ctx: PreflightContext): Promise<void>;
}

/**
 * Declare an operation. An identity function that fixes the parameter type: `P` defaults to the schema's output;
 * pass it explicitly when the refinements narrow it further (e.g. a union on `action`).
 * @example
 * export const rollbackService = defineOperation({ id: 'rollback-service', parameters: z.strictObject({ … }), … });
 */
export function defineOperation<const Id extends string, S extends z.ZodObject, P = z.output<S>>(
  contract: Omit<OperationContract<Id, P>, 'parameters' | 'secretParameters' | 'target' | 'summarize'> & {
    parameters: S;
    secretParameters?: readonly string[];
    target(params: NoInfer<P>): OperationTarget;
    summarize(params: NoInfer<P>, ctx: SummaryContext): string | Promise<string>;
    preflight?(params: NoInfer<P>, ctx: PreflightContext): Promise<void>;
  },
): OperationContract<Id, P> {
  return { secretParameters: [], ...contract };
}

/** The parameter type of a contract. */
export type ParamsOf<C> = C extends OperationContract<string, infer P> ? P : never;
