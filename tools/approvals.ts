/**
 * Approvals (issue 20 item 2, "four eyes"): list the approval requests a caller may decide or has made, and decide
 * one. The request itself is made by the execute pipeline (`tools/operations/execute.ts`) when the tenant's policy
 * asks for it; the engines hold the workflow and start it on the `required`-th approval (`WorkflowEngine.approve`).
 * A promote of a rollout is held the same way (subject `promote`, `tools/rollouts.ts`): the call whose vote reaches
 * `required` performs it; a rejection or expiry drops it, and the release goes on with its own pauses.
 *
 * Rules of a decision, checked here in this order, before anything changes:
 * - a person decides: the same rule as a freeze override ({@link requirePerson}: a self-issued token — `pds login`, the
 *   console, an operator's `pds token`; never a PAT, an external token or a CI token), and over MCP only after the
 *   host asked the person (elicitation, a confirmation only the person may answer: `personOnly`);
 * - the requester never decides their own execution, even as a platform admin;
 * - only the approvers the policy named when it was requested (user ids, `group:<name>` claims, `role:admin` = the
 *   tenant's admins) decide; each person's approval counts once;
 * - a rejection needs a reason; a pending approval past its expiry is expired, not decided.
 */
import { z } from 'zod';
import { ConfirmationRequired, Conflict, Forbidden, InvalidParams, NotFound } from '../core/errors.js';
import {
  Approval,
  ApprovalState,
  approverList,
  EXPIRY_USER,
  mayApprove,
  type Approver,
} from '../core/governance/approvals.js';
import { TeamName } from '../core/model.js';
import type { AwaitingOutcome, Platform } from '../core/ports.js';
import type { Identity } from '../auth/identity.js';
import { roleAllows, roleIn } from './access.js';
import { defineTool, type ToolContext } from './define.js';
import { requirePerson } from './governance.js';
import { createConfirmation, redeemConfirmation } from './operations/confirm.js';
import { performApprovedPromote } from './rollouts.js';

/** Most approvals one listing returns. */
export const MAX_APPROVALS = 100;

/** An approval as listed: the request, and whether the caller may decide it now. */
const ListedApproval = Approval.extend({
  canDecide: z.boolean().describe('True when you may approve or reject it now (pending, you are an approver, not the requester)'),
});

/**
 * What an approval holds back, in a sentence: the waiting workflow, or a promote of a release.
 * @example subjectOf(promote) // 'the promote of acme/web 0.2.0 (release deploy-service-x7k2p)'
 */
function subjectOf(approval: Approval): string {
  if (approval.subject !== 'promote') return approval.workflowName;
  const { team_name: team, component_name: app, canary_tag: tag } = approval.parameters;
  return `the promote of ${team}/${app}${tag ? ` ${tag}` : ''} (release ${approval.workflowName})`;
}

/** Close a pending approval without running what it holds: its workflow fails; a promote never happens. */
async function closeWithout(platform: Platform, approval: Approval, outcome: AwaitingOutcome): Promise<boolean> {
  if (approval.subject === 'promote') return (await platform.approvals.closePromote(approval.id, outcome)) !== undefined;
  return platform.workflows.settleAwaiting(approval.workflowName, outcome);
}

/** What the approver check knows of the caller for the approval's tenant. */
async function approverOf(platform: Platform, identity: Identity, team: string): Promise<Approver> {
  const tenant = await platform.backend.getTenant(team);
  return { userId: identity.userId, groups: identity.groups, tenantAdmin: roleAllows(roleIn(tenant, identity), 'admin') };
}

export const listApprovals = defineTool({
  name: 'platform_list_approvals',
  title: 'List approvals',
  description:
    'Approval requests you may decide or have requested, newest first: executions (subject "workflow") and rollout ' +
    'promotes (subject "promote") a tenant\'s policy holds until other people approve them (workflow, operation, ' +
    'parameters, requester, approvers, approvals so far, expiry). ' +
    'Default: pending ones. Platform admins see all. An agent cannot decide them; a person does (pds approvals, the ' +
    'console, or platform_review_approval in a client that asks them). Changes nothing.',
  input: z.object({
    team: TeamName.optional().describe('Only this tenant\'s, e.g. "acme"'),
    state: z
      .union([ApprovalState, z.literal('all')])
      .default('pending')
      .describe('pending (default), approved, rejected, expired, cancelled, or all'),
    limit: z.coerce.number().int().min(1).max(MAX_APPROVALS).default(50).describe(`At most this many, 1 to ${MAX_APPROVALS}, e.g. 20`),
  }),
  output: z.object({ items: z.array(ListedApproval), count: z.number().int() }),
  rest: { method: 'GET', path: '/api/v1/approvals' },
  access: 'authenticated',
  kind: 'read',
  toolset: 'tenants',
  annotations: { idempotentHint: true, openWorldHint: false },
  handler: async ({ team, state, limit }, { platform, identity }) => {
    // Approvers named by group need not be members of the tenant: the filter is who may decide, not who may read it.
    const found = await platform.approvals.list({
      tenants: team ? [team] : 'all',
      ...(state !== 'all' ? { state } : {}),
      limit: MAX_APPROVALS * 4,
    });
    const items: z.infer<typeof ListedApproval>[] = [];
    const approvers = new Map<string, Promise<Approver>>();
    for (const approval of found) {
      if (items.length >= limit) break;
      const mine = approval.requestedBy === identity.userId;
      if (!approvers.has(approval.team)) approvers.set(approval.team, approverOf(platform, identity, approval.team));
      const approver = mayApprove(approval.approvers, await approvers.get(approval.team)!);
      if (mine || approver || identity.admin) items.push({ ...approval, canDecide: approval.state === 'pending' && approver && !mine });
    }
    return { items, count: items.length };
  },
});

const ReviewInput = z.object({
  id: z.string().min(1).max(64).describe('Approval id from platform_list_approvals or the execute message, e.g. "0b7c…"'),
  decision: z.enum(['approve', 'reject']).describe('approve or reject'),
  comment: z.string().trim().max(500).optional().describe('With approve: a note for the record, e.g. "checked the diff"'),
  reason: z.string().trim().max(500).optional().describe('With reject (required): why, e.g. "not during the sale"'),
  confirm: z.string().max(200).optional().describe('Set by MCP clients that asked the person; omit it'),
});

export const reviewApproval = defineTool({
  name: 'platform_review_approval',
  title: 'Decide an approval',
  description:
    'Approve or reject an execution waiting for approval. Only a person may decide, and never the one who executed it: ' +
    'over MCP pds asks the person first (elicitation) and refuses clients that cannot ask; PATs and CI tokens are ' +
    'refused. The required-th approval starts the workflow (or performs the promote); a rejection (reason required) ' +
    'fails it (or drops the promote). Each person counts once.',
  input: ReviewInput,
  output: z.object({
    approval: Approval,
    message: z.string().describe('What happened and what follows'),
  }),
  rest: { method: 'POST', path: '/api/v1/approvals/{id}/{decision}' },
  access: 'authenticated',
  kind: 'write',
  toolset: 'tenants',
  annotations: { destructiveHint: false, idempotentHint: false, openWorldHint: true },
  handler: async (input, ctx) => {
    const { platform, identity } = ctx;
    const { id, decision } = input;
    requirePerson(identity, `deciding approval ${id}`);
    let approval = await platform.approvals.get(id);
    const mine = approval?.requestedBy === identity.userId;
    const approver = approval && (await approverOf(platform, identity, approval.team));
    // Ids of approvals the caller has nothing to do with are not confirmed to exist.
    if (!approval || !approver || !(mine || identity.admin || mayApprove(approval.approvers, approver))) {
      throw new NotFound(`approval not found: ${id}`);
    }
    const comment = decision === 'approve' ? input.comment || undefined : input.reason || input.comment || undefined;
    if (decision === 'reject' && !comment) throw new InvalidParams('reason: required to reject, e.g. {"reason": "not during the sale"}');
    if (approval.state === 'pending' && Date.parse(approval.expiresAt) <= Date.now()) {
      await closeWithout(platform, approval, {
        state: 'expired',
        userId: EXPIRY_USER,
        reason: `no decision by ${approval.expiresAt}`,
        timestamp: new Date().toISOString(),
      });
      approval = (await platform.approvals.get(id)) ?? approval;
    }
    if (approval.state !== 'pending') {
      throw new Conflict(`approval ${id} of ${subjectOf(approval)} is ${approval.state} already${approval.reason ? ` (${approval.reason})` : ''}; nothing was changed`);
    }
    if (mine) {
      throw new Forbidden(`you requested ${subjectOf(approval)}: the requester can never decide their own execution or promote, even as a platform admin (four eyes); ask ${approverList(approval.approvers)}`);
    }
    if (!mayApprove(approval.approvers, approver)) {
      throw new Forbidden(`only ${approverList(approval.approvers)} may decide approval ${id}; you are none of them`);
    }
    if (decision === 'approve' && approval.approvedBy.includes(identity.userId)) {
      throw new Conflict(`you already approved ${subjectOf(approval)}: an approval counts once per person (${approval.approvedBy.length} of ${approval.required})`);
    }
    await confirmByPerson(ctx, approval, decision, comment, input.confirm);

    const timestamp = new Date().toISOString();
    if (decision === 'approve') {
      const after = await platform.workflows.approve(id, { userId: identity.userId, timestamp, ...(comment ? { comment } : {}) });
      if (after.subject === 'promote') {
        if (after.state !== 'approved') {
          return { approval: after, message: `Approval recorded: ${subjectOf(after)} has ${after.approvedBy.length} of ${after.required} approvals and keeps waiting until ${after.expiresAt}.` };
        }
        // This vote reached `required` (a later one is refused as not pending): this process performs the promote, once.
        const done = await performApprovedPromote(after, platform);
        const promoted = done.outcome?.startsWith('promoted');
        return {
          approval: done,
          message: promoted
            ? `Approved: ${subjectOf(done)} was handed to the release (requested by ${done.requestedBy}): ${done.outcome}.`
            : `Approved, but nothing was promoted: ${done.outcome}. The decision is recorded.`,
        };
      }
      const message =
        after.state === 'approved'
          ? `Approved: ${approval.workflowName} has ${after.approvedBy.length} of ${after.required} approvals and starts now.`
          : `Approval recorded: ${approval.workflowName} has ${after.approvedBy.length} of ${after.required} approvals and keeps waiting until ${after.expiresAt}.`;
      return { approval: after, message };
    }
    const settled = await closeWithout(platform, approval, { state: 'rejected', userId: identity.userId, reason: comment!, timestamp });
    const after = (await platform.approvals.get(id)) ?? approval;
    if (!settled) throw new Conflict(`approval ${id} of ${subjectOf(approval)} is ${after.state} already; nothing was changed`);
    if (approval.subject === 'promote') {
      return { approval: after, message: `Rejected: ${subjectOf(approval)} does not happen (${comment}); the release goes on with its own pauses.` };
    }
    return { approval: after, message: `Rejected: ${approval.workflowName} failed without running (${comment}).` };
  },
});

/**
 * Over MCP, the person answers, not the agent: the first call asks for a confirmation only the person may give
 * (`personOnly`, which `confirmingCaller` turns into an elicitation, or a refusal when the client cannot ask), and the
 * second carries the value, bound to this caller, approval, decision and comment, once. REST callers are persons by
 * their token already.
 * @throws ConfirmationRequired (first MCP call); InvalidParams for a value that is not this decision's.
 */
async function confirmByPerson(
  ctx: ToolContext,
  approval: Approval,
  decision: 'approve' | 'reject',
  comment: string | undefined,
  confirm: string | undefined,
): Promise<void> {
  if (ctx.door.kind !== 'mcp') return;
  const binding = {
    userId: ctx.identity.userId,
    operation: 'platform_review_approval',
    parameters: { id: approval.id, decision, comment: comment ?? '' },
  };
  if (confirm) {
    await redeemConfirmation(ctx.confirmSecret, ctx.platform.once, binding, confirm);
    return;
  }
  const { value, expiresAt } = createConfirmation(ctx.confirmSecret, binding);
  const target = [approval.parameters.team_name, approval.parameters.component_name].filter(Boolean).join('/');
  const what =
    approval.subject === 'promote'
      ? `${subjectOf(approval)}, requested by ${approval.requestedBy}`
      : `${approval.workflowName} (${approval.operation} ${target}, requested by ${approval.requestedBy})`;
  const plan =
    `${decision} ${what}` +
    (comment ? ` with "${comment}"` : '');
  throw new ConfirmationRequired(`${plan} needs your own answer; nothing was changed`, { confirm: value, expiresAt, plan, personOnly: true });
}

/** The approval tools. */
export const approvalTools = [listApprovals, reviewApproval] as const;
