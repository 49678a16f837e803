/**
 * A tenant's webhooks in SQL (issue 20 item 5), by tenant identity and in the order the tenant listed them. The
 * secret column holds what the caller sealed (`adapters/webhooks/secrets.ts`); this store never sees a plaintext
 * secret. A change of the list and its `webhooks.changed` feed event commit together.
 */
import type { TenantEvent } from '../../core/governance/events.js';
import type { WebhookEventType, WebhookFormat } from '../../core/governance/webhooks.js';
import type { NewTenantEvent, TenantRef } from '../../core/ports.js';
import { inTransaction, json, type Executor } from './executor.js';
import { recordIn } from './governance.js';

/** A hook as stored: its secret sealed. */
export interface StoredWebhook {
  id: string;
  url: string;
  events: WebhookEventType[];
  format: WebhookFormat;
  /** Sealed (a compact JWE); open it with the server secret. */
  sealedSecret: string;
  /** ISO 8601 UTC. */
  createdAt: string;
  createdBy: string;
}

/** The webhook store; bound to the database or to one transaction. */
export class WebhookStore {
  constructor(private readonly db: Executor) {}

  /** The tenant's hooks, in the order they were listed. */
  async list(tenantUid: string): Promise<StoredWebhook[]> {
    const rows = await this.db.selectFrom('webhooks').selectAll().where('tenant_uid', '=', tenantUid).orderBy('position').execute();
    return rows.map(hookOf);
  }

  /** One hook by id, or `undefined` (removed). */
  async get(id: string): Promise<StoredWebhook | undefined> {
    const row = await this.db.selectFrom('webhooks').selectAll().where('id', '=', id).executeTakeFirst();
    return row && hookOf(row);
  }

  /**
   * Replace the tenant's hooks with `hooks` and record `event` in its feed, in one transaction. Pending deliveries of
   * removed hooks stay listed; the dispatcher gives them up.
   * @returns the event recorded.
   */
  async replace(tenant: TenantRef, hooks: StoredWebhook[], event: NewTenantEvent): Promise<TenantEvent> {
    return inTransaction(this.db, async (tx) => {
      await tx.deleteFrom('webhooks').where('tenant_uid', '=', tenant.uid).execute();
      for (const [position, hook] of hooks.entries()) {
        await tx
          .insertInto('webhooks')
          .values({
            id: hook.id,
            tenant_uid: tenant.uid,
            team: tenant.name,
            position,
            url: hook.url,
            events: JSON.stringify(hook.events),
            format: hook.format,
            secret: hook.sealedSecret,
            created_at: hook.createdAt,
            created_by: hook.createdBy,
          })
          .execute();
      }
      return recordIn(tx, tenant, event);
    });
  }
}

function hookOf(row: {
  id: string;
  url: string;
  events: string;
  format: 'json' | 'slack';
  secret: string;
  created_at: string;
  created_by: string;
}): StoredWebhook {
  return {
    id: row.id,
    url: row.url,
    events: json<WebhookEventType[]>(row.events),
    format: row.format,
    sealedSecret: row.secret,
    createdAt: row.created_at,
    createdBy: row.created_by,
  };
}
