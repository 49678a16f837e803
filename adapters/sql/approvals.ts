/**
 * Approval requests in SQL (issue 20 item 2): the {@link ApprovalStore} reads, and the writes the workflow engines
 * make — the request with its workflow, each approval with its event, the close of a rejected, expired or cancelled
 * request with the workflow's settlement — and the requests of promotes by hand held for approval (issue 22 item 4:
 * subject `promote`; no workflow waits for them, so their votes and closes change no workflow). Every write that
 * changes more than one row runs in one transaction, and on PostgreSQL locks the approval's row first (`FOR UPDATE`),
 * so two replicas deciding at once take turns: one vote is the `required`-th, one close wins, and a workflow starts
 * (or a promote is performed) once.
 */
import type { Selectable } from 'kysely';
import { sql } from './kysely.js';
import { Conflict, NotFound } from '../../core/errors.js';
import { awaitingFailure, waitingMessage, type Approval, type ApprovalRequest, type ApprovalState, type ApprovalVote } from '../../core/governance/approvals.js';
import type { ApprovalQuery, ApprovalStore, AwaitingOutcome, PromoteRequest, TenantRef } from '../../core/ports.js';
import type { Engine } from './database.js';
import { inTransaction, json, type Executor } from './executor.js';
import { SqlGovernanceStore } from './governance.js';
import type { ApprovalsTable } from './schema.js';
import { WorkflowStore } from './workflows.js';

/** The request of one execution, as the engine records it with the workflow. */
export interface NewApproval {
  request: ApprovalRequest;
  workflowName: string;
  /** The tenant it belongs to; its feed gets the `approval.requested` event. */
  tenant: TenantRef;
  operation: string;
  /** As recorded: strings, secret values redacted. */
  parameters: Record<string, string>;
  requestedBy: string;
  /** ISO 8601 UTC. */
  requestedAt: string;
}

/** What a vote did. */
export interface VoteResult {
  approval: Approval;
  /** True when this vote was the `required`-th: the workflow no longer waits and must be started, by this caller. */
  started: boolean;
}

/** The `workflow_name` of a promote's row: unique, and never a workflow's name (see migration `0012`). */
function promoteKey(id: string): string {
  return `promote:${id}`;
}

/**
 * Insert a pending approval and record its `approval.requested` event, in `db` (one transaction when the caller opened
 * one). A promote's request passes the release it would promote as `release`: its row gets subject `promote`, and its
 * event names that release as `workflowName` (its own `workflow_name` is {@link promoteKey}).
 */
async function insertApproval(db: Executor, approval: NewApproval, release?: string): Promise<void> {
  const { request } = approval;
  await db
    .insertInto('approvals')
    .values({
      id: request.id,
      workflow_name: approval.workflowName,
      ...(release ? { subject: 'promote', release_workflow: release, outcome: null } : {}),
      tenant: approval.tenant.name,
      tenant_uid: approval.tenant.uid,
      operation: approval.operation,
      parameters: JSON.stringify(approval.parameters),
      requested_by: approval.requestedBy,
      requested_at: approval.requestedAt,
      required: request.required,
      approvers: JSON.stringify(request.approvers),
      state: 'pending',
      expires_at: request.expiresAt,
      decided_at: null,
      decided_by: null,
      reason: null,
    })
    .execute();
  await new SqlGovernanceStore(db).record(approval.tenant, {
    type: 'approval.requested',
    userId: approval.requestedBy,
    timestamp: approval.requestedAt,
    data: {
      approvalId: request.id,
      ...(release ? { subject: 'promote' } : {}),
      workflowName: release ?? approval.workflowName,
      operation: approval.operation,
      required: request.required,
      approvers: request.approvers,
      expiresAt: request.expiresAt,
    },
  });
}

/** The store of approvals; bound to the database or to one transaction. */
export class SqlApprovalStore implements ApprovalStore {
  constructor(
    private readonly db: Executor,
    private readonly engine: Engine,
  ) {}

  async get(id: string): Promise<Approval | undefined> {
    const row = await this.db.selectFrom('approvals').selectAll().where('id', '=', id).executeTakeFirst();
    return row && (await this.withVotes([row]))[0];
  }

  async ofWorkflow(name: string): Promise<Approval | undefined> {
    const row = await this.db.selectFrom('approvals').selectAll().where('workflow_name', '=', name).executeTakeFirst();
    return row && (await this.withVotes([row]))[0];
  }

  /** The approvals of workflows `names` (those that have one), by workflow name; one query each for rows and votes. */
  async ofWorkflows(names: readonly string[]): Promise<Map<string, Approval>> {
    if (names.length === 0) return new Map();
    const rows = await this.db.selectFrom('approvals').selectAll().where('workflow_name', 'in', [...names]).execute();
    return new Map((await this.withVotes(rows)).map((a) => [a.workflowName, a]));
  }

  async list(query: ApprovalQuery): Promise<Approval[]> {
    if (query.tenants !== 'all' && query.tenants.length === 0) return [];
    let select = this.db.selectFrom('approvals').selectAll();
    if (query.tenants !== 'all') select = select.where('tenant', 'in', [...query.tenants]);
    if (query.state) select = select.where('state', '=', query.state);
    const rows = await select.orderBy('seq', 'desc').limit(Math.max(0, Math.floor(query.limit))).execute();
    return this.withVotes(rows);
  }

  async due(now: Date, limit: number): Promise<Approval[]> {
    const rows = await this.db
      .selectFrom('approvals')
      .selectAll()
      .where('state', '=', 'pending')
      .where('expires_at', '<=', now.toISOString())
      .orderBy('expires_at')
      .limit(limit)
      .execute();
    return this.withVotes(rows);
  }

  async nextExpiry(): Promise<Date | undefined> {
    const row = await this.db
      .selectFrom('approvals')
      .select((eb) => eb.fn.min('expires_at').as('next'))
      .where('state', '=', 'pending')
      .executeTakeFirst();
    return row?.next ? new Date(String(row.next)) : undefined;
  }

  /**
   * Record a request and its `approval.requested` event. Call it in the transaction that records the workflow (with
   * `approvalId` = `request.id`).
   */
  async create(approval: NewApproval): Promise<void> {
    await insertApproval(this.db, approval);
  }

  async requestPromote(promote: PromoteRequest): Promise<{ approval: Approval; created: boolean }> {
    return inTransaction(this.db, async (tx) => {
      const waiting = await tx
        .selectFrom('approvals')
        .selectAll()
        .where('release_workflow', '=', promote.release)
        .where('state', '=', 'pending')
        .where('subject', '=', 'promote')
        .executeTakeFirst();
      if (waiting) return { approval: (await this.withVotes([waiting], tx))[0]!, created: false };
      const { request } = promote;
      await insertApproval(tx, { ...promote, workflowName: promoteKey(request.id), operation: 'deploy-service' }, promote.release);
      const row = await tx.selectFrom('approvals').selectAll().where('id', '=', request.id).executeTakeFirstOrThrow();
      return { approval: (await this.withVotes([row], tx))[0]!, created: true };
    });
  }

  async closePromote(id: string, outcome: AwaitingOutcome): Promise<Approval | undefined> {
    return inTransaction(this.db, async (tx) => {
      const row = await this.locked(tx, 'id', id);
      if (!row || row.state !== 'pending' || row.subject !== 'promote') return undefined;
      await tx
        .updateTable('approvals')
        .set({ state: outcome.state, decided_at: outcome.timestamp, decided_by: outcome.userId, reason: outcome.reason })
        .where('id', '=', id)
        .execute();
      if (outcome.state !== 'cancelled' && row.tenant_uid) {
        await new SqlGovernanceStore(tx).record(
          { name: row.tenant, uid: row.tenant_uid },
          {
            type: 'approval.decided',
            userId: outcome.userId,
            timestamp: outcome.timestamp,
            data: { approvalId: id, subject: 'promote', workflowName: subjectWorkflow(row), operation: row.operation, decision: outcome.state, comment: outcome.reason },
          },
        );
      }
      const [approval] = await this.withVotes([{ ...row, state: outcome.state, decided_at: outcome.timestamp, decided_by: outcome.userId, reason: outcome.reason }], tx);
      return approval;
    });
  }

  async promoteOutcome(id: string, outcome: string): Promise<void> {
    await this.db.updateTable('approvals').set({ outcome }).where('id', '=', id).where('subject', '=', 'promote').execute();
  }

  /**
   * Record `vote` and its `approval.decided` event; when it is the `required`-th, mark the approval approved and the
   * workflow no longer waiting (due at once). One transaction, the approval's row locked.
   * @throws NotFound for an unknown id; Conflict when the approval is not pending, has expired, or `vote.userId`
   *   already approved it.
   */
  async vote(id: string, vote: ApprovalVote): Promise<VoteResult> {
    return inTransaction(this.db, async (tx) => {
      const row = await this.locked(tx, 'id', id);
      if (!row) throw new NotFound(`approval not found: ${id}`);
      if (row.state !== 'pending') throw new Conflict(`approval ${id} is ${row.state} already; nothing was changed`);
      if (row.expires_at <= vote.timestamp) throw new Conflict(`approval ${id} expired at ${row.expires_at}; nothing was changed`);
      const inserted = await tx
        .insertInto('approval_votes')
        .values({ approval_id: id, user_id: vote.userId, comment: vote.comment ?? null, timestamp: vote.timestamp })
        .onConflict((oc) => oc.columns(['approval_id', 'user_id']).doNothing())
        .executeTakeFirst();
      if (Number(inserted.numInsertedOrUpdatedRows ?? 0n) === 0) {
        throw new Conflict(`${vote.userId} already approved ${row.workflow_name}; an approval counts once per person`);
      }
      if (row.tenant_uid) {
        await new SqlGovernanceStore(tx).record(
          { name: row.tenant, uid: row.tenant_uid },
          {
            type: 'approval.decided',
            userId: vote.userId,
            timestamp: vote.timestamp,
            data: {
              approvalId: id,
              ...(row.subject === 'promote' ? { subject: 'promote' as const } : {}),
              workflowName: subjectWorkflow(row),
              operation: row.operation,
              decision: 'approved',
              ...(vote.comment ? { comment: vote.comment } : {}),
            },
          },
        );
      }
      const [approval] = await this.withVotes([row], tx);
      const now = approval!;
      if (now.approvedBy.length < now.required) {
        await tx.updateTable('workflows').set({ message: waitingMessage(now) }).where('name', '=', row.workflow_name).where('awaiting_approval', '=', 1).execute();
        return { approval: now, started: false };
      }
      await tx.updateTable('approvals').set({ state: 'approved', decided_at: vote.timestamp, decided_by: vote.userId }).where('id', '=', id).execute();
      const released = await tx
        .updateTable('workflows')
        .set({ awaiting_approval: 0, due_at: Date.parse(vote.timestamp) || Date.now(), message: `approved by ${now.approvedBy.join(', ')}; starting` })
        .where('name', '=', row.workflow_name)
        .where('awaiting_approval', '=', 1)
        .where('phase', '=', 'submitted')
        .executeTakeFirst();
      return {
        approval: { ...now, state: 'approved', decidedAt: vote.timestamp, decidedBy: vote.userId },
        started: Number(released.numUpdatedRows) === 1,
      };
    });
  }

  /**
   * Close the pending approval of `workflowName` as `outcome.state`, settle the waiting workflow `failed` with a message
   * saying why (`awaitingFailure`), and its audit entry, and for a rejection or expiry record the `approval.decided` event. One
   * transaction, the approval's row locked.
   * @returns the approval closed, or `undefined` when the workflow had no pending approval (nothing changed).
   */
  async close(workflowName: string, outcome: AwaitingOutcome): Promise<Approval | undefined> {
    return inTransaction(this.db, async (tx) => {
      const row = await this.locked(tx, 'workflow_name', workflowName);
      if (!row || row.state !== 'pending') return undefined;
      await tx
        .updateTable('approvals')
        .set({ state: outcome.state, decided_at: outcome.timestamp, decided_by: outcome.userId, reason: outcome.reason })
        .where('id', '=', row.id)
        .execute();
      const message = awaitingFailure(outcome, { expiresAt: row.expires_at, required: Number(row.required), approvers: json<string[]>(row.approvers) });
      await tx.updateTable('workflows').set({ awaiting_approval: 0 }).where('name', '=', workflowName).execute();
      await new WorkflowStore(tx, this.engine).settle(workflowName, { phase: 'failed', message, finishedAt: outcome.timestamp });
      if (outcome.state !== 'cancelled' && row.tenant_uid) {
        await new SqlGovernanceStore(tx).record(
          { name: row.tenant, uid: row.tenant_uid },
          {
            type: 'approval.decided',
            userId: outcome.userId,
            timestamp: outcome.timestamp,
            data: { approvalId: row.id, workflowName, operation: row.operation, decision: outcome.state, comment: outcome.reason },
          },
        );
      }
      const [approval] = await this.withVotes([{ ...row, state: outcome.state, decided_at: outcome.timestamp, decided_by: outcome.userId, reason: outcome.reason }], tx);
      return approval;
    });
  }

  /**
   * The approval row whose `column` is `value`, locked for the rest of the transaction: PostgreSQL `FOR UPDATE`; on
   * SQLite the transaction writes first, so it takes the database's write lock (waiting up to the busy timeout)
   * instead of failing when it reads first and another process wrote meanwhile.
   */
  private async locked(tx: Executor, column: 'id' | 'workflow_name', value: string): Promise<Selectable<ApprovalsTable> | undefined> {
    if (this.engine === 'sqlite') await tx.updateTable('approvals').set({ state: sql<string>`state` }).where(column, '=', value).execute();
    let query = tx.selectFrom('approvals').selectAll().where(column, '=', value);
    if (this.engine === 'postgres') query = query.forUpdate();
    return query.executeTakeFirst();
  }

  private async withVotes(rows: Selectable<ApprovalsTable>[], db: Executor = this.db): Promise<Approval[]> {
    if (rows.length === 0) return [];
    const votes = await db
      .selectFrom('approval_votes')
      .selectAll()
      .where('approval_id', 'in', rows.map((r) => r.id))
      .orderBy('timestamp')
      .orderBy('user_id')
      .execute();
    return rows.map((row) => approvalOf(row, votes.filter((v) => v.approval_id === row.id).map(voteOf)));
  }
}

function voteOf(row: { user_id: string; comment: string | null; timestamp: string }): ApprovalVote {
  return { userId: row.user_id, timestamp: row.timestamp, ...(row.comment !== null ? { comment: row.comment } : {}) };
}

/** The workflow an approval is about: the one waiting, or (promote) the deploy workflow of the release. */
function subjectWorkflow(row: Selectable<ApprovalsTable>): string {
  return row.subject === 'promote' && row.release_workflow ? row.release_workflow : row.workflow_name;
}

function approvalOf(row: Selectable<ApprovalsTable>, votes: ApprovalVote[]): Approval {
  const approval: Approval = {
    id: row.id,
    subject: row.subject === 'promote' ? 'promote' : 'workflow',
    workflowName: subjectWorkflow(row),
    team: row.tenant,
    operation: row.operation,
    parameters: json<Record<string, string>>(row.parameters),
    requestedBy: row.requested_by,
    requestedAt: row.requested_at,
    required: Number(row.required),
    approvers: json<string[]>(row.approvers),
    approvedBy: votes.map((v) => v.userId),
    votes,
    state: row.state as ApprovalState,
    expiresAt: row.expires_at,
  };
  if (row.decided_at !== null) approval.decidedAt = row.decided_at;
  if (row.decided_by !== null) approval.decidedBy = row.decided_by;
  if (row.reason !== null) approval.reason = row.reason;
  if (row.outcome !== null) approval.outcome = row.outcome;
  return approval;
}
