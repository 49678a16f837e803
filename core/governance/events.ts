/**
 * The tenant event feed (issue 20): what happened in a tenant that is not an execution — policy changes, freeze
 * overrides, webhook changes, promotes and aborts of rollouts by hand, approval requests and decisions, and
 * cancelled workflows (issue 22 item 5). Executions stay in the audit trail (`GET /api/v1/audit`); nothing here is
 * written there.
 */
import { z } from 'zod';
import { TenantPolicy } from './policy.js';
import { Webhook } from './webhooks.js';

/** A change of the tenant's policy, with the document before and after. */
const PolicyChanged = z.object({
  type: z.literal('policy.changed'),
  data: z.object({
    old: TenantPolicy.describe('The policy before the change ({} when none)'),
    new: TenantPolicy.describe('The policy after the change'),
  }),
});

/** An execution submitted during a freeze window by a tenant admin who gave a reason. */
const FreezeOverridden = z.object({
  type: z.literal('freeze.overridden'),
  data: z.object({
    workflowName: z.string().describe('The workflow submitted despite the window, e.g. "deploy-service-x7k2p"'),
    operation: z.string().describe('e.g. "deploy-service"'),
    window: z.string().describe('The window overridden, e.g. "weekend"'),
    windowEndsAt: z.string().describe('ISO 8601 UTC end of the window'),
    reason: z.string().describe('The override_reason given, e.g. "hotfix for incident 42"'),
  }),
});

/** What a promote or abort by hand of a canary or blue-green release acted on (issue 22). */
const RolloutActed = z.object({
  workflowName: z.string().describe('The deploy workflow of the release, e.g. "deploy-service-x7k2p"'),
  service: z.string().describe('The service, e.g. "web"'),
  canaryTag: z.string().describe('The tag being rolled out, e.g. "0.2.0"'),
  stableTag: z.string().describe('The tag it replaces, e.g. "0.1.0"'),
  approvalId: z.string().optional().describe('Promote held for approval: the approval that released it'),
  approvedBy: z.array(z.string()).optional().describe('Promote held for approval: who approved it; userId is who asked'),
});
/** A release promoted by hand: its remaining pauses skipped. */
const RolloutPromoted = z.object({ type: z.literal('rollout.promoted'), data: RolloutActed });
/** A release aborted by hand: all traffic back on the stable tag. */
const RolloutAborted = z.object({ type: z.literal('rollout.aborted'), data: RolloutActed });

/** An execution that waits for approval (issue 20 item 2); `userId` is who executed it. */
const ApprovalRequested = z.object({
  type: z.literal('approval.requested'),
  data: z.object({
    approvalId: z.string().describe('The approval\'s id (UUID)'),
    subject: z.literal('promote').optional().describe('Present for a promote of a release, which waits (workflowName: the release\'s)'),
    workflowName: z.string().describe('The workflow waiting, e.g. "deploy-service-x7k2p"'),
    operation: z.string().describe('e.g. "deploy-service"'),
    required: z.number().int().describe('How many distinct people must approve, e.g. 1'),
    approvers: z.array(z.string()).describe('Who may approve, e.g. ["alice", "group:sre"]'),
    expiresAt: z.string().describe('ISO 8601 UTC: undecided by then, it expires'),
  }),
});

/**
 * One decision on an approval: a person's approval (each one, also before `required` is reached), a rejection (its
 * reason as `comment`), or the expiry (`userId` is `system:approval-expiry`).
 */
const ApprovalDecided = z.object({
  type: z.literal('approval.decided'),
  data: z.object({
    approvalId: z.string().describe('The approval\'s id (UUID)'),
    subject: z.literal('promote').optional().describe('Present for a promote of a release (workflowName: the release\'s)'),
    workflowName: z.string().describe('e.g. "deploy-service-x7k2p"'),
    operation: z.string().describe('e.g. "deploy-service"'),
    decision: z.enum(['approved', 'rejected', 'expired']),
    comment: z.string().optional().describe('The approver\'s comment, or the reason of a rejection or expiry'),
  }),
});

/** A change of the tenant's webhooks: the hooks before and after, as members read them (never a secret). */
const WebhooksChanged = z.object({
  type: z.literal('webhooks.changed'),
  data: z.object({
    old: z.array(Webhook).describe('The hooks before the change'),
    new: z.array(Webhook).describe('The hooks after the change'),
  }),
});

/**
 * A running or awaiting workflow stopped by a tenant member (issue 22 item 5). The execution's own audit entry settles
 * `failed` ("cancelled by <user>"); the cancellation itself is this event, never an audit entry.
 */
const WorkflowCancelled = z.object({
  type: z.literal('workflow.cancelled'),
  data: z.object({
    workflowName: z.string().describe('The workflow stopped, e.g. "deploy-service-x7k2p"'),
    operation: z.string().describe('e.g. "deploy-service"'),
    reason: z.string().optional().describe('Why, as the person gave it, e.g. "wrong tag"'),
  }),
});

/** What an event says, by type. */
export const TenantEventBody = z.discriminatedUnion('type', [
  PolicyChanged,
  FreezeOverridden,
  WebhooksChanged,
  RolloutPromoted,
  RolloutAborted,
  ApprovalRequested,
  ApprovalDecided,
  WorkflowCancelled,
]);
export type TenantEventBody = z.output<typeof TenantEventBody>;

/** One event of a tenant's feed. */
export const TenantEvent = z
  .object({
    id: z.string().describe('Unique id (UUID)'),
    timestamp: z.string().describe('ISO 8601 UTC'),
    team: z.string().describe('The tenant\'s name when it happened, e.g. "acme"'),
    userId: z.string().describe('Who did it, e.g. "alice"'),
  })
  .and(TenantEventBody);
export type TenantEvent = z.output<typeof TenantEvent>;

/** Events a feed lists by default, and at most. */
export const EVENTS_DEFAULT_LIMIT = 50;
export const EVENTS_MAX_LIMIT = 200;
