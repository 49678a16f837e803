/**
 * One tenant's records as a draft that a workflow step changes in memory, and the write-back of what changed — the
 * bridge that lets the sandbox's steps (which change `state.tenants[team]` and `state.services['<team>/<name>']` on a
 * draft) run against the record store unchanged: inside the step's transaction, load the draft of the workflow's
 * tenant, run the step on it, save the draft. A step only ever touches its own tenant, so the draft holds that tenant
 * and every service and preview of it, keyed as the sandbox's state keys them.
 */
import { isDeepStrictEqual } from 'node:util';
import type { Records } from './index.js';
import type { NewTenant, ServiceRecord, TenantRecord } from './records.js';

/** The records of one tenant name, keyed like the sandbox's state. A tenant a step creates has no uid yet. */
export interface TenantDraft {
  /** By tenant name: the tenant, when it exists. */
  tenants: Record<string, TenantRecord | NewTenant>;
  /** By `<team>/<name>`: its services and previews. */
  services: Record<string, ServiceRecord>;
}

/** `<team>/<name>`, the key of a service in a draft (as in the sandbox's state). */
export function draftKey(team: string, name: string): string {
  return `${team}/${name}`;
}

/**
 * The tenant named `team` and its services, as a draft whose objects the caller may change freely (a deep copy lives
 * in the returned `before`, for {@link saveTenantDraft}).
 */
export async function loadTenantDraft(tx: Records, team: string): Promise<{ draft: TenantDraft; before: TenantDraft }> {
  const draft: TenantDraft = { tenants: Object.create(null), services: Object.create(null) };
  const tenant = await tx.tenants.get(team);
  if (tenant) {
    draft.tenants[team] = tenant;
    for (const service of await tx.services.list(team)) draft.services[draftKey(team, service.name)] = service;
  }
  return { draft, before: structuredClone(draft) };
}

/**
 * Write what changed between `before` and `draft`: a tenant created (a new uid), updated or deleted (with its
 * services, registrations and installations); services put or deleted. Unchanged records are not written.
 * @returns the tenant as stored afterwards (with its uid), or `undefined` when it does not exist.
 */
export async function saveTenantDraft(tx: Records, team: string, before: TenantDraft, draft: TenantDraft): Promise<TenantRecord | undefined> {
  // Own properties only: `before` is a structured clone (an ordinary object), where `constructor` would be inherited.
  const old = (Object.hasOwn(before.tenants, team) ? before.tenants[team] : undefined) as TenantRecord | undefined;
  const now = Object.hasOwn(draft.tenants, team) ? draft.tenants[team] : undefined;
  let stored: TenantRecord | undefined = old;
  if (old && !now) {
    await tx.tenants.delete(old.uid); // its members and services go with it
    await tx.repositories.deleteTenant(old.uid);
    return undefined;
  }
  if (!old && now) stored = await tx.tenants.create(now);
  else if (old && now && !isDeepStrictEqual(now, old)) {
    stored = { ...now, uid: old.uid };
    await tx.tenants.update(stored);
  }
  for (const [key, service] of Object.entries(before.services)) {
    if (!Object.hasOwn(draft.services, key)) await tx.services.delete(service.team, service.name);
  }
  for (const [key, service] of Object.entries(draft.services)) {
    if (!isDeepStrictEqual(service, Object.hasOwn(before.services, key) ? before.services[key] : undefined)) await tx.services.put(service);
  }
  return stored;
}
