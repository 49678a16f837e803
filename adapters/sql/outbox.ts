/**
 * The webhook delivery outbox (issue 20 item 5). An event becomes one row per subscribed hook, written by
 * {@link enqueueEvent} inside the transaction that records the event (a feed event, a workflow's submission or
 * settlement), so an event that commits is delivered and one that rolls back is not; the unique key
 * `(hook_id, event_key)` makes a second write of the same event a no-op.
 *
 * Any number of processes on one database dispatch: {@link OutboxStore.claim} leases due rows in one statement (an
 * `UPDATE … WHERE id IN (SELECT … LIMIT n)`, atomic on SQLite; on PostgreSQL the inner select takes
 * `FOR UPDATE SKIP LOCKED` and the outer update re-checks the lease, so two processes never hold one row), and
 * {@link OutboxStore.finish} records an attempt only while its lease is held.
 */
import { randomUUID } from 'node:crypto';
import type { Selectable } from 'kysely';
import { deliveryBody, type WebhookDelivery, type WebhookEvent, type WebhookFormat } from '../../core/governance/webhooks.js';
import type { Engine } from './database.js';
import { json, type Executor } from './executor.js';
import type { WebhookDeliveriesTable } from './schema.js';

/** A delivery row as the dispatcher reads it. */
export type DeliveryRow = Selectable<WebhookDeliveriesTable>;

/**
 * Write one delivery per hook of `tenantUid` that subscribes to `event.type`, each body rendered in its hook's format;
 * nothing for a hook that already has a delivery of `key`. Call it inside the transaction that records the event.
 * @param key what identifies the event for its hooks: a feed event's id, or `<workflow>/<event>`.
 * @returns how many deliveries were written.
 */
export async function enqueueEvent(db: Executor, tenantUid: string, event: WebhookEvent, key: string): Promise<number> {
  const hooks = await db.selectFrom('webhooks').select(['id', 'events', 'format']).where('tenant_uid', '=', tenantUid).execute();
  let written = 0;
  const createdMs = Date.parse(event.timestamp);
  for (const hook of hooks) {
    if (!json<string[]>(hook.events).includes(event.type)) continue;
    const inserted = await db
      .insertInto('webhook_deliveries')
      .values({
        id: randomUUID(),
        hook_id: hook.id,
        tenant_uid: tenantUid,
        team: event.team,
        event_type: event.type,
        event_key: key,
        event_id: event.id,
        body: deliveryBody(event, hook.format as WebhookFormat),
        created_at: event.timestamp,
        created_ms: Number.isFinite(createdMs) ? createdMs : Date.now(),
        attempts: 0,
        outcome: 'pending',
        last_status: null,
        last_error: null,
        next_attempt_at: 0,
        lease_owner: null,
        lease_expires_at: null,
      })
      .onConflict((oc) => oc.columns(['hook_id', 'event_key']).doNothing())
      .executeTakeFirst();
    written += Number(inserted.numInsertedOrUpdatedRows ?? 0);
  }
  return written;
}

/** The result of one attempt. */
export interface AttemptResult {
  outcome: 'pending' | 'delivered' | 'failed';
  /** HTTP status, or null when nothing answered. */
  status: number | null;
  error: string | null;
  /** Milliseconds since the epoch of the next attempt while pending. */
  nextAttemptAt: number | null;
}

/** Reads and writes of the outbox; bound to the database. */
export class OutboxStore {
  constructor(
    private readonly db: Executor,
    private readonly engine: Engine,
  ) {}

  /**
   * Lease up to `limit` due deliveries (pending, `next_attempt_at <= now`, lease free or expired) to `owner` until
   * `now + leaseMs`, oldest due first.
   * @param now milliseconds since the epoch.
   */
  async claim(options: { owner: string; now: number; leaseMs: number; limit: number }): Promise<DeliveryRow[]> {
    const { owner, now, leaseMs, limit } = options;
    const free = (eb: any) => eb.or([eb('lease_expires_at', 'is', null), eb('lease_expires_at', '<=', now)]);
    // A read first: the idle case (every poll of every process) then takes no write lock, which on SQLite would
    // make workflow steps of other processes wait.
    const any = await this.db
      .selectFrom('webhook_deliveries')
      .select('id')
      .where('outcome', '=', 'pending')
      .where('next_attempt_at', '<=', now)
      .where(free)
      .limit(1)
      .executeTakeFirst();
    if (!any) return [];
    let due = this.db
      .selectFrom('webhook_deliveries')
      .select('id')
      .where('outcome', '=', 'pending')
      .where('next_attempt_at', '<=', now)
      .where(free)
      .orderBy('next_attempt_at')
      .limit(limit);
    if (this.engine === 'postgres') due = due.forUpdate().skipLocked();
    return this.db
      .updateTable('webhook_deliveries')
      .set({ lease_owner: owner, lease_expires_at: now + leaseMs })
      .where('id', 'in', due)
      .where('outcome', '=', 'pending')
      .where(free)
      .returningAll()
      .execute();
  }

  /**
   * Record an attempt of delivery `id` (one more attempt, its status, what comes next) and free its lease, only while
   * `owner` holds it.
   * @returns false when the lease was lost (another process took the row over): nothing was recorded.
   */
  async finish(id: string, owner: string, result: AttemptResult): Promise<boolean> {
    const updated = await this.db
      .updateTable('webhook_deliveries')
      .set((eb) => ({
        attempts: eb('attempts', '+', 1),
        outcome: result.outcome,
        last_status: result.status,
        last_error: result.error,
        next_attempt_at: result.nextAttemptAt,
        lease_expires_at: null,
      }))
      .where('id', '=', id)
      .where('lease_owner', '=', owner)
      .where('outcome', '=', 'pending')
      .executeTakeFirst();
    return Number(updated.numUpdatedRows) > 0;
  }

  /**
   * Delete finished deliveries (delivered or given up) of events older than `beforeMs` (milliseconds since the epoch).
   * @returns how many were deleted.
   */
  async prune(beforeMs: number): Promise<number> {
    const deleted = await this.db
      .deleteFrom('webhook_deliveries')
      .where('outcome', '<>', 'pending')
      .where('created_ms', '<', beforeMs)
      .executeTakeFirst();
    return Number(deleted.numDeletedRows);
  }

  /** The newest deliveries of a tenant, newest first, at most `limit`. */
  async list(tenantUid: string, limit: number): Promise<WebhookDelivery[]> {
    const rows = await this.db
      .selectFrom('webhook_deliveries')
      .selectAll()
      .where('tenant_uid', '=', tenantUid)
      .orderBy('seq', 'desc')
      .limit(limit)
      .execute();
    return rows.map((row) => ({
      id: row.id,
      hookId: row.hook_id,
      event: row.event_type,
      eventId: row.event_id,
      createdAt: row.created_at,
      attempts: row.attempts,
      lastStatusCode: row.last_status,
      lastError: row.last_error,
      nextAttemptAt: row.outcome === 'pending' && row.next_attempt_at !== null ? new Date(row.next_attempt_at).toISOString() : null,
      outcome: row.outcome,
    }));
  }
}
