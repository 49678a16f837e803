/**
 * The sandbox's persisted state: one JSON document (`<dataDir>/state.json`) holding every tenant, service, workflow
 * (with its step progress), audit entry, repository registration, code-host "installation" and single-use claim.
 * Validated with zod when loaded, so a state file written by another version fails start-up with a clear message
 * instead of being silently overwritten.
 */
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { AuditEntry, AuditStatus, HealthStatus, Repository, Service, SyncStatus, Tenant } from '../../core/model.js';

/** Version of the document layout; bump and migrate in `store.ts` when it changes. */
export const STATE_VERSION = 1;

/**
 * A tenant as the sandbox keeps it: the SPEC "Tenant" plus when it was created and its identity (`uid`, minted at
 * create-tenant; a tenant re-created under the same name gets a new one: issue 7 item 4). Tenants in state files
 * written before the uid existed get one when loaded.
 */
export const TenantRecord = Tenant.extend({ createdAt: z.string(), uid: z.string().default(() => randomUUID()) });
export type TenantRecord = z.infer<typeof TenantRecord>;

/**
 * A service (or preview environment) as the sandbox keeps it: the SPEC "Service" plus what its Argo CD Application
 * would report and what the sandbox needs to redeploy, roll back and expire it.
 */
export const ServiceRecord = Service.extend({
  syncStatus: SyncStatus,
  healthStatus: HealthStatus,
  /** The Argo CD message shown by `status`. */
  message: z.string(),
  /** Tags that were deployed successfully, oldest first, each once: what `rollback-service` may return to. */
  deployedTags: z.array(z.string()),
  /** Environment set by `update-config` (values are never logged). */
  env: z.record(z.string(), z.string()),
  /** Liveness/readiness probe path (`health_check_path` at onboarding, default `/healthz`). */
  healthCheckPath: z.string(),
  dockerfileRepo: z.string(),
  dockerfilePath: z.string(),
  serviceTemplate: z.string(),
  database: z.object({ engine: z.string(), storage: z.string() }).optional(),
  /** Set on preview environments only: the base service, the previewed tag and when it is removed (ISO 8601 UTC). */
  preview: z.object({ base: z.string(), imageTag: z.string(), ttlHours: z.string(), expiresAt: z.string() }).optional(),
  /** The workflow currently rolling this service out; its failure marks the service `Degraded`. */
  activeWorkflow: z.string().optional(),
  /** ISO 8601 UTC; log lines older than this belong to an earlier service of the same name and are not shown. */
  createdAt: z.string(),
});
export type ServiceRecord = z.infer<typeof ServiceRecord>;

export const StepStatus = z.enum(['pending', 'succeeded', 'failed']);
export type StepStatus = z.infer<typeof StepStatus>;

/** One submitted workflow with its plan and progress; `nextStep` is the index of the step to run next. */
export const WorkflowRecord = z.object({
  name: z.string(),
  operation: z.string(),
  workflowTemplate: z.string(),
  /** As recorded: strings, secret values redacted (what the audit entry shows). */
  parameters: z.record(z.string(), z.string()),
  /**
   * The typed, validated parameters the steps run with (secret values included), while the workflow runs; removed
   * when it settles. Absent on records written before this field existed.
   */
  arguments: z.unknown().optional(),
  userId: z.string(),
  /** The tenant the workflow belongs to: the live one at submission, or (create-tenant) the one it created. */
  tenantUid: z.string().optional(),
  phase: AuditStatus,
  message: z.string(),
  startedAt: z.string(),
  finishedAt: z.string().optional(),
  steps: z.array(z.object({ name: z.string(), status: StepStatus, startedAt: z.string().optional(), finishedAt: z.string().optional() })),
  nextStep: z.number().int().min(0),
});
export type WorkflowRecord = z.infer<typeof WorkflowRecord>;

/** The sandbox's stand-in for a GitHub App installation: recorded when the grant-access URL is asked for. */
export const Installation = z.object({
  id: z.number().int(),
  team: z.string(),
  repo: z.string(),
  createdAt: z.string(),
});
export type Installation = z.infer<typeof Installation>;

/** One record of the OAuth authorization server (`OAuthStore`): its payload and expiry (epoch ms; absent = none). */
/** An audit entry as the sandbox keeps it: with the uid of the tenant it belongs to (the port's `AuditRecord`). */
export const AuditRecord = AuditEntry.extend({ tenantUid: z.string().optional() });
export type AuditRecord = z.infer<typeof AuditRecord>;

export const OAuthRecord = z.object({
  payload: z.record(z.string(), z.unknown()),
  expiresAt: z.number().optional(),
});
export type OAuthRecord = z.infer<typeof OAuthRecord>;

export const SandboxState = z.object({
  version: z.literal(STATE_VERSION),
  /** By tenant name. */
  tenants: z.record(z.string(), TenantRecord),
  /** By `serviceKey(team, name)`. */
  services: z.record(z.string(), ServiceRecord),
  /** By workflow name. */
  workflows: z.record(z.string(), WorkflowRecord),
  /** In submission order (append only). */
  audit: z.array(AuditRecord),
  /** Registered repositories by team. */
  repositories: z.record(z.string(), z.array(Repository)),
  installations: z.array(Installation),
  /** Single-use claims: `onceKey(key)` → expiry in milliseconds since the epoch. */
  once: z.record(z.string(), z.number()),
  /** OAuth authorization-server records by `<kind>:<id>` (`oauth.ts`); absent in files written before it existed. */
  oauth: z.record(z.string(), OAuthRecord).default({}),
});
export type SandboxState = z.infer<typeof SandboxState>;

/** A state with nothing in it. */
export function emptyState(): SandboxState {
  return { version: STATE_VERSION, tenants: {}, services: {}, workflows: {}, audit: [], repositories: {}, installations: [], once: {}, oauth: {} };
}

/**
 * `record[key]` when the record holds `key` itself: a name such as `constructor` or `toString` is then simply not
 * there, instead of reaching `Object.prototype` (issue 7 item 7). Use it for every look-up keyed by a caller's name.
 */
export function own<T>(record: Readonly<Record<string, T>>, key: string): T | undefined {
  return Object.hasOwn(record, key) ? record[key] : undefined;
}

/** Key of a service in `SandboxState.services`: `<team>/<name>`. */
export function serviceKey(team: string, name: string): string {
  return `${team}/${name}`;
}

/** The public SPEC "Service" view of a record. */
export function toService(record: ServiceRecord): Service {
  const { team, name, imageTag, host, port, componentType, hasDatabase } = record;
  return { team, name, imageTag, host, port, componentType, hasDatabase };
}

/** The public SPEC "Tenant" view of a record. */
export function toTenant(record: TenantRecord): Tenant {
  const { name, displayName, description, contactEmail, quotas, members } = record;
  return { name, displayName, description, contactEmail, quotas: { ...quotas }, members: members.map((m) => ({ ...m })) };
}
