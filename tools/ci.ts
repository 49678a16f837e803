/**
 * The door for CI callers (issue 20 item 6): a token pds exchanged for a GitHub Actions OIDC ID token
 * (`auth/oauth/token-exchange.ts`; `Identity.ci` holds the verified run) may run one thing — `deploy-service` with
 * `action=deploy`, from its own repository, of a service built from that repository, in a tenant whose policy accepts
 * CI tokens for the run's event and ref, when the repository registered to that tenant is the run's by GitHub's ids
 * (`repository_id`, `repository_owner_id`), not only by name. Everything else is 403 saying what is allowed.
 *
 * Besides, it may follow the workflows it submitted itself (`platform_get_workflow`, as the scaffolded deploy job waits
 * for its deploy). It takes the place of the role check (a CI caller is no member of any tenant); the operation's own
 * preflight still runs after it. It can never decide approvals nor give `override_reason` (`tools/governance.ts` `requirePerson`).
 */
import { Forbidden } from '../core/errors.js';
import { ciPolicyRefusal, type GitHubActionsRun } from '../core/governance/ci.js';
import { serviceRepository } from '../core/operations/preflight.js';
import type { Platform } from '../core/ports.js';
import type { AnyTool } from './define.js';

/** The one operation a CI caller may run. */
const CI_OPERATION = 'deploy-service';
/** The one read: the workflows it submitted. */
const CI_READ = 'platform_get_workflow';

/** Case-insensitive equality of two `<owner>/<repo>` names, as GitHub compares them. */
const sameRepo = (a: unknown, b: string) => typeof a === 'string' && a.toLowerCase() === b.toLowerCase();

/** What a CI caller may do, for every refusal. */
function allowed(run: GitHubActionsRun): string {
  return (
    `a GitHub Actions token of ${run.repository} may only run deploy-service with action=deploy and dockerfile_repo ` +
    `"${run.repository}", for services built from it, and follow the workflows it submitted (${CI_READ})`
  );
}

/**
 * Refuse at once a tool a CI caller may never call (before its input is even read): anything but the deploy-service
 * tool and the generic execute tool, which dispatches to it.
 * @throws Forbidden naming what the caller may do.
 */
export function refuseCiTool(tool: AnyTool, run: GitHubActionsRun): void {
  if (tool.dispatch || tool.operation?.id === CI_OPERATION || tool.name === CI_READ) return;
  throw new Forbidden(`${tool.name} is not for CI: ${allowed(run)}`);
}

/**
 * Authorize a CI caller's call of `tool` with validated `input`, in place of the role check (see the module comment).
 * @throws Forbidden for a workflow it did not submit; for another tool or action, another repository, a tenant that does not accept CI tokens (or not
 *   for this event or ref), a repository not registered there or registered with other ids, or a service not built
 *   from the repository.
 */
export async function authorizeCi(tool: AnyTool, input: unknown, caller: { userId: string; ci: GitHubActionsRun }, platform: Platform): Promise<void> {
  const run = caller.ci;
  refuseCiTool(tool, run);
  const p = input as Record<string, unknown>;
  if (tool.name === CI_READ) {
    const entry = await platform.audit.get(String(p.name));
    if (entry?.userId !== caller.userId) throw new Forbidden(`workflow ${String(p.name)} was not submitted by ${caller.userId}: ${allowed(run)}`);
    return;
  }
  if (tool.operation?.id !== CI_OPERATION) throw new Forbidden(`${tool.operation?.id ?? tool.name} is not for CI: ${allowed(run)}`);
  if (p.action !== 'deploy') throw new Forbidden(`action=${String(p.action)} is not for CI: ${allowed(run)}`);
  if (!sameRepo(p.dockerfile_repo, run.repository)) throw new Forbidden(`dockerfile_repo ${String(p.dockerfile_repo)} is not the run's repository: ${allowed(run)}`);
  if (p.move_from_repo !== undefined) throw new Forbidden(`moving a service between repositories (move_from_repo) needs a person: ${allowed(run)}`);
  const team = String(p.team_name);
  const service = String(p.component_name);
  const tenant = await platform.backend.getTenantRef(team);
  // Said alike for a missing tenant and one that refuses: a CI token learns nothing about tenants it cannot use.
  const refusal = tenant && ciPolicyRefusal((await platform.governance.policy(tenant)).ci, run, team);
  if (!tenant || refusal) throw new Forbidden(refusal || `tenant ${team} does not accept GitHub Actions OIDC tokens`);
  const registered = (await platform.codeHost.listRepositories(team)).find((r) => sameRepo(r.fullName, run.repository));
  if (!registered) throw new Forbidden(`repository ${run.repository} is not registered to tenant ${team}; a member registers it with platform_sync_repos`);
  if (registered.id !== run.repository_id || registered.ownerId !== run.repository_owner_id) {
    const recorded = registered.id ? `repository id ${registered.id}, owner id ${registered.ownerId}` : 'no ids (registered before pds recorded them; a member syncs the tenant\'s repositories again)';
    throw new Forbidden(
      `repository ${run.repository} of this run (repository id ${run.repository_id}, owner id ${run.repository_owner_id}) is not the one ` +
        `registered to tenant ${team} (${recorded}): a repository deleted and re-created under a name, or moved to another owner, is another repository`,
    );
  }
  const source = await serviceRepository(platform, team, service);
  if (!source || !sameRepo(source.repo, run.repository)) {
    throw new Forbidden(
      `service ${team}/${service} ${source ? `builds from ${source.repo}` : 'has no onboarding on record'}, not from ${run.repository}: ${allowed(run)}`,
    );
  }
}
