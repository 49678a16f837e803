/**
 * Tenant policies and the tenant event feed in SQL: {@link GovernanceStore} (issue 20). Both are keyed by the tenant's
 * identity (`tenant_uid`); a policy change and its `policy.changed` event commit together, and so do an event and its
 * webhook deliveries (`outbox.ts`).
 */
import { randomUUID } from 'node:crypto';
import type { Selectable } from 'kysely';
import type { TenantEvent, TenantEventBody } from '../../core/governance/events.js';
import type { TenantPolicy } from '../../core/governance/policy.js';
import type { GovernanceStore, NewTenantEvent, TenantRef } from '../../core/ports.js';
import { inTransaction, json, type Executor } from './executor.js';
import { enqueueEvent } from './outbox.js';
import type { TenantEventsTable } from './schema.js';

function eventOf(row: Selectable<TenantEventsTable>): TenantEvent {
  return {
    id: row.id,
    timestamp: row.timestamp,
    team: row.team,
    userId: row.user_id,
    ...({ type: row.type, data: json(row.data) } as TenantEventBody),
  };
}

/** The governance store; bound to the database or to one transaction. */
export class SqlGovernanceStore implements GovernanceStore {
  constructor(private readonly db: Executor) {}

  async policy(tenant: TenantRef): Promise<TenantPolicy> {
    return policyIn(this.db, tenant);
  }

  async setPolicy(tenant: TenantRef, policy: TenantPolicy, by: { userId: string; timestamp: string }): Promise<TenantEvent> {
    return inTransaction(this.db, async (tx) => {
      const old = await policyIn(tx, tenant);
      const row = { team: tenant.name, policy: JSON.stringify(policy), updated_at: by.timestamp, updated_by: by.userId };
      await tx
        .insertInto('tenant_policies')
        .values({ tenant_uid: tenant.uid, ...row })
        .onConflict((oc) => oc.column('tenant_uid').doUpdateSet(row))
        .execute();
      return recordIn(tx, tenant, { type: 'policy.changed', data: { old, new: policy }, ...by });
    });
  }

  async record(tenant: TenantRef, event: NewTenantEvent): Promise<TenantEvent> {
    return inTransaction(this.db, (tx) => recordIn(tx, tenant, event));
  }

  async events(tenant: TenantRef, limit: number): Promise<TenantEvent[]> {
    const rows = await this.db
      .selectFrom('tenant_events')
      .selectAll()
      .where('tenant_uid', '=', tenant.uid)
      .orderBy('seq', 'desc')
      .limit(limit)
      .execute();
    return rows.map(eventOf);
  }
}

async function policyIn(db: Executor, tenant: TenantRef): Promise<TenantPolicy> {
  const row = await db.selectFrom('tenant_policies').select('policy').where('tenant_uid', '=', tenant.uid).executeTakeFirst();
  return row ? json<TenantPolicy>(row.policy) : {};
}

/**
 * Append `event` to the tenant's feed and, in the same transaction (call it in one), write its webhook deliveries:
 * every feed event goes to the hooks subscribed to its `type`, whichever code recorded it.
 */
export async function recordIn(db: Executor, tenant: TenantRef, event: NewTenantEvent): Promise<TenantEvent> {
  const stored = { id: randomUUID(), team: tenant.name, ...event } as TenantEvent;
  await db
    .insertInto('tenant_events')
    .values({
      id: stored.id,
      tenant_uid: tenant.uid,
      team: tenant.name,
      type: event.type,
      user_id: event.userId,
      timestamp: event.timestamp,
      data: JSON.stringify(event.data),
    })
    .execute();
  const { id, timestamp, team, userId, type, data } = stored;
  await enqueueEvent(db, tenant.uid, { id, type, timestamp, team, userId, data }, id);
  return stored;
}
