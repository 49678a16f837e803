/**
 * Workflow records: what pds submitted, with step progress, and the lease and queue that let several pds processes on
 * one PostgreSQL share the work (issue 9 item 6) while operations on one service take effect in submission order
 * (issue 7 item 6).
 *
 * **Queue (order).** A workflow waits in the queue of its tenant and service (`tenant`, `service` = `team_name`,
 * `component_name`; tenant operations have service ''). It may run only when no other unfinished workflow in a
 * conflicting queue was submitted before it or has already begun. Queues conflict when they are of one tenant and
 * either is a tenant operation or both name the same service. So a service sees its operations one at a time, oldest
 * first (a deploy submitted before a rollback finishes before the rollback starts), a tenant operation waits for the
 * tenant's earlier work and holds back its later work (an onboarding submitted right after create-tenant runs once the
 * tenant exists), and different services run side by side. Argo Workflows offers the same per key
 * (`synchronization.mutex`, FIFO), which the cluster backend can use for its workflows.
 *
 * **Lease (once).** A process runs a workflow's steps only while it holds the workflow's lease (`lease_owner`,
 * `lease_expires_at`). {@link WorkflowStore.claim} hands out runnable, due workflows whose lease is free — on
 * PostgreSQL under a transaction-scoped advisory lock, so two processes never claim at once (no write skew between
 * the queue check and the lease), and with `FOR UPDATE SKIP LOCKED`, so a row that another process is advancing right
 * now is passed over rather than waited for. Each step runs in a transaction that starts with {@link WorkflowStore.hold}
 * (row lock; lease still ours and the step still the next one) and ends with {@link WorkflowStore.advance} or
 * {@link WorkflowStore.settle}, both conditional on the lease: a process that lost its lease (it paused past the
 * expiry and another took over) fails with {@link LeaseLost} and its step's changes roll back, so every step's effects
 * commit once. A process that dies simply stops renewing; once the lease expires, the next `claim` anywhere takes the
 * workflow over from its next step.
 */
import { randomUUID } from 'node:crypto';
import type { Selectable } from 'kysely';
import { sql } from './kysely.js';
import { Conflict } from '../../core/errors.js';
import type { Engine } from './database.js';
import { inTransaction, json, type Executor } from './executor.js';
import { enqueueEvent } from './outbox.js';
import type { WorkflowEventData } from '../../core/governance/webhooks.js';
import type { WorkflowQuery } from '../../core/ports.js';
import type { RolloutCommand, StepProgress, WorkflowRecord } from './records.js';
import type { WorkflowsTable } from './schema.js';

/** A workflow to record. */
export interface NewWorkflow {
  name: string;
  operation: string;
  workflowTemplate: string;
  /** As recorded: strings, secret values redacted. */
  parameters: Record<string, string>;
  userId: string;
  /** Names of the plan's steps (all pending); empty for workflows another engine runs (Argo). */
  steps: string[];
  /** Initial progress message, e.g. `queued; step 1/9: …`. */
  message: string;
  /** ISO 8601 UTC. */
  startedAt: string;
  /** Milliseconds since the epoch before which the first step does not run (default: at once). */
  dueAt?: number;
  /** The tenant's uid, or null for none; default: the live tenant named `parameters.team_name`, if any. */
  tenantUid?: string | null;
  /**
   * The typed arguments the steps run with, secret values included (`WorkflowSubmission.parameters`), kept apart in
   * `workflow_arguments` and deleted when the workflow settles. Any JSON value.
   */
  arguments?: unknown;
  /** The failed workflow this one retries (issue 22). */
  retryOf?: string;
  /** The approval it waits for (issue 20 item 2): it is recorded waiting, and runs only once approved. */
  approvalId?: string;
}

/** A workflow's progress as recorded before it came into this store. */
export interface RecordedProgress {
  phase: WorkflowRecord['phase'];
  steps: StepProgress[];
  nextStep: number;
  /** ISO 8601 UTC, when settled. */
  finishedAt?: string;
}

/** The outcome of a workflow. */
export interface Settlement {
  phase: 'succeeded' | 'failed';
  message: string;
  /** ISO 8601 UTC. */
  finishedAt: string;
  /** Progress to record with it (e.g. the failed step marked `failed`); default: unchanged. */
  steps?: StepProgress[];
  nextStep?: number;
  /** The tenant the workflow belongs to now (create-tenant: the tenant it created); default: unchanged. */
  tenantUid?: string;
}

/** Progress after a step that did not settle the workflow. */
export interface Progress {
  steps: StepProgress[];
  nextStep: number;
  message: string;
  /** Milliseconds since the epoch before which the next step does not run. */
  dueAt: number;
  /** The lease is renewed to this instant (milliseconds since the epoch). */
  leaseUntil: number;
  /** The step acted on the workflow's promote or abort by hand: clear it. */
  clearCommand?: boolean;
}

/** A step was about to commit for a process that no longer holds the workflow's lease: nothing of it was recorded. */
export class LeaseLost extends Conflict {
  constructor(readonly workflow: string, readonly owner: string) {
    super(`workflow ${workflow} is no longer leased to ${owner}; another process took it over`);
  }
}

/** Advisory lock key serializing claims across processes on PostgreSQL (any constant, unique to this purpose). */
const CLAIM_LOCK_KEY = 7_364_201_903;

/** Reads and writes of workflow records; bound to the database or to one transaction. */
export class WorkflowStore {
  constructor(
    private readonly db: Executor,
    private readonly engine: Engine,
  ) {}

  /**
   * Record a new workflow (phase `submitted`, every step pending, lease free) and its arguments.
   * @param recorded progress recorded elsewhere (the `state.json` import): phase, steps and next step as they were.
   * @throws Conflict `workflow <name> already exists`.
   */
  async create(workflow: NewWorkflow, recorded?: RecordedProgress): Promise<WorkflowRecord> {
    return inTransaction(this.db, async (tx) => {
      const tenant = workflow.parameters.team_name ?? '';
      const tenantUid = workflow.tenantUid !== undefined ? workflow.tenantUid : await tenantUidOf(tx, tenant);
      const inserted = await tx
        .insertInto('workflows')
        .values({
          name: workflow.name,
          operation: workflow.operation,
          workflow_template: workflow.workflowTemplate,
          user_id: workflow.userId,
          tenant,
          tenant_uid: tenantUid ?? null,
          service: workflow.parameters.component_name ?? '',
          parameters: JSON.stringify(workflow.parameters),
          phase: recorded?.phase ?? 'submitted',
          message: workflow.message,
          started_at: workflow.startedAt,
          finished_at: recorded?.finishedAt ?? null,
          steps: JSON.stringify(recorded?.steps ?? workflow.steps.map((name) => ({ name, status: 'pending' }))),
          next_step: recorded?.nextStep ?? 0,
          due_at: workflow.dueAt ?? 0,
          lease_owner: null,
          lease_expires_at: null,
          cancelled_by: null,
          cancel_reason: null,
          retry_of: workflow.retryOf ?? null,
          approval_id: workflow.approvalId ?? null,
          awaiting_approval: workflow.approvalId ? 1 : 0,
        })
        .onConflict((oc) => oc.column('name').doNothing())
        .returningAll()
        .executeTakeFirst();
      if (!inserted) throw new Conflict(`workflow ${workflow.name} already exists`);
      if (workflow.arguments !== undefined) {
        await tx
          .insertInto('workflow_arguments')
          .values({ workflow_name: workflow.name, arguments: JSON.stringify(workflow.arguments) })
          .execute();
      }
      const record = fromRow(inserted);
      // An imported record (state.json) happened before any hook could hear of it.
      if (!recorded) await notify(tx, record, 'workflow.submitted');
      return record;
    });
  }

  /** The workflow `name`, or `undefined`. */
  async get(name: string): Promise<WorkflowRecord | undefined> {
    const row = await this.db.selectFrom('workflows').selectAll().where('name', '=', name).executeTakeFirst();
    return row && fromRow(row);
  }

  /** The typed arguments recorded with `name` while it is unfinished, or `undefined` (none, or it settled). */
  async arguments(name: string): Promise<unknown> {
    const row = await this.db.selectFrom('workflow_arguments').select('arguments').where('workflow_name', '=', name).executeTakeFirst();
    return row && json<unknown>(row.arguments);
  }

  /**
   * Workflows of a tenant (by name), or of one of its services, newest first.
   * @param options.before only workflows submitted before this `seq` (paging).
   */
  async list(options: { tenant: string; service?: string; limit: number; before?: number }): Promise<WorkflowRecord[]> {
    let query = this.db.selectFrom('workflows').selectAll().where('tenant', '=', options.tenant);
    if (options.service !== undefined) query = query.where('service', '=', options.service);
    if (options.before !== undefined) query = query.where('seq', '<', options.before);
    const rows = await query.orderBy('seq', 'desc').limit(options.limit).execute();
    return rows.map(fromRow);
  }

  /**
   * The newest workflows `query.visible` allows and the filters select, at most `query.limit`, newest first — the rule
   * of the audit trail (`audit.ts`): everything for `all`; otherwise the workflows of the visible tenants' current
   * identities and the caller's own. One indexed branch per visible tenant plus the caller's, each cut to `limit`.
   */
  async query(query: WorkflowQuery): Promise<WorkflowRecord[]> {
    const limit = Math.max(0, Math.floor(query.limit));
    if (limit === 0) return [];
    const branch = () => {
      let q = this.db.selectFrom('workflows').select('seq');
      if (query.service !== undefined) q = q.where('service', '=', query.service);
      if (query.operation !== undefined) q = q.where('operation', '=', query.operation);
      if (query.tenant !== undefined) q = q.where('tenant', '=', query.tenant);
      return q;
    };
    let branches: Array<ReturnType<typeof branch>>;
    if (query.visible === 'all') branches = [branch()];
    else {
      const tenants = query.visible.tenants.filter((t) => query.tenant === undefined || t.name === query.tenant);
      branches = tenants.map((t) => branch().where('tenant_uid', '=', t.uid));
      branches.push(branch().where('user_id', '=', query.visible.userId));
    }
    const limited = branches.map((b) => b.orderBy('seq', 'desc').limit(limit));
    let newest;
    if (limited.length === 1) newest = limited[0]!;
    else {
      const [first, ...rest] = limited.map((b, i) => this.db.selectFrom(b.as(`b${i}`)).select('seq'));
      let union = first!;
      for (const next of rest) union = union.union(next);
      newest = this.db.selectFrom(union.as('visible')).select('seq').orderBy('seq', 'desc').limit(limit);
    }
    const rows = await this.db.selectFrom('workflows').selectAll().where('seq', 'in', newest).orderBy('seq', 'desc').execute();
    return rows.map(fromRow);
  }

  /**
   * Free at once the leases of unfinished workflows whose owner `isGone` says is dead (a process on this host that no
   * longer runs: it was killed), so a restarted pds continues them without waiting for the lease to expire.
   * @returns how many leases were freed.
   */
  async releaseGone(isGone: (owner: string) => boolean): Promise<number> {
    const rows = await this.db
      .selectFrom('workflows')
      .select(['name', 'lease_owner'])
      .where('phase', '=', 'submitted')
      .where('lease_owner', 'is not', null)
      .execute();
    let freed = 0;
    for (const row of rows) {
      if (!row.lease_owner || !isGone(row.lease_owner)) continue;
      const updated = await this.db
        .updateTable('workflows')
        .set({ lease_expires_at: 0 })
        .where('name', '=', row.name)
        .where('phase', '=', 'submitted')
        .where('lease_owner', '=', row.lease_owner)
        .executeTakeFirst();
      freed += Number(updated.numUpdatedRows);
    }
    return freed;
  }

  /** Every unfinished workflow, in submission order (e.g. to track them again after a restart). */
  async unfinished(): Promise<WorkflowRecord[]> {
    const rows = await this.db.selectFrom('workflows').selectAll().where('phase', '=', 'submitted').orderBy('seq').execute();
    return rows.map(fromRow);
  }

  /**
   * Lease up to `limit` workflows to `owner` for `leaseMs`: those unfinished, due (`due_at <= now`), whose lease is free
   * (never taken, expired, or released) and whose queue lets them run (see the file comment), oldest first.
   * @param now milliseconds since the epoch.
   * @returns the claimed workflows, with their progress (continue from `nextStep`).
   */
  async claim(options: { owner: string; now: number; leaseMs: number; limit?: number }): Promise<WorkflowRecord[]> {
    const { owner, now, leaseMs } = options;
    return inTransaction(this.db, async (tx) => {
      if (this.engine === 'postgres') await sql`select pg_advisory_xact_lock(${CLAIM_LOCK_KEY})`.execute(tx);
      let query = tx
        .selectFrom('workflows as w')
        .select('w.name')
        .where('w.phase', '=', 'submitted')
        .where('w.awaiting_approval', '=', 0)
        .where('w.due_at', '<=', now)
        .where((eb) => eb.or([eb('w.lease_expires_at', 'is', null), eb('w.lease_expires_at', '<=', now)]))
        .where(({ not, exists, selectFrom }) =>
          not(
            exists(
              selectFrom('workflows as v')
                .select(sql.lit(1).as('blocking'))
                .where('v.phase', '=', 'submitted')
                // A workflow waiting for approval holds no place in its queue: later work goes ahead meanwhile.
                .where('v.awaiting_approval', '=', 0)
                .whereRef('v.tenant', '=', 'w.tenant')
                .whereRef('v.seq', '<>', 'w.seq')
                .where((eb) => eb.or([eb('v.service', '=', ''), eb('w.service', '=', ''), eb('v.service', '=', eb.ref('w.service'))]))
                .where((eb) => eb.or([eb('v.seq', '<', eb.ref('w.seq')), eb('v.lease_owner', 'is not', null)])),
            ),
          ),
        )
        .orderBy('w.seq')
        .limit(options.limit ?? 10);
      if (this.engine === 'postgres') query = query.forUpdate().skipLocked();
      const names = (await query.execute()).map((r) => r.name);
      if (names.length === 0) return [];
      const rows = await tx
        .updateTable('workflows')
        .set({ lease_owner: owner, lease_expires_at: now + leaseMs })
        .where('name', 'in', names)
        .returningAll()
        .execute();
      return rows.map(fromRow).sort((a, b) => a.seq - b.seq);
    });
  }

  /**
   * Inside a step's transaction, before running the step: lock the row (PostgreSQL `FOR UPDATE`) and check that `owner`
   * still holds the lease and `step` is still the next step. A lease past its expiry that nobody took over is still
   * `owner`'s: no other process ran the step, and while this transaction holds the row no claim can take it (claims
   * skip locked rows).
   * @returns the workflow as it stands.
   * @throws LeaseLost when the workflow settled, moved past `step`, or is leased to another process.
   */
  async hold(name: string, owner: string, step: number): Promise<WorkflowRecord> {
    let query = this.db.selectFrom('workflows').selectAll().where('name', '=', name);
    if (this.engine === 'postgres') query = query.forUpdate();
    const row = await query.executeTakeFirst();
    if (!row || row.phase !== 'submitted' || row.next_step !== step || row.lease_owner !== owner) throw new LeaseLost(name, owner);
    return fromRow(row);
  }

  /**
   * Inside a cancellation's transaction: lock the unfinished workflow `name` (PostgreSQL `FOR UPDATE`, so a step of it
   * in progress commits first and the next one finds it settled) and record who asked to stop it, whoever holds its
   * lease.
   * @returns the workflow as it stands, or `undefined` when there is none of that name or it has settled.
   */
  async markCancelled(name: string, by: { userId: string; reason?: string }): Promise<WorkflowRecord | undefined> {
    let query = this.db.selectFrom('workflows').selectAll().where('name', '=', name);
    if (this.engine === 'postgres') query = query.forUpdate();
    const row = await query.executeTakeFirst();
    if (!row || row.phase !== 'submitted') return undefined;
    const set = { cancelled_by: by.userId, cancel_reason: by.reason ?? null };
    await this.db.updateTable('workflows').set(set).where('name', '=', name).where('phase', '=', 'submitted').execute();
    return fromRow({ ...row, ...set });
  }

  /** Forget a cancellation that could not be carried out (the engine refused it), while the workflow is unfinished. */
  async unmarkCancelled(name: string): Promise<void> {
    await this.db.updateTable('workflows').set({ cancelled_by: null, cancel_reason: null }).where('name', '=', name).where('phase', '=', 'submitted').execute();
  }

  /**
   * Leave a promote or abort by hand for the rollout step of an unfinished workflow (issue 22), replacing one not yet
   * acted on, and make its next step due now.
   * @returns false when the workflow does not exist or has settled.
   */
  async command(name: string, command: RolloutCommand): Promise<boolean> {
    const updated = await this.db
      .updateTable('workflows')
      .set({ rollout_command: JSON.stringify(command), due_at: 0 })
      .where('name', '=', name)
      .where('phase', '=', 'submitted')
      .executeTakeFirst();
    return Number(updated.numUpdatedRows) > 0;
  }

  /**
   * Record progress after a step that did not settle the workflow, and renew the lease.
   * @throws LeaseLost when `owner` no longer holds the lease (the transaction must roll back).
   */
  async advance(name: string, owner: string, progress: Progress): Promise<void> {
    const updated = await this.db
      .updateTable('workflows')
      .set({
        steps: JSON.stringify(progress.steps),
        next_step: progress.nextStep,
        message: progress.message,
        due_at: progress.dueAt,
        lease_expires_at: progress.leaseUntil,
        ...(progress.clearCommand ? { rollout_command: null } : {}),
      })
      .where('name', '=', name)
      .where('phase', '=', 'submitted')
      .where('lease_owner', '=', owner)
      .executeTakeFirst();
    if (Number(updated.numUpdatedRows) === 0) throw new LeaseLost(name, owner);
  }

  /**
   * Settle the workflow: its phase, message and finish time; release its lease; delete its arguments; and settle its audit
   * entry (status and message; its tenant uid when given or, if it had none, the live tenant's of its name). All in one
   * transaction, so the audit entry never disagrees with the workflow.
   * @param owner when given, only while `owner` holds the lease (a step settling it); omit it when an outside engine
   *   reports the outcome (Argo).
   * @returns false when the workflow was already settled (nothing changed).
   * @throws LeaseLost when `owner` is given and no longer holds the lease.
   */
  async settle(name: string, outcome: Settlement, owner?: string): Promise<boolean> {
    return inTransaction(this.db, async (tx) => {
      let update = tx
        .updateTable('workflows')
        .set({
          phase: outcome.phase,
          message: outcome.message,
          finished_at: outcome.finishedAt,
          lease_expires_at: null,
          ...(outcome.steps ? { steps: JSON.stringify(outcome.steps) } : {}),
          ...(outcome.nextStep !== undefined ? { next_step: outcome.nextStep } : {}),
          ...(outcome.tenantUid ? { tenant_uid: outcome.tenantUid } : {}),
        })
        .where('name', '=', name)
        .where('phase', '=', 'submitted');
      if (owner !== undefined) update = update.where('lease_owner', '=', owner);
      const updated = await update.returningAll().executeTakeFirst();
      if (!updated) {
        if (owner !== undefined) throw new LeaseLost(name, owner);
        return false;
      }
      await tx.deleteFrom('workflow_arguments').where('workflow_name', '=', name).execute();
      // A workflow submitted before its tenant existed (create-tenant) belongs to the tenant of its name now.
      const tenantUid = updated.tenant_uid ?? (await tenantUidOf(tx, updated.tenant)) ?? null;
      if (updated.tenant_uid === null && tenantUid !== null) {
        await tx.updateTable('workflows').set({ tenant_uid: tenantUid }).where('name', '=', name).execute();
      }
      await tx
        .updateTable('audit_entries')
        .set((eb) => ({
          status: outcome.phase,
          message: outcome.message,
          tenant_uid: outcome.tenantUid ?? eb.fn.coalesce('tenant_uid', sql<string | null>`${tenantUid}`),
        }))
        .where('workflow_name', '=', name)
        .execute();
      const settled = fromRow(updated);
      if (tenantUid !== null) settled.tenantUid = tenantUid;
      await notify(tx, settled, outcome.phase === 'succeeded' ? 'workflow.succeeded' : 'workflow.failed');
      return true;
    });
  }

  /**
   * Keep the steps of a settled workflow as its engine last reported them (the cluster engine fetches a settled Argo
   * Workflow's status once and answers from here afterwards). An unsettled workflow is left alone.
   * @returns false when the workflow is unknown or not settled.
   */
  async keepSteps(name: string, steps: StepProgress[]): Promise<boolean> {
    const updated = await this.db
      .updateTable('workflows')
      .set({ steps: JSON.stringify(steps) })
      .where('name', '=', name)
      .where('phase', '!=', 'submitted')
      .executeTakeFirst();
    return Number(updated.numUpdatedRows) > 0;
  }

  /**
   * Give back every lease `owner` holds (graceful shutdown), so another process takes the workflows over at once
   * instead of after the lease expires. The workflows still count as begun for their queues.
   * @returns how many leases were released.
   */
  async release(owner: string): Promise<number> {
    const updated = await this.db
      .updateTable('workflows')
      .set({ lease_expires_at: 0 })
      .where('phase', '=', 'submitted')
      .where('lease_owner', '=', owner)
      .executeTakeFirst();
    return Number(updated.numUpdatedRows);
  }
}

/**
 * Write the webhook deliveries of a workflow event for the hooks of its tenant (none before the tenant exists), in the
 * transaction that records the submission or the settlement: each happens once, so each event is delivered once.
 */
async function notify(tx: Executor, record: WorkflowRecord, type: 'workflow.submitted' | 'workflow.succeeded' | 'workflow.failed'): Promise<void> {
  if (!record.tenantUid) return;
  const data: WorkflowEventData = {
    workflowName: record.name,
    operation: record.operation,
    phase: record.phase,
    message: record.message,
    team: record.tenant,
    userId: record.userId,
    parameters: record.parameters,
    startedAt: record.startedAt,
  };
  if (record.service) data.service = record.service;
  if (record.finishedAt) data.finishedAt = record.finishedAt;
  const timestamp = type === 'workflow.submitted' ? record.startedAt : (record.finishedAt ?? new Date().toISOString());
  await enqueueEvent(tx, record.tenantUid, { id: randomUUID(), type, timestamp, team: record.tenant, userId: record.userId, data }, `${record.name}/${type}`);
}

/** The uid of the live tenant named `name`, or `undefined`. */
export async function tenantUidOf(db: Executor, name: string): Promise<string | undefined> {
  if (!name) return undefined;
  const row = await db.selectFrom('tenants').select('uid').where('name', '=', name).executeTakeFirst();
  return row?.uid;
}

function fromRow(row: Selectable<WorkflowsTable>): WorkflowRecord {
  const record: WorkflowRecord = {
    seq: row.seq,
    name: row.name,
    operation: row.operation,
    workflowTemplate: row.workflow_template,
    parameters: json<Record<string, string>>(row.parameters),
    userId: row.user_id,
    phase: row.phase,
    message: row.message,
    startedAt: row.started_at,
    steps: json<StepProgress[]>(row.steps),
    nextStep: row.next_step,
    tenant: row.tenant,
    service: row.service,
    dueAt: row.due_at,
    awaitingApproval: Number(row.awaiting_approval) === 1,
  };
  if (row.approval_id !== null) record.approvalId = row.approval_id;
  if (row.finished_at !== null) record.finishedAt = row.finished_at;
  if (row.tenant_uid !== null) record.tenantUid = row.tenant_uid;
  if (row.lease_owner !== null) record.leaseOwner = row.lease_owner;
  if (row.lease_expires_at !== null) record.leaseExpiresAt = row.lease_expires_at;
  if (row.cancelled_by) record.cancelledBy = row.cancelled_by;
  if (row.cancel_reason) record.cancelReason = row.cancel_reason;
  if (row.retry_of) record.retryOf = row.retry_of;
  if (row.rollout_command) record.rolloutCommand = json<RolloutCommand>(row.rollout_command);
  return record;
}
