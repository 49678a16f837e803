/**
 * Checks shared by several operations' `preflight` (issue 7 items 3 and 5, issue 11 item 4): run before a workflow is
 * submitted, so a call that cannot succeed fails at once, changes nothing, and says how to fix it — naming the call
 * that fixes it in the words of the caller's door (`ctx.door`: an MCP tool and its arguments, or a REST path).
 * Statuses follow `docs/api.md#execute-rules`: 404 what does not exist, 403 what the caller may not use, 400 the rest.
 */
import { parse } from 'yaml';
import { Forbidden, InvalidParams, NotFound, PlatformError } from '../errors.js';
import { applicationName, previewName, serviceHost } from '../names.js';
import { didYouMean } from '../near.js';
import { quantityValue, quotaUse } from '../quantity.js';
import type { NextCall, PlatformNamespaces, PreflightContext } from './contract.js';

/**
 * Why `name` may not be a tenant name, or `undefined` when it may: tenants are namespaces, so the names Kubernetes,
 * Argo and pds use are taken on every backend (issue 10 "reserved tenant names").
 * @example reservedTenantName('kube-system', ns) // 'Kubernetes uses the kube-* namespaces'
 */
export function reservedTenantName(name: string, namespaces: PlatformNamespaces): string | undefined {
  if (name === 'default') return 'Kubernetes uses the namespace "default"';
  if (name.startsWith('kube-')) return 'Kubernetes uses the kube-* namespaces';
  if (name === 'argo' || name === 'argocd') return 'Argo Workflows and Argo CD use it';
  if (name.startsWith('pds-')) return 'pds keeps the pds-* namespaces for itself';
  if (name === namespaces.workflows) return 'it is the workflow namespace (PDS_WORKFLOW_NAMESPACE)';
  if (name === namespaces.argocd) return 'it is the Argo CD namespace (PDS_ARGOCD_NAMESPACE)';
  return undefined;
}

/**
 * The tenant must exist.
 * @throws NotFound `tenant not found: <team>`, with the close tenant names the caller may see first (`; did you mean
 *   "gamma"?`), then create-tenant (platform admins run it).
 */
export async function requireTenant(ctx: PreflightContext, team: string): Promise<void> {
  if (await ctx.backend.getTenant(team)) return;
  const create: NextCall = { tool: 'platform_create_tenant', arguments: { team_name: team } };
  const near = didYouMean(team, await ctx.visibleTenants());
  const otherwise = near ? ' Otherwise a platform admin creates it with' : '; a platform admin creates it with';
  throw new NotFound(`tenant not found: ${team}${near}${otherwise} ${ctx.door.name(create)}`);
}

/**
 * `team` must be free for a new tenant: not reserved, not taken.
 * @throws InvalidParams `team_name: "<team>" is reserved (…)` or `team_name: tenant <team> already exists`.
 */
export async function requireNewTenant(ctx: PreflightContext, team: string): Promise<void> {
  const reserved = reservedTenantName(team, ctx.namespaces);
  if (reserved) {
    throw new InvalidParams(
      `team_name: "${team}" is reserved (${reserved}); choose another name. Reserved on every pds: default, kube-*, argo, ` +
        `argocd, pds-*, ${ctx.namespaces.workflows}, ${ctx.namespaces.argocd}`,
    );
  }
  if (!(await ctx.backend.getTenant(team))) return;
  const show: NextCall = { tool: 'platform_get_tenant', arguments: { name: team } };
  throw new InvalidParams(`team_name: tenant ${team} already exists and create-tenant never changes one; see it with ${ctx.door.name(show)}`);
}

/**
 * The tenant and the service must exist.
 * @param instead what creates the service when it is missing (e.g. an onboarding), else the tenant's service list
 *   is named.
 * @throws NotFound `tenant not found: <team>` or `service not found: <team>/<service>`, with the close service names of
 *   the tenant first (`; did you mean "web"?`).
 */
export async function requireService(ctx: PreflightContext, team: string, service: string, instead?: NextCall): Promise<void> {
  await requireTenant(ctx, team);
  if (await ctx.backend.getService(team, service)) return;
  const near = didYouMean(service, (await ctx.backend.listServices(team)).map((s) => s.name));
  const list = ctx.door.name({ tool: 'platform_list_services', arguments: { team } });
  const fix = instead
    ? `${near ? ' Otherwise onboard' : '; onboard'} it first: ${ctx.door.name(instead)}`
    : `${near ? ' The' : '; the'} tenant's services: ${list}`;
  throw new NotFound(`service not found: ${team}/${service}${near}${fix}`);
}

/**
 * The tenant must exist and the service not yet (an onboarding creates it).
 * @param deploy what ships a new tag of the existing service, named in the refusal.
 * @throws NotFound for the tenant; InvalidParams `component_name: service <team>/<service> is already onboarded`.
 */
export async function requireNewService(ctx: PreflightContext, team: string, service: string, deploy: NextCall): Promise<void> {
  await requireTenant(ctx, team);
  if (!(await ctx.backend.getService(team, service))) return;
  throw new InvalidParams(`component_name: service ${team}/${service} is already onboarded; ship a new tag with ${ctx.door.name(deploy)}`);
}

/**
 * The preview of `service` at `imageTag` must exist (preview-delete).
 * @throws NotFound `tenant not found: …` or `no preview of <team>/<service> at <tag>`, naming the tenant's services.
 */
export async function requirePreview(ctx: PreflightContext, team: string, service: string, imageTag: string): Promise<void> {
  await requireTenant(ctx, team);
  const preview = await ctx.backend.getService(team, previewName(service, imageTag));
  if (preview?.componentType === 'preview') return;
  const list: NextCall = { tool: 'platform_list_services', arguments: { team } };
  throw new NotFound(`no preview of ${team}/${service} at ${imageTag}; previews are listed with componentType "preview" by ${ctx.door.name(list)}`);
}

/**
 * The repository must be registered to the tenant: a tenant builds only repositories its code-host app installation
 * granted to it, never another tenant's.
 * @throws NotFound `tenant not found: <team>` (from the code host) when the tenant does not exist.
 * @throws Forbidden naming `platform_grant_repo_access` and `platform_sync_repos`, which register one.
 */
export async function requireRegisteredRepository(ctx: PreflightContext, team: string, repo: string): Promise<void> {
  const registered = (await ctx.codeHost.listRepositories(team)).find((r) => r.fullName.toLowerCase() === repo.toLowerCase());
  const grant: NextCall = { tool: 'platform_grant_repo_access', arguments: { team_name: team, repo } };
  const sync: NextCall = { tool: 'platform_sync_repos', arguments: { team } };
  if (registered?.registeredBy) return;
  if (registered) {
    // Registered before the push-access rule (issue 17 item 2): nothing says anyone who may push to it asked for it.
    throw new Forbidden(
      `dockerfile_repo: repository "${repo}" was registered to tenant "${team}" before registrations needed push access, ` +
        `so it cannot be built until someone who can push to it on the code host runs ${ctx.door.name(sync)}.`,
    );
  }
  throw new Forbidden(
    `dockerfile_repo: repository "${repo}" is not registered to tenant "${team}", so it cannot be built here. ` +
      `Register it: ${ctx.door.name(grant)}, install the app at the URL it returns, then ${ctx.door.name(sync)}.`,
  );
}

/**
 * `<team>-<service>` names the service's Argo CD Application and host (`docs/api.md#status` fixes the form), so two services whose
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

/** Where the CI deploy job lives (`docs/api.md#what-the-service-does`: onboarding requires three artifacts). */
export const CI_WORKFLOW_PATH = '.github/workflows/ci.yml';
/** Build file names accepted at the repository root when no `dockerfile_path` is given. */
const ROOT_BUILD_FILES = ['Dockerfile', 'Containerfile'];

/**
 * The onboarding artifacts (`docs/api.md#what-the-service-does`), when the code host can read the repository (its default branch): a build file at
 * the root or at `dockerfile_path` (refused without it), and a CI workflow with a job named `deploy` (a warning
 * without it: onboarding works, but pushes to main will not deploy). A code host that cannot read trees (the
 * sandbox's answers NotFound) is not a reason to refuse; one that fails is reported as a warning.
 * @returns the warnings, each with its fix.
 * @throws InvalidParams `dockerfile_repo: <repo> has no build file …`, naming the scaffolding tool and `dockerfile_path`.
 */
export async function checkOnboardingArtifacts(
  ctx: PreflightContext,
  target: { team: string; repo: string; dockerfilePath?: string },
): Promise<string[]> {
  let tree: { paths: string[]; files: Record<string, string> };
  try {
    tree = await ctx.codeHost.readTree(target.repo, { read: [CI_WORKFLOW_PATH] });
  } catch (err) {
    if (err instanceof NotFound) return [];
    if (err instanceof PlatformError) return [`could not check ${target.repo} for its build file and CI deploy job (${err.message})`];
    throw err;
  }
  const scaffold: NextCall = { tool: 'platform_scaffold_repository', arguments: { team_name: target.team, dockerfile_repo: target.repo } };
  const wanted = target.dockerfilePath ? [target.dockerfilePath] : ROOT_BUILD_FILES;
  if (!wanted.some((file) => tree.paths.includes(file))) {
    const where = target.dockerfilePath ? `at dockerfile_path "${target.dockerfilePath}"` : 'at its root (Dockerfile)';
    throw new InvalidParams(
      `dockerfile_repo: ${target.repo} has no build file ${where} on its default branch, so the image cannot be built. ` +
        `Add one (${ctx.door.name(scaffold)} renders it)${target.dockerfilePath ? '' : ', or pass dockerfile_path if it lives elsewhere'}.`,
    );
  }
  const ci = tree.files[CI_WORKFLOW_PATH];
  if (ci !== undefined && hasDeployJob(ci)) return [];
  const problem = ci === undefined ? `${target.repo} has no ${CI_WORKFLOW_PATH}` : `${CI_WORKFLOW_PATH} of ${target.repo} has no job named "deploy"`;
  return [`${problem}, so pushes to main will not deploy; ${ctx.door.name(scaffold)} renders the workflow with its deploy job.`];
}

/** Whether a GitHub Actions workflow's text declares a job named `deploy` (unreadable YAML counts as no). */
function hasDeployJob(text: string): boolean {
  try {
    const workflow = parse(text) as { jobs?: unknown } | null;
    return typeof workflow?.jobs === 'object' && workflow.jobs !== null && Object.hasOwn(workflow.jobs, 'deploy');
  } catch {
    return false;
  }
}

/**
 * What one more service or preview requests from its tenant's quota: the container requests of the deploy template
 * (`deploy/workflows/pds-steps.yaml`: cpu 100m, memory 128Mi) and one pod.
 */
export const SERVICE_REQUESTS = { cpu: '100m', memory: '128Mi', pods: '1' } as const;

/**
 * The tenant's quota must have room for one more service or preview ({@link SERVICE_REQUESTS}) beside what its
 * services use now (`PlatformBackend.resources`). Dimensions a backend does not state as quantities are not checked;
 * a backend that cannot report usage is not a reason to refuse (a warning says the check was skipped).
 * Refused with 403, as Kubernetes refuses a pod that would exceed its namespace's ResourceQuota.
 * @param what `a new service` or `a preview`, for the message.
 * @returns warnings (none when the check ran).
 * @throws Forbidden `tenant <team> has no quota headroom for …`, naming every short dimension and the calls that free
 *   room (retire a service, remove a preview, see usage).
 */
export async function requireQuotaHeadroom(ctx: PreflightContext, team: string, what: string): Promise<string[]> {
  let usage: Awaited<ReturnType<PreflightContext['backend']['resources']>>;
  try {
    usage = await ctx.backend.resources(team);
  } catch (err) {
    if (err instanceof PlatformError && !(err instanceof NotFound)) return [`could not check the quota of tenant ${team} (${err.message})`];
    throw err;
  }
  const short = quotaUse(usage.allocated, usage.used).filter((q) => q.used + quantityValue(SERVICE_REQUESTS[q.resource])! > q.allocated * (1 + 1e-9));
  if (!short.length) return [];
  const detail = short
    .map((q) => `${q.resource} ${usage.used[q.resource]} of ${usage.allocated[q.resource]} used, ${what} needs ${SERVICE_REQUESTS[q.resource]} more`)
    .join('; ');
  const see: NextCall = { tool: 'platform_get_resources', arguments: { tenant: team } };
  const services: NextCall = { tool: 'platform_list_services', arguments: { team } };
  throw new Forbidden(
    `tenant ${team} has no quota headroom for ${what}: ${detail}. Free room by retiring a service or removing a preview ` +
      `(the tenant's services and previews: ${ctx.door.name(services)}; usage: ${ctx.door.name(see)}), or ask a platform admin ` +
      'to raise the tenant\'s quotas.',
  );
}

/** Case-insensitive equality of two `<owner>/<repo>` names, as GitHub compares them. */
const sameRepo = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

/**
 * The repository a service builds from (issue 17 item 2): the `dockerfile_repo` of its newest onboarding, or of a
 * deploy that moved it there (`move_from_repo`), that did not fail — by the audit trail of the tenant's current
 * identity, among its newest {@link DEPLOY_HISTORY_LIMIT} executions.
 * @returns the repository and the workflow that set it, or `undefined` when the trail says nothing (a service older
 *   than the trail's reach).
 */
export async function serviceRepository(ctx: Pick<PreflightContext, 'backend' | 'audit'>, team: string, service: string): Promise<{ repo: string; workflow: string } | undefined> {
  const ref = await ctx.backend.getTenantRef(team);
  const entries = await ctx.audit.query({ visible: 'all', tenant: team, service, limit: DEPLOY_HISTORY_LIMIT });
  for (const e of entries) {
    if (e.status === 'failed' || e.operation !== 'deploy-service' || (ref && e.tenantUid !== undefined && e.tenantUid !== ref.uid)) continue;
    const sets = e.parameters.action === 'onboard' || (e.parameters.action === 'deploy' && e.parameters.move_from_repo !== undefined);
    if (sets && e.parameters.dockerfile_repo) return { repo: e.parameters.dockerfile_repo, workflow: e.workflowName };
  }
  return undefined;
}

/**
 * A deploy builds from the repository the service was onboarded from (or last moved to): a registered repository of
 * the tenant is not enough, or any member could redeploy a service from another repository of the tenant. Moving is
 * explicit: `move_from_repo` names the repository left, and the audit entry records it.
 * @throws InvalidParams naming both repositories and the `move_from_repo` that moves the service, when `repo` is not
 *   the service's; or when `moveFrom` is not the service's repository, or is `repo` itself.
 */
export async function requireServiceRepository(
  ctx: PreflightContext,
  target: { team: string; service: string; repo: string; tag: string; moveFrom?: string },
): Promise<void> {
  const current = await serviceRepository(ctx, target.team, target.service);
  const { team, service, repo, moveFrom } = target;
  if (moveFrom !== undefined) {
    if (sameRepo(moveFrom, repo)) throw new InvalidParams(`move_from_repo: it is dockerfile_repo (${repo}) itself; leave move_from_repo out to deploy from it`);
    if (current && !sameRepo(current.repo, moveFrom)) {
      throw new InvalidParams(
        `move_from_repo: service ${team}/${service} builds from ${current.repo} (set by workflow ${current.workflow}), not from ${moveFrom}; ` +
          `name the repository it leaves: move_from_repo "${current.repo}"`,
      );
    }
    return;
  }
  if (!current || sameRepo(current.repo, repo)) return;
  const move: NextCall = {
    tool: 'platform_deploy_service',
    arguments: { action: 'deploy', team_name: team, component_name: service, dockerfile_repo: repo, git_tag: target.tag, move_from_repo: current.repo },
  };
  throw new InvalidParams(
    `dockerfile_repo: service ${team}/${service} builds from ${current.repo} (set by workflow ${current.workflow}), not from ${repo}; ` +
      `a service is deployed only from its own repository. To move it to ${repo} on purpose (recorded in the audit), ` +
      `deploy with move_from_repo: ${ctx.door.name(move)}`,
  );
}

/** How far back {@link requireDeployedTag} looks: the service's newest executions. */
export const DEPLOY_HISTORY_LIMIT = 500;

/**
 * `tag` must have run on the service before (rollback-service): its current tag, or the tag of a deploy, onboarding
 * or rollback of this service that succeeded — by the audit trail of the tenant's current identity (a deleted tenant
 * of the same name ran other things), among its newest {@link DEPLOY_HISTORY_LIMIT} executions.
 * @throws NotFound for the tenant or service (as {@link requireService}).
 * @throws InvalidParams `target_tag: <tag> was never deployed to <team>/<service>`, listing the tags that were (newest
 *   first) and naming the workflow history.
 */
export async function requireDeployedTag(ctx: PreflightContext, team: string, service: string, tag: string): Promise<void> {
  await requireService(ctx, team, service);
  const current = (await ctx.backend.getService(team, service))?.imageTag;
  if (current === tag) return;
  const ref = await ctx.backend.getTenantRef(team);
  const entries = await ctx.audit.query({ visible: 'all', tenant: team, service, limit: DEPLOY_HISTORY_LIMIT });
  const deployed: string[] = current ? [current] : [];
  // Newest first: entries older than the one that set the service's repository ran images of another repository.
  const source = await serviceRepository(ctx, team, service);
  let before = false;
  for (const e of entries) {
    if (e.status !== 'succeeded' || (ref && e.tenantUid !== undefined && e.tenantUid !== ref.uid)) continue;
    const ran = e.operation === 'rollback-service' ? e.parameters.target_tag
      : e.operation === 'deploy-service' && e.parameters.action !== 'update-config' ? e.parameters.git_tag : undefined;
    const from = e.operation === 'deploy-service' ? e.parameters.dockerfile_repo : undefined;
    if (before && ran === tag && source) {
      throw new InvalidParams(
        `target_tag: ${tag} of ${team}/${service} was built from ${from ?? 'an earlier repository'}, but the service builds from ` +
          `${source.repo} since workflow ${source.workflow}; roll back only to a tag built from ${source.repo}` +
          (deployed.length ? `: ${deployed.join(', ')}` : ''),
      );
    }
    if (!before && ran === tag) return;
    if (!before && ran && !deployed.includes(ran)) deployed.push(ran);
    if (source && e.workflowName === source.workflow) before = true;
  }
  const history: NextCall = { tool: 'platform_list_workflows', arguments: { team, service } };
  throw new InvalidParams(
    `target_tag: ${tag} was never deployed to ${team}/${service}; ` +
      (deployed.length ? `tags it ran, newest first: ${deployed.join(', ')}` : 'no tag has been deployed to it yet') +
      `. Its history: ${ctx.door.name(history)}`,
  );
}
