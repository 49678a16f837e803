/**
 * The records the sandbox's steps read and change: one tenant (by name) and its services and previews, as the record
 * store's draft of them (`adapters/sql/tenant-records.ts`), keyed `tenants[team]` and `services['<team>/<name>']`. A
 * step changes the draft in memory; the engine writes what changed back in the step's transaction. The records
 * themselves live in the record store (`adapters/sql/`), nothing in a file.
 */
import type { Service, Tenant } from '../../core/model.js';
import type { ServiceRecord, TenantRecord, WorkflowRecord } from '../sql/index.js';

export type { ServiceRecord, TenantRecord, WorkflowRecord } from '../sql/index.js';

/**
 * What a step sees: the tenant of its workflow (when it exists) with every service and preview of it, plus any service
 * of another tenant whose Application name `<team>-<name>` collides with the workflow's (issue 7 item 5).
 */
export interface SandboxState {
  /** By tenant name. */
  tenants: Record<string, TenantRecord>;
  /** By `serviceKey(team, name)`. */
  services: Record<string, ServiceRecord>;
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

/** The public `docs/api.md#service` view of a record. */
export function toService(record: ServiceRecord): Service {
  const { team, name, imageTag, host, port, componentType, hasDatabase } = record;
  return { team, name, imageTag, host, port, componentType, hasDatabase };
}

/** The public `docs/api.md#tenant` view of a record. */
export function toTenant(record: TenantRecord): Tenant {
  const { name, displayName, description, contactEmail, quotas, members } = record;
  return { name, displayName, description, contactEmail, quotas: { ...quotas }, members: members.map((m) => ({ ...m })) };
}
