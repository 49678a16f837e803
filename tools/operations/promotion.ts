/**
 * Verified promotion at the door (issue 20 item 4): with `promotion: { from, minHealthy }` in a tenant's policy
 * (`core/governance/policy.ts`), a deploy or onboarding of `deploy-service` there is refused (403, before anything is
 * recorded) unless pds observed the image it would run — the image of its source, by digest — Synced and Healthy in
 * the service of the same name in tenant `from`, without a gap, for at least `minHealthy`. A deploy let through is
 * pinned to the digest that was verified, so what runs is what ran (`image_digest` beside its parameters).
 *
 * Observations come from the record store (`Platform.images`): the sandbox's simulated GitOps status, or the Argo CD
 * Application informer on Kubernetes. Time is the platform's clock (`Platform.now`), so tests move it.
 */
import { Forbidden } from '../../core/errors.js';
import { durationMs, formatDuration } from '../../core/governance/policy.js';
import type { AnyOperationContract, OperationParams } from '../../core/operations/index.js';
import type { DeployServiceParams } from '../../core/operations/service-operations.js';
import type { HealthyInterval } from '../../core/ports.js';
import type { ToolContext } from '../define.js';

/** A deploy pinned to one digest, and where that digest was verified or taken from. */
export interface PromotionPin {
  /** `sha256:<64 hex>`: the digest the deploy must run. */
  digest: string;
  /** `<team>/<app>` it ran in (the promotion's source). */
  from: string;
}

/** ISO 8601 UTC to the second, for messages. */
const utc = (at: Date) => at.toISOString().replace(/\.\d{3}Z$/, 'Z');

/**
 * Check the promotion rule of the deploy's tenant.
 * @param pin the digest a promotion (`platform_promote_image`) asks for: the rule must have verified that digest.
 * @returns the pin the deploy runs with: the verified digest, or `pin` when the tenant has no promotion rule;
 *   `undefined` for anything not a deploy or onboarding, or without rule and pin.
 * @throws Forbidden naming the image, the source service and what is missing: how long it ran healthy there of the
 *   time required, or that it never ran there; nothing was recorded.
 */
export async function checkPromotion(
  contract: AnyOperationContract,
  parameters: OperationParams,
  ctx: ToolContext,
  pin?: PromotionPin,
): Promise<PromotionPin | undefined> {
  if (contract.id !== 'deploy-service') return undefined;
  const p = parameters as DeployServiceParams;
  if (p.action === 'update-config') return undefined;
  const { platform } = ctx;
  const tenant = await platform.backend.getTenantRef(p.team_name);
  const rule = tenant && (await platform.governance.policy(tenant)).promotion;
  if (!rule) return pin;
  const app = p.component_name;
  const where = `${rule.from}/${app}`;
  const image = await platform.sourceImage(p.team_name, app, { repo: p.dockerfile_repo, tag: p.git_tag, dockerfilePath: p.dockerfile_path });
  const required = durationMs(rule.minHealthy)!;
  const needs =
    `${p.action} of ${p.team_name}/${app} at ${p.git_tag} needs verified promotion (the policy of tenant ${p.team_name}): ` +
    `image ${image}${pin ? ` (${pin.digest})` : ''} must first run Synced and Healthy in ${where} for ${rule.minHealthy} without a gap`;
  const source = await platform.backend.getTenantRef(rule.from);
  if (!source) throw new Forbidden(`${needs}, but tenant ${rule.from} does not exist; nothing was changed`);
  const now = platform.now();
  const intervals = (await platform.images.intervals(source, app, image)).filter((i) => !pin || i.digest === pin.digest);
  const lasted = (i: HealthyInterval) => (i.until ? Date.parse(i.until) : now.getTime()) - Date.parse(i.since);
  const best = intervals.reduce<HealthyInterval | undefined>((a, b) => (!a || lasted(b) > lasted(a) ? b : a), undefined);
  if (best && lasted(best) >= required) return { digest: best.digest, from: pin?.from ?? where };
  const deployThere = ctx.door.name({
    tool: 'platform_deploy_service',
    arguments: { action: 'deploy', team_name: rule.from, component_name: app, dockerfile_repo: p.dockerfile_repo, git_tag: p.git_tag },
  });
  if (!best) {
    throw new Forbidden(`${needs}; it never ran there. Deploy it there first (${deployThere}) and try again once it has run healthy for ${rule.minHealthy}; nothing was changed`);
  }
  const open = intervals.find((i) => !i.until);
  const ran = `it ran healthy in ${where} for ${formatDuration(lasted(best))} of the ${rule.minHealthy} required (${best.digest})`;
  const next = open
    ? `it is running there now: try again after ${utc(new Date(Date.parse(open.since) + required))}`
    : `it is not running there now: deploy it there again (${deployThere}) and wait ${rule.minHealthy}`;
  throw new Forbidden(`${needs}; ${ran}, and ${next}; nothing was changed`);
}
