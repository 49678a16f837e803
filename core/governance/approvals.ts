/**
 * Approvals (issue 20 item 2, "four eyes"): an execution the tenant's policy (`core/governance/policy.ts`
 * `approvals`) says needs approval is recorded and answered `submitted`, and waits — nothing runs, on Kubernetes no
 * Argo Workflow exists — until `required` distinct people the policy names approve it. A rejection, or no decision
 * before `expiresAt`, settles the workflow `failed` with the reason. The workflow's audit status keeps the contract's
 * three values (`submitted`, `succeeded`, `failed`); the wait is shown beside it, as the workflow view's phase
 * `awaiting-approval` and its `approval` block.
 */
import { z } from 'zod';
import { covers, durationMs, parseApprover, type ApproverRef, type TenantPolicy } from './policy.js';
import type { OperationId } from '../operations/index.js';

/**
 * Where an approval stands: `pending` (waiting for decisions), `approved` (reached `required`: the workflow runs),
 * `rejected` (an approver said no), `expired` (no decision in time), `cancelled` (the workflow was cancelled while it
 * waited).
 */
export const APPROVAL_STATES = ['pending', 'approved', 'rejected', 'expired', 'cancelled'] as const;
export const ApprovalState = z.enum(APPROVAL_STATES);
export type ApprovalState = z.infer<typeof ApprovalState>;

/**
 * What an approval holds back: `workflow` (an execution, which runs once approved) or `promote` (a promote by hand of
 * a canary or blue-green release, issue 22 item 4: it counts as a deploy, and is performed once approved).
 */
export const APPROVAL_SUBJECTS = ['workflow', 'promote'] as const;
export const ApprovalSubject = z.enum(APPROVAL_SUBJECTS);
export type ApprovalSubject = z.infer<typeof ApprovalSubject>;

/** One person's approval. */
export const ApprovalVote = z.object({
  userId: z.string().describe('Who approved, e.g. "bob"'),
  comment: z.string().optional().describe('What they said, e.g. "checked the diff"'),
  timestamp: z.string().describe('ISO 8601 UTC'),
});
export type ApprovalVote = z.infer<typeof ApprovalVote>;

/** An approval request of one workflow, as listed by `GET /api/v1/approvals`. */
export const Approval = z.object({
  id: z.string().describe('Approval id (UUID); decide it with POST /api/v1/approvals/{id}/approve or /reject'),
  subject: ApprovalSubject.describe('workflow: an execution waits for it; promote: a promote of the release of workflowName waits for it'),
  workflowName: z.string().describe('The workflow waiting for it, or (promote) the deploy workflow of the release, e.g. "deploy-service-x7k2p"'),
  team: z.string().describe('The tenant, e.g. "acme"'),
  operation: z.string().describe('e.g. "deploy-service"'),
  parameters: z.record(z.string(), z.string()).describe('The execution\'s parameters as recorded (secret values redacted)'),
  requestedBy: z.string().describe('Who executed the operation; never one of its approvers'),
  requestedAt: z.string().describe('ISO 8601 UTC'),
  required: z.number().int().describe('How many distinct people must approve'),
  approvers: z.array(z.string()).describe('Who may approve: user ids, "group:<name>", "role:admin"'),
  approvedBy: z.array(z.string()).describe('Who approved so far, in order'),
  votes: z.array(ApprovalVote).describe('The approvals so far, with comments'),
  state: ApprovalState,
  expiresAt: z.string().describe('ISO 8601 UTC: undecided by then, it expires and the workflow fails'),
  decidedAt: z.string().optional().describe('ISO 8601 UTC, once no longer pending'),
  decidedBy: z.string().optional().describe('Who settled it: the last approver, the rejecter, or the system user for expiry'),
  reason: z.string().optional().describe('Why it was rejected, expired or cancelled'),
  outcome: z.string().optional().describe('Promote, once approved: what it did, e.g. "promoted: 0.2.0 goes to 100% of traffic…", or why not'),
});
export type Approval = z.infer<typeof Approval>;

/** The approval block of a workflow detail (`GET /api/v1/workflows/{name}`). */
export const WorkflowApproval = Approval.pick({ id: true, required: true, approvedBy: true, expiresAt: true, approvers: true, state: true });
export type WorkflowApproval = z.infer<typeof WorkflowApproval>;

/** The user id recorded as the decider of an expiry (the tenant event's `userId`): no person's id can have this form. */
export const EXPIRY_USER = 'system:approval-expiry';

/** What an execution must wait for, fixed when it is submitted. */
export interface ApprovalRequest {
  /** Approval id (UUID). */
  id: string;
  required: number;
  approvers: string[];
  /** The policy's `expiresAfter`, e.g. `24h`. */
  expiresAfter: string;
  /** ISO 8601 UTC. */
  expiresAt: string;
}

/**
 * The approval `operation` needs under `policy` from now, or `undefined` when the policy asks for none.
 * @param id the new approval's id.
 */
export function approvalNeeded(policy: TenantPolicy, operation: OperationId, now: Date, id: string): ApprovalRequest | undefined {
  const rule = policy.approvals;
  if (!rule || !covers(rule.operations, operation)) return undefined;
  const expiresAfter = rule.expiresAfter ?? '24h';
  return {
    id,
    required: rule.required,
    approvers: [...rule.approvers],
    expiresAfter,
    expiresAt: new Date(now.getTime() + (durationMs(expiresAfter) ?? 86_400_000)).toISOString(),
  };
}

/** `alice`, `alice or group:sre`, `alice, bob or role:admin`. */
export function approverList(approvers: readonly string[]): string {
  if (approvers.length <= 1) return approvers[0] ?? 'nobody';
  return `${approvers.slice(0, -1).join(', ')} or ${approvers.at(-1)}`;
}

/** `1 approval`, `2 approvals`. */
export function approvalsCount(n: number): string {
  return `${n} approval${n === 1 ? '' : 's'}`;
}

/**
 * What an agent is told before it waits.
 * @example 'this deploy-service needs 1 approval from alice or group:sre; it will wait up to 24h (until 2026-11-27T09:00:00Z)'
 */
export function approvalNotice(operation: string, request: Pick<ApprovalRequest, 'required' | 'approvers' | 'expiresAfter' | 'expiresAt'>): string {
  return (
    `this ${operation} needs ${approvalsCount(request.required)} from ${approverList(request.approvers)}; ` +
    `it will wait up to ${request.expiresAfter} (until ${request.expiresAt})`
  );
}

/**
 * The progress of a pending approval, for workflow messages and `wait_seconds` progress.
 * @example 'waiting for approval by alice or group:sre until 2026-11-27T09:00:00Z (0 of 1 approvals)'
 */
export function waitingMessage(approval: Pick<Approval, 'approvers' | 'expiresAt' | 'required' | 'approvedBy'>): string {
  const by = approval.approvedBy.length ? `; approved by ${approval.approvedBy.join(', ')}` : '';
  return (
    `waiting for approval by ${approverList(approval.approvers)} until ${approval.expiresAt} ` +
    `(${approval.approvedBy.length} of ${approvalsCount(approval.required)}${by})`
  );
}

/** What the approver check needs to know of the caller. */
export interface Approver {
  userId: string;
  groups: readonly string[];
  /** Whether the caller is an admin of the approval's tenant (`role:admin`). */
  tenantAdmin: boolean;
}

/** True when `who` is one of `approvers` (a user id, a group claim of theirs, or `role:admin` as a tenant admin). */
export function mayApprove(approvers: readonly string[], who: Approver): boolean {
  return approvers.some((text) => {
    const ref: ApproverRef | undefined = parseApprover(text);
    if (ref?.kind === 'user') return ref.userId === who.userId;
    if (ref?.kind === 'group') return who.groups.includes(ref.group);
    if (ref?.kind === 'role') return who.tenantAdmin;
    return false;
  });
}

/** The workflow detail's block of `approval`. */
export function workflowApproval(approval: Approval): WorkflowApproval {
  const { id, required, approvedBy, expiresAt, approvers, state } = approval;
  return { id, required, approvedBy: [...approvedBy], expiresAt, approvers: [...approvers], state };
}

/**
 * The failure message of a workflow whose approval was rejected, expired or cancelled: nothing of it ran.
 * @example 'rejected by bob: not during the sale; nothing ran'
 * @example 'approval expired at 2026-11-27T09:00:00Z without 1 approval from alice or group:sre; nothing ran'
 */
export function awaitingFailure(
  outcome: { state: 'rejected' | 'expired' | 'cancelled'; userId: string; reason: string },
  approval: Pick<Approval, 'expiresAt' | 'required' | 'approvers'>,
): string {
  if (outcome.state === 'rejected') return `rejected by ${outcome.userId}: ${outcome.reason}; nothing ran`;
  if (outcome.state === 'expired') {
    return `approval expired at ${approval.expiresAt} without ${approvalsCount(approval.required)} from ${approverList(approval.approvers)}; nothing ran`;
  }
  return `cancelled by ${outcome.userId} while waiting for approval: ${outcome.reason}; nothing ran`;
}
