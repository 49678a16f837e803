/**
 * Checks shared by several operations' `preflight` (issue 7 items 3 and 5): run before a workflow is submitted, so a
 * call that cannot succeed fails at once, changes nothing, and says how to fix it.
 */
import { Forbidden, InvalidParams } from '../errors.js';
import { applicationName, serviceHost } from '../names.js';
import type { PreflightContext } from './contract.js';

/**
 * The repository must be registered to the tenant: a tenant builds only repositories its code-host app installation
 * granted to it, never another tenant's.
 * @throws NotFound `tenant not found: <team>` (from the code host) when the tenant does not exist.
 * @throws Forbidden naming `platform_grant_repo_access` and `platform_sync_repos`, which register one.
 */
export async function requireRegisteredRepository(ctx: PreflightContext, team: string, repo: string): Promise<void> {
  const registered = await ctx.codeHost.listRepositories(team);
  if (registered.some((r) => r.fullName.toLowerCase() === repo.toLowerCase())) return;
  throw new Forbidden(
    `dockerfile_repo: repository "${repo}" is not registered to tenant "${team}", so it cannot be built here. ` +
      `Register it: platform_grant_repo_access with {"team_name": "${team}", "repo": "${repo}"} (REST POST /api/v1/repos/grant-access), ` +
      `install the app at the URL it returns, then platform_sync_repos with {"team": "${team}"} (REST POST /api/v1/repos/sync).`,
  );
}

/**
 * `<team>-<service>` names the service's Argo CD Application and host (SPEC.md fixes the form), so two services whose
 * names join to the same text (`tena/pay-api` and `tena-pay/api`) cannot both exist.
 * @throws InvalidParams naming the tenant and service that hold the name.
 */
export async function requireFreeApplicationName(ctx: PreflightContext, team: string, service: string, field = 'component_name'): Promise<void> {
  const wanted = applicationName(team, service);
  const holder = (await ctx.backend.listServices()).find((s) => applicationName(s.team, s.name) === wanted && !(s.team === team && s.name === service));
  if (!holder) return;
  throw new InvalidParams(
    `${field}: "${wanted}" (Argo CD Application ${wanted}, host ${serviceHost(team, service, ctx.domain)}) is already used by ` +
      `service ${holder.team}/${holder.name}; choose another service name`,
  );
}
