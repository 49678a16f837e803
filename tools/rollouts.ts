/**
 * Promote or abort a canary or blue-green release by hand (issue 22 item 4; README "Rollouts"):
 * `POST /api/v1/rollouts/{team}/{app}/promote` skips the remaining pauses, `…/abort` puts all traffic back on the
 * stable tag. "Promote" here advances a release; moving an image between tenants is another thing. Both go to the
 * tenant's event feed.
 *
 * A promote counts as a deploy (`deploy-service`) for governance: a freeze window refuses it (the door's check, with
 * the same `override_reason`), and when the tenant's policy asks approval for deploys it is not performed at once: it
 * is recorded as an approval request of subject `promote` (`ApprovalStore.requestPromote`) and answered at once —
 * the same 200 and fields as a promote, with `approval` beside them, as a held execution is answered 200 `submitted`.
 * The process whose vote reaches `required` performs it ({@link performApprovedPromote}, called by
 * `platform_review_approval`). An abort is a safety action: always immediate, allowed in freezes, never held.
 */
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { isPlatformError } from '../core/errors.js';
import {
  Approval,
  approvalNeeded,
  approvalsCount,
  approverList,
  WorkflowApproval,
  workflowApproval,
  type ApprovalRequest,
} from '../core/governance/approvals.js';
import { ServiceName, TeamName } from '../core/model.js';
import type { Platform, TenantRef } from '../core/ports.js';
import { RolloutView } from '../core/rollouts.js';
import { defineTool, type ToolContext } from './define.js';
import { checkFreeze, type FreezeOverride } from './operations/execute.js';

const Input = z.object({
  team: TeamName.describe('Tenant name, e.g. "acme"'),
  app: ServiceName.describe('Service name within the tenant, e.g. "web"'),
});

const Answer = z.object({
  team: z.string(),
  app: z.string(),
  workflowName: z.string().describe('The deploy workflow of the release; follow it with platform_get_workflow'),
  rollout: RolloutView.describe('The release as it was when the command was handed over (or, held, when it was asked)'),
  message: z.string(),
  approval: WorkflowApproval.optional().describe(
    'Present when the tenant\'s policy holds the promote for approval: nothing changed yet; decide it with platform_review_approval',
  ),
});

/** What tools/list shows of the answer: the fields an agent acts on (the default listing's size budget, issue 11). */
const ListedAnswer = Answer.pick({ workflowName: true, message: true });

/** What a promote or abort acted on, for the tenant's feed. */
function feedData(app: string, rollout: RolloutView) {
  return { workflowName: rollout.workflowName, service: app, canaryTag: rollout.canaryTag, stableTag: rollout.stableTag };
}

/** Hand the command to the backend, record it in the tenant's feed, and say what follows. */
async function act(command: 'promote' | 'abort', team: string, app: string, ctx: ToolContext): Promise<z.output<typeof Answer>> {
  const { platform, identity } = ctx;
  const rollout = await platform.rollouts[command](team, app, identity.userId);
  const tenant = await platform.backend.getTenantRef(team);
  const timestamp = new Date().toISOString();
  // Handed over already: a feed that cannot be written must not read as a refusal (a retry would act twice).
  if (tenant) {
    await platform.governance
      .record(tenant, { type: command === 'promote' ? 'rollout.promoted' : 'rollout.aborted', userId: identity.userId, timestamp, data: feedData(app, rollout) })
      .catch(() => undefined);
  }
  const follow = ctx.door.name({ tool: 'platform_get_workflow', arguments: { name: rollout.workflowName, wait_seconds: 45 } });
  const what =
    command === 'promote'
      ? `${rollout.canaryTag} goes to 100% of traffic without the remaining pauses`
      : `all traffic goes back to ${rollout.stableTag} and the workflow fails "aborted by ${identity.userId}"`;
  return { team, app, workflowName: rollout.workflowName, rollout, message: `${command === 'promote' ? 'Promote' : 'Abort'} handed to the release of ${rollout.canaryTag}: ${what}. Follow it with ${follow}.` };
}

/**
 * A promote the tenant's policy holds for approval: record the request (or find the one already waiting for this
 * release) and say who may decide, until when, and how. Nothing changes on the release.
 * @throws NotFound / Conflict as a promote does when no release is in progress (nothing is recorded then).
 */
async function requestApproval(
  team: string,
  app: string,
  held: { tenant: TenantRef; request: ApprovalRequest; override?: FreezeOverride },
  ctx: ToolContext,
): Promise<z.output<typeof Answer>> {
  const { platform, identity } = ctx;
  const rollout = await platform.rollouts.current(team, app);
  const parameters: Record<string, string> = { team_name: team, component_name: app, canary_tag: rollout.canaryTag, stable_tag: rollout.stableTag };
  if (held.override) parameters.override_reason = held.override.reason;
  const { approval, created } = await platform.approvals.requestPromote({
    request: held.request,
    tenant: held.tenant,
    release: rollout.workflowName,
    parameters,
    requestedBy: identity.userId,
    requestedAt: new Date().toISOString(),
  });
  const approve = ctx.door.name({ tool: 'platform_review_approval', arguments: { id: approval.id, decision: 'approve' } });
  const follow = ctx.door.name({ tool: 'platform_get_workflow', arguments: { name: rollout.workflowName, wait_seconds: 45 } });
  const already = created ? '' : ` (asked by ${approval.requestedBy} at ${approval.requestedAt} already; ${approval.approvedBy.length} approved so far)`;
  const notice = `it needs ${approvalsCount(approval.required)} from ${approverList(approval.approvers)} and waits until ${approval.expiresAt}`;
  return {
    team,
    app,
    workflowName: rollout.workflowName,
    rollout,
    approval: workflowApproval(approval),
    message:
      `Nothing was promoted yet: a promote counts as a deploy-service, and ${notice}${already}. ` +
      `An approver other than you decides with ${approve} (people only, not agents); once approved, ${rollout.canaryTag} goes to ` +
      `100% of traffic without the remaining pauses. A rejection or the expiry leaves the release on its own pauses. ` +
      `Follow the release with ${follow}.`,
  };
}

/**
 * Perform a promote whose approval just reached `required` (by this process's vote, so exactly once), on the release
 * it was asked for; record `rollout.promoted` (who asked, who approved) and what it did as the approval's `outcome`.
 * A release that ended (promoted, aborted, finished, or followed by another) before the approval makes it a no-op
 * whose reason is the outcome: the decision stands, nothing is thrown.
 * @returns the approval with its outcome.
 */
export async function performApprovedPromote(approval: Approval, platform: Platform): Promise<Approval> {
  const team = approval.team;
  const app = approval.parameters.component_name ?? '';
  let outcome: string;
  let rollout: RolloutView | undefined;
  try {
    rollout = await platform.rollouts.promote(team, app, approval.requestedBy, approval.workflowName);
    outcome = `promoted: ${rollout.canaryTag} goes to 100% of traffic without the remaining pauses`;
  } catch (err) {
    if (isPlatformError(err) && (err.code === 'CONFLICT' || err.code === 'NOT_FOUND')) outcome = `not promoted: ${err.message}`;
    else outcome = `not promoted: the promote could not be handed over (${isPlatformError(err) ? err.message : 'unexpected error'}); ask for it again`;
  }
  // Handed over already: a feed that cannot be written must not read as a failed promote.
  const tenant = rollout && (await platform.backend.getTenantRef(team).catch(() => undefined));
  if (rollout && tenant) {
    await platform.governance
      .record(tenant, {
        type: 'rollout.promoted',
        userId: approval.requestedBy,
        timestamp: new Date().toISOString(),
        data: { ...feedData(app, rollout), approvalId: approval.id, approvedBy: [...approval.approvedBy] },
      })
      .catch(() => undefined);
  }
  // The decision is recorded already; an outcome that cannot be written must not read as a refused decision.
  await platform.approvals.promoteOutcome(approval.id, outcome).catch(() => undefined);
  return { ...approval, outcome };
}

export const promoteRollout = defineTool({
  name: 'platform_promote_rollout',
  title: 'Promote a rollout',
  description:
    'Skips the remaining pauses of the canary or blue-green release in progress: it takes all traffic now. Counts as a ' +
    'deploy for freeze windows and approvals (held: answered with `approval`, done once approved). Refused when no ' +
    'release is in progress. Does not move images between tenants.',
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
    const tenant = await ctx.platform.backend.getTenantRef(team);
    const request = tenant && approvalNeeded(await ctx.platform.governance.policy(tenant), 'deploy-service', new Date(), randomUUID());
    const answer = tenant && request ? await requestApproval(team, app, { tenant, request, ...(override ? { override } : {}) }, ctx) : await act('promote', team, app, ctx);
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
