/**
 * Refusals that suggest close names (issue 19 item 5): a tenant, service or workflow that was not found, or a tenant
 * the caller may not use, is answered with the names the caller may see that are close to the one it sent
 * (`core/near.ts`), so an agent retries with `gamma` rather than creating `gamma-team`. Only names the caller may see
 * are ever offered: its tenants (every tenant for a platform admin), the services of a tenant it may read, the
 * workflows it may read.
 */
import { NotFound } from '../core/errors.js';
import { didYouMean } from '../core/near.js';
import type { Platform, PlatformBackend } from '../core/ports.js';
import type { Identity } from '../auth/identity.js';
import { visibleTenants } from './access.js';

/** Names of the tenants the caller may see: every tenant for a platform admin, else those it is a member of. */
export async function visibleTenantNames(backend: PlatformBackend, identity: Identity): Promise<string[]> {
  const visible = await visibleTenants(backend, identity);
  return visible === 'all' ? (await backend.listTenants()).map((t) => t.name) : [...visible];
}

/**
 * `tenant not found: <team>`, then the close tenant names the caller may see (`; did you mean "gamma"?`).
 * @param then what follows the suggestion, e.g. `; a platform admin creates it with …` (it comes after: an agent should
 *   first try the tenant it probably meant).
 */
export async function tenantNotFound(backend: PlatformBackend, identity: Identity, team: string, then = ''): Promise<NotFound> {
  return new NotFound(`tenant not found: ${team}${didYouMean(team, await visibleTenantNames(backend, identity))}${then}`);
}

/**
 * A not-found refusal about service `app` of tenant `team` (`docs/api.md#errors`: `service not found`, `GitOps
 * application not found`, …), its message kept as the start: when the tenant does not exist, the close tenant names the caller may
 * see; otherwise the close service names of the tenant (whose access the caller passed). Anything that is not a
 * `NotFound` is returned unchanged.
 */
export async function withNearService(err: unknown, platform: Platform, identity: Identity, team: string, app: string): Promise<unknown> {
  if (!(err instanceof NotFound)) return err;
  if (!(await platform.backend.getTenant(team))) {
    const near = didYouMean(team, await visibleTenantNames(platform.backend, identity));
    return near ? new NotFound(`${err.message}; tenant ${team} does not exist${near}`) : err;
  }
  const near = didYouMean(app, (await platform.backend.listServices(team)).map((s) => s.name));
  return near ? new NotFound(`${err.message}${near}`) : err;
}
