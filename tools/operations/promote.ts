/**
 * `platform_promote_image` (issue 20 item 4): deploy to a service exactly the image (by digest) that another service
 * runs Synced and Healthy now — `pds deploy acme/web --from acme-staging/web`. Not a ninth operation: it is a way to
 * call `deploy-service` (action `deploy`, the source's repository, tag and build file), executed and audited as
 * `deploy-service` with `image_digest` and `promoted_from` beside its parameters (`docs/api.md#beside-the-contract`).
 * The target tenant's rules apply as to any deploy: its promotion rule must have verified that digest, its freeze
 * windows hold, its repository rule (issue 17) holds. Nothing is built: the image exists.
 */
import { z } from 'zod';
import { Conflict, InvalidParams } from '../../core/errors.js';
import { imageTagOf } from '../../core/images.js';
import { ComponentNameParam, TeamNameParam } from '../../core/operations/parameters.js';
import { OPERATIONS } from '../../core/operations/index.js';
import { requireTenantAccess } from '../access.js';
import { defineTool } from '../define.js';
import { tenantNotFound } from '../not-found.js';
import { WaitOutcome, WaitSeconds, waitForWorkflow, waitOutcome } from '../workflow-view.js';
import { ExecuteResult, settledMessage, submitOperation } from './execute.js';

/** `<team>/<service>`: a service the image is taken from. */
const ServicePath = z
  .string()
  .max(120)
  .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?\/[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'must be "<team>/<service>", e.g. "acme-staging/web"');

export const promoteImage = defineTool({
  name: 'platform_promote_image',
  title: 'Promote the image another service runs',
  description:
    'Deploys to a service the exact image (by digest) another service runs Synced and Healthy now, e.g. staging to ' +
    'production. Runs and is audited as deploy-service (action=deploy) with image_digest and promoted_from; nothing is ' +
    'rebuilt. Refused when the source is not healthy now or the target\'s promotion rule has not seen that digest ' +
    'healthy long enough.',
  input: z.object({
    team_name: TeamNameParam.describe('Tenant to deploy to, e.g. "acme"'),
    component_name: ComponentNameParam.describe('Service to deploy to, e.g. "web"'),
    from: ServicePath.describe('Service whose image to deploy, e.g. "acme-staging/web"'),
    wait_seconds: WaitSeconds,
  }),
  output: ExecuteResult.extend(WaitOutcome.partial().shape),
  listedOutput: ExecuteResult,
  rest: { method: 'POST', path: '/api/v1/promotions', query: ['wait_seconds'] },
  access: { tenant: (i) => i.team_name, role: 'member' },
  kind: 'write',
  toolset: 'deploy',
  annotations: { destructiveHint: true, idempotentHint: false, openWorldHint: true },
  handler: async ({ team_name, component_name, from, wait_seconds: wait }, ctx) => {
    const { platform, identity } = ctx;
    const [sourceTeam = '', sourceApp = ''] = from.split('/');
    if (sourceTeam === team_name && sourceApp === component_name) {
      throw new InvalidParams(`from: ${from} is the service deployed to; name the service whose image to take, e.g. "${team_name}-staging/${component_name}"`);
    }
    // Reading what runs in the source is a read of that tenant: its viewers may, others are told as for any read.
    await requireTenantAccess(platform.backend, identity, sourceTeam, 'viewer');
    const source = await platform.backend.getTenantRef(sourceTeam);
    if (!source) throw await tenantNotFound(platform.backend, identity, sourceTeam);
    const running = await platform.images.current(source, sourceApp);
    const tag = running && imageTagOf(running.image);
    if (!running || !tag) {
      throw new Conflict(`${from} is not running Synced and Healthy now, so there is no image to promote; check it with platform_get_status`);
    }
    if (!running.repo) throw new Conflict(`pds does not know which repository ${running.image} of ${from} was built from; deploy it by tag instead`);
    const contract = OPERATIONS['deploy-service'];
    const parameters = contract.parameters.parse({
      action: 'deploy',
      team_name,
      component_name,
      dockerfile_repo: running.repo,
      git_tag: tag,
      ...(running.dockerfilePath && running.dockerfilePath !== 'Dockerfile' && { dockerfile_path: running.dockerfilePath }),
    });
    const submission = await submitOperation(contract, parameters, ctx, { pin: { digest: running.digest, from } });
    const { result } = submission;
    if (!wait) return result;
    const run = await waitForWorkflow(platform, result.workflowName, wait, ctx.interaction);
    if (!run) return result;
    const outcome = await waitOutcome(platform, ctx.settings.domain, run);
    const message =
      outcome.phase === 'succeeded' || outcome.phase === 'failed'
        ? settledMessage(contract, submission, { phase: outcome.phase, failedStep: outcome.failedStep }, ctx.door)
        : result.message;
    return { ...result, ...outcome, message };
  },
});
