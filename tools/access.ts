/**
 * The access policy (`docs/api.md#authentication` 4; DESIGN.md "Identity and limits"): platform admins may do anything;
 * otherwise a tenant's members may read it (any role), deploy and operate in it (roles `member` and `admin`), and
 * destroy in it — retire a service, delete the tenant — only with role `admin`.
 */
import { Forbidden } from '../core/errors.js';
import { didYouMean } from '../core/near.js';
import type { MemberRole, Tenant } from '../core/model.js';
import type { PlatformBackend } from '../core/ports.js';
import type { Identity } from '../auth/identity.js';
import type { Access } from './define.js';

/**
 * The 403 for a caller who is not a platform admin: the SPEC's text first (clients match on it), then how one becomes
 * an admin, since the caller cannot find that out from the API.
 */
export function adminRequired(userId: string): string {
  return (
    `admin access required: only platform admins may do this. An operator makes you one by adding your user id ` +
    `(${JSON.stringify(userId)}) to PDS_ADMINS, or a group of yours to PDS_ADMIN_GROUPS, and restarting pds; on your ` +
    'own machine, `pds dev` runs the sandbox with you as platform admin'
  );
}

/** The caller's role in a tenant, or `undefined` when not a member. */
export function roleIn(tenant: Tenant | undefined, identity: Identity): MemberRole | undefined {
  return tenant?.members.find((m) => m.userId === identity.userId)?.role;
}

const RANK: Readonly<Record<MemberRole, number>> = { viewer: 1, member: 2, admin: 3 };

/** True when `role` satisfies `need` (`viewer` < `member` < `admin`). */
export function roleAllows(role: MemberRole | undefined, need: MemberRole): boolean {
  return role !== undefined && RANK[role] >= RANK[need];
}

/** What each role may do, for refusals that say why. */
const MAY: Readonly<Record<MemberRole, string>> = {
  viewer: 'may read but not change it',
  member: 'may deploy and operate but not retire services or delete the tenant (a tenant admin may)',
  admin: 'may do everything in it',
};

/**
 * Check that the caller may act on tenant `team` with at least role `need`.
 * @throws Forbidden `access denied to this tenant: <team>` (`docs/api.md#errors`, naming the tenant), with the close
 *   names of the tenants the caller belongs to (`; did you mean "gamma"?`); a non-member cannot tell a missing tenant
 *   from one they may not see, and is never offered a tenant it may not see.
 */
export async function requireTenantAccess(
  backend: PlatformBackend,
  identity: Identity,
  team: string,
  need: MemberRole,
): Promise<void> {
  if (identity.admin) return;
  const role = roleIn(await backend.getTenant(team), identity);
  if (roleAllows(role, need)) return;
  if (role) throw new Forbidden(`access denied to this tenant: role "${role}" in "${team}" ${MAY[role]}`);
  const mine = await visibleTenants(backend, identity);
  throw new Forbidden(`access denied to this tenant: ${team}${didYouMean(team, mine === 'all' ? [] : mine)}`);
}

/** The tenants whose data the caller may read; `'all'` for platform admins. */
export async function visibleTenants(backend: PlatformBackend, identity: Identity): Promise<Set<string> | 'all'> {
  if (identity.admin) return 'all';
  const tenants = await backend.listTenants();
  return new Set(tenants.filter((t) => roleIn(t, identity)).map((t) => t.name));
}

/**
 * Enforce a tool's declared {@link Access} for already-validated input.
 * @throws Forbidden `admin access required: …` ({@link adminRequired}) or `access denied to this tenant`.
 */
export async function authorize<I>(access: Access<I>, input: I, identity: Identity, backend: PlatformBackend): Promise<void> {
  if (access === 'public' || access === 'authenticated') return;
  if (access === 'admin') {
    if (!identity.admin) throw new Forbidden(adminRequired(identity.userId));
    return;
  }
  await requireTenantAccess(backend, identity, access.tenant(input), access.role);
}
