/**
 * Promote or abort a canary or blue-green release by hand (issue 22 item 4; README "Rollouts"):
 * `POST /api/v1/rollouts/{team}/{app}/promote` skips the remaining pauses, `…/abort` puts all traffic back on the
 * stable tag. "Promote" here advances a release; moving an image between tenants is another thing. A promote counts as
 * a deploy for freeze windows (the door's check, with the same `override_reason`); both go to the tenant's event feed.
 */
import { z } from 'zod';
import { ServiceName, TeamName } from '../core/model.js';
import { RolloutView } from '../core/rollouts.js';
import { defineTool, type ToolContext } from './define.js';
import { checkFreeze } from './operations/execute.js';

const Input = z.object({
  team: TeamName.describe('Tenant name, e.g. "acme"'),
  app: ServiceName.describe('Service name within the tenant, e.g. "web"'),
});

const Answer = z.object({
  team: z.string(),
  app: z.string(),
  workflowName: z.string().describe('The deploy workflow of the release; follow it with platform_get_workflow'),
  rollout: RolloutView.describe('The release as it was when the command was handed over'),
  message: z.string(),
});

/** What tools/list shows of the answer: the fields an agent acts on (the default listing's size budget, issue 11). */
const ListedAnswer = Answer.pick({ workflowName: true, message: true });

/** Hand the command to the backend, record it in the tenant's feed, and say what follows. */
async function act(command: 'promote' | 'abort', team: string, app: string, ctx: ToolContext): Promise<z.output<typeof Answer>> {
  const { platform, identity } = ctx;
  const rollout = await platform.rollouts[command](team, app, identity.userId);
  const tenant = await platform.backend.getTenantRef(team);
  const timestamp = new Date().toISOString();
  const data = { workflowName: rollout.workflowName, service: app, canaryTag: rollout.canaryTag, stableTag: rollout.stableTag };
  // Handed over already: a feed that cannot be written must not read as a refusal (a retry would act twice).
  if (tenant) {
    await platform.governance
      .record(tenant, { type: command === 'promote' ? 'rollout.promoted' : 'rollout.aborted', userId: identity.userId, timestamp, data })
      .catch(() => undefined);
  }
  const follow = ctx.door.name({ tool: 'platform_get_workflow', arguments: { name: rollout.workflowName, wait_seconds: 45 } });
  const what =
    command === 'promote'
      ? `${rollout.canaryTag} goes to 100% of traffic without the remaining pauses`
      : `all traffic goes back to ${rollout.stableTag} and the workflow fails "aborted by ${identity.userId}"`;
  return { team, app, workflowName: rollout.workflowName, rollout, message: `${command === 'promote' ? 'Promote' : 'Abort'} handed to the release of ${rollout.canaryTag}: ${what}. Follow it with ${follow}.` };
}

export const promoteRollout = defineTool({
  name: 'platform_promote_rollout',
  title: 'Promote a rollout',
  description:
    'Skips the remaining pauses of the canary or blue-green release in progress: it takes all traffic now. Counts as a ' +
    'deploy for freeze windows. Refused when no release is in progress. Does not move images between tenants.',
  input: Input.extend({
    override_reason: z.string().min(3).max(500).optional().describe('Tenant admin\'s reason to promote during a freeze'),
  }),
  output: Answer,
  listedOutput: ListedAnswer,
  rest: { method: 'POST', path: '/api/v1/rollouts/{team}/{app}/promote' },
  access: { tenant: (i) => i.team, role: 'member' },
  kind: 'write',
  toolset: 'deploy',
  annotations: { destructiveHint: true, idempotentHint: true, openWorldHint: true },
  handler: async ({ team, app, override_reason: reason }, ctx) => {
    const override = await checkFreeze('deploy-service', team, reason, ctx);
    const answer = await act('promote', team, app, ctx);
    if (override) {
      await ctx.platform.governance
        .record(override.tenant, {
          type: 'freeze.overridden',
          userId: ctx.identity.userId,
          timestamp: new Date().toISOString(),
          data: { workflowName: answer.workflowName, operation: 'deploy-service', window: override.freeze.name, windowEndsAt: override.freeze.endsAt.toISOString(), reason: override.reason },
        })
        .catch(() => undefined);
    }
    return answer;
  },
});

export const abortRollout = defineTool({
  name: 'platform_abort_rollout',
  title: 'Abort a rollout',
  description:
    'Aborts the canary or blue-green release in progress: all traffic back on the stable tag, the deploy workflow fails ' +
    '"aborted by <you>". Allowed during freezes. Refused when no release is in progress (then: platform_rollback_service).',
  input: Input,
  output: Answer,
  listedOutput: ListedAnswer,
  rest: { method: 'POST', path: '/api/v1/rollouts/{team}/{app}/abort' },
  access: { tenant: (i) => i.team, role: 'member' },
  kind: 'write',
  toolset: 'deploy',
  annotations: { destructiveHint: false, idempotentHint: true, openWorldHint: true },
  handler: async ({ team, app }, ctx) => act('abort', team, app, ctx),
});

export const rolloutTools = [promoteRollout, abortRollout] as const;
