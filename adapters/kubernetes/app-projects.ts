/**
 * Tenant policies on Kubernetes (issue 20 item 1): the record store keeps the policy (`adapters/sql/governance.ts`),
 * and each change is also written to the tenant's Argo CD AppProject (named like the tenant, in `PDS_ARGOCD_NAMESPACE`;
 * `deploy/workflows/create-tenant.yaml` makes it) as `spec.syncWindows`: the freeze windows that cover every operation
 * that syncs ({@link argoSyncWindows}), kept in step with the policy and removed when it no longer has them. Sync
 * windows pds did not write (their description does not start with {@link SYNC_WINDOW_MARK}) are kept.
 *
 * The write is a JSON Patch (RFC 6902) that first tests the AppProject's `resourceVersion`, so a window someone added
 * meanwhile is never lost: on a conflict pds reads again and retries.
 */
import { CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import { Upstream } from '../../core/errors.js';
import { argoSyncWindows, SYNC_WINDOW_MARK } from '../../core/governance/sync-windows.js';
import type { TenantPolicy } from '../../core/governance/policy.js';
import type { Logger } from '../../core/logger.js';
import type { GovernanceStore, TenantRef } from '../../core/ports.js';
import { describe, LIST_PAGE_SIZE } from './informers.js';
import { ARGO_GROUP, ARGO_VERSION } from './objects.js';

/** Reads and patches before giving up on concurrent writers. */
const ATTEMPTS = 3;

interface AppProject {
  metadata?: { name?: string; resourceVersion?: string };
  spec?: { syncWindows?: Array<{ description?: string } & Record<string, unknown>> };
}

export interface SyncWindowOptions {
  kc: KubeConfig;
  argocdNamespace: string;
  log: Logger;
}

/**
 * `inner` with `setPolicy` also writing the tenant's AppProject sync windows (see the module comment).
 * @throws (from `setPolicy`) Upstream when the AppProject cannot be read or patched: the policy is saved and enforced
 *   by pds; setting it again retries the AppProject. A tenant without an AppProject is logged and skipped.
 */
export function governanceWithSyncWindows(inner: GovernanceStore, options: SyncWindowOptions): GovernanceStore {
  const write = syncWindowWriter(options);
  // Everything but setPolicy is the inner store's, including what later issues add to the port.
  const store = Object.create(inner) as GovernanceStore;
  store.setPolicy = async (tenant, policy, by) => {
    const event = await inner.setPolicy(tenant, policy, by);
    await write(tenant, policy);
    return event;
  };
  return store;
}

/**
 * Write every tenant's sync windows again, as its stored policy asks: at start-up, so an AppProject re-created (by
 * `deploy/workflows/create-tenant.yaml` or by hand) or changed while no pds ran is brought back in step, without a
 * policy change. Idempotent: an AppProject already in step is only read, never patched. The AppProjects are read in
 * one list (paged, {@link LIST_PAGE_SIZE} a page), not one GET per tenant: 1,000 tenants cost 2 requests, not 1,000.
 * A tenant whose AppProject cannot be patched is logged and skipped; the others are still written. Tenants without an
 * AppProject are logged once, together.
 * @param tenants the tenants to reconcile (the backend's `listTenants`, as refs).
 * @returns the names of the tenants whose AppProject was patched.
 * @throws (rejects) the API error when the AppProjects cannot be listed (e.g. 403 without deploy/'s `list` rule).
 */
export async function reapplySyncWindows(
  inner: Pick<GovernanceStore, 'policy'>,
  tenants: () => Promise<TenantRef[]>,
  options: SyncWindowOptions,
): Promise<string[]> {
  const write = syncWindowWriter(options);
  const wanted = await tenants();
  const projects = await listAppProjects(options);
  const patched: string[] = [];
  const missing: string[] = [];
  for (const tenant of wanted) {
    const listed = projects.get(tenant.name);
    if (!listed) {
      missing.push(tenant.name);
      continue;
    }
    try {
      if (await write(tenant, await inner.policy(tenant), listed)) patched.push(tenant.name);
    } catch (err) {
      options.log.warn({ tenant: tenant.name, err: describe(err) }, 'could not bring the tenant\'s Argo CD sync windows in step with its policy at start-up');
    }
  }
  if (missing.length) {
    options.log.warn({ count: missing.length, tenants: missing }, 'tenants without an Argo CD AppProject: their freeze windows are enforced by pds only');
  }
  if (patched.length) options.log.info({ tenants: patched }, 'Argo CD sync windows re-applied from the tenants\' policies');
  return patched;
}

/** Every AppProject of `PDS_ARGOCD_NAMESPACE`, by name, read page by page. */
async function listAppProjects(options: SyncWindowOptions): Promise<Map<string, AppProject>> {
  const custom = options.kc.makeApiClient(CustomObjectsApi);
  const byName = new Map<string, AppProject>();
  let _continue: string | undefined;
  do {
    const page = (await custom.listNamespacedCustomObject({
      group: ARGO_GROUP, version: ARGO_VERSION, namespace: options.argocdNamespace, plural: 'appprojects', limit: LIST_PAGE_SIZE, ...(_continue ? { _continue } : {}),
    })) as { metadata?: { continue?: string }; items?: AppProject[] | null };
    for (const item of page.items ?? []) if (item.metadata?.name) byName.set(item.metadata.name, item);
    _continue = page.metadata?.continue || undefined;
  } while (_continue);
  return byName;
}

/** JSON with object keys sorted at every level: equal for values that differ only in key order. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : v,
  );
}

/**
 * Writes pds's windows of one tenant (see the module comment); resolves `true` when the AppProject was patched. `listed`
 * is the AppProject as a list just read it: the first attempt compares against it instead of reading it again.
 */
function syncWindowWriter(options: SyncWindowOptions): (tenant: TenantRef, policy: TenantPolicy, listed?: AppProject) => Promise<boolean> {
  const custom = options.kc.makeApiClient(CustomObjectsApi);
  const project = (name: string) => ({ group: ARGO_GROUP, version: ARGO_VERSION, namespace: options.argocdNamespace, plural: 'appprojects', name });

  return async function writeSyncWindows(tenant: TenantRef, policy: TenantPolicy, listed?: AppProject): Promise<boolean> {
    const ours = argoSyncWindows(policy);
    for (let attempt = 1; ; attempt++) {
      let current: AppProject;
      try {
        current = attempt === 1 && listed ? listed : ((await custom.getNamespacedCustomObject(project(tenant.name))) as AppProject);
      } catch (err) {
        if ((err as { code?: number }).code === 404) {
          options.log.warn({ tenant: tenant.name }, 'tenant has no Argo CD AppProject; its freeze windows are enforced by pds only');
          return false;
        }
        throw new Upstream(`the policy of ${tenant.name} is saved, but its Argo CD AppProject could not be read (${describe(err)}); set the policy again to retry`, { cause: err });
      }
      const existing = current.spec?.syncWindows ?? [];
      const theirs = existing.filter((w) => !w.description?.startsWith(SYNC_WINDOW_MARK));
      const wanted = [...theirs, ...ours];
      // The API server answers a custom object's fields in its own key order, so compare them order-blind.
      if (canonical(wanted) === canonical(existing)) return false;
      const patch = [
        { op: 'test', path: '/metadata/resourceVersion', value: current.metadata?.resourceVersion },
        { op: 'add', path: '/spec/syncWindows', value: wanted },
      ];
      try {
        await custom.patchNamespacedCustomObject({ ...project(tenant.name), body: patch });
        return true;
      } catch (err) {
        const code = (err as { code?: number }).code;
        // A failed test (someone wrote the AppProject in between) is a 422 or a 409: read again.
        if ((code === 409 || code === 422) && attempt < ATTEMPTS) continue;
        throw new Upstream(`the policy of ${tenant.name} is saved, but its Argo CD AppProject could not be updated (${describe(err)}); set the policy again to retry`, { cause: err });
      }
    }
  };
}
