/**
 * The OAuth authorization server's records in SQL ({@link OAuthStore}; issue 12): codes, refresh tokens, grants,
 * sessions, interactions, registered clients and device codes, shared by every process on the database. A record is a
 * row keyed by (`kind`, `id`) with its payload as JSON; the fields the store looks by are columns of their own.
 *
 * `consume` is one conditional statement (`consumed_at` is set only where it is still null), and `revokeGrant` one
 * delete by `grant_id`, so a family is revoked at once on both engines. Expired rows are treated as absent and removed
 * by {@link SqlOAuthStore.sweep}.
 */
import type { OAuthStore } from '../../core/ports.js';
import type { Executor } from './executor.js';
import { json } from './executor.js';

const text = (value: unknown): string | null => (typeof value === 'string' ? value : null);

/** The OAuth store; bound to the database or to one transaction. */
export class SqlOAuthStore implements OAuthStore {
  constructor(
    private readonly db: Executor,
    private readonly now: () => number,
  ) {}

  async upsert(kind: string, id: string, payload: Record<string, unknown>, expiresInSeconds?: number): Promise<void> {
    const row = {
      payload: JSON.stringify(payload),
      grant_id: text(payload.grantId),
      uid: text(payload.uid),
      user_code: text(payload.userCode),
      consumed_at: typeof payload.consumed === 'number' ? payload.consumed : null,
      expires_at: expiresInSeconds === undefined ? null : this.now() + expiresInSeconds * 1000,
    };
    await this.db
      .insertInto('oauth_records')
      .values({ kind, id, ...row })
      .onConflict((oc) => oc.columns(['kind', 'id']).doUpdateSet(row))
      .execute();
  }

  async find(kind: string, id: string): Promise<Record<string, unknown> | undefined> {
    const row = await this.live().where('kind', '=', kind).where('id', '=', id).executeTakeFirst();
    return row && payloadOf(row);
  }

  async findBy(kind: string, field: 'uid' | 'userCode', value: string): Promise<Record<string, unknown> | undefined> {
    const row = await this.live()
      .where('kind', '=', kind)
      .where(field === 'uid' ? 'uid' : 'user_code', '=', value)
      .executeTakeFirst();
    return row && payloadOf(row);
  }

  async consume(kind: string, id: string): Promise<void> {
    await this.db
      .updateTable('oauth_records')
      .set({ consumed_at: Math.floor(this.now() / 1000) })
      .where('kind', '=', kind)
      .where('id', '=', id)
      .where('consumed_at', 'is', null)
      .execute();
  }

  async destroy(kind: string, id: string): Promise<void> {
    await this.db.deleteFrom('oauth_records').where('kind', '=', kind).where('id', '=', id).execute();
  }

  async revokeGrant(grantId: string): Promise<void> {
    await this.db.deleteFrom('oauth_records').where('grant_id', '=', grantId).execute();
  }

  async touch(kind: string, id: string, expiresInSeconds: number, slackSeconds: number): Promise<void> {
    const at = this.now();
    const until = at + expiresInSeconds * 1000;
    // One conditional statement: a live record whose expiry is not already recent enough (or that had none).
    await this.db
      .updateTable('oauth_records')
      .set({ expires_at: until })
      .where('kind', '=', kind)
      .where('id', '=', id)
      .where((eb) => eb.or([eb('expires_at', 'is', null), eb.and([eb('expires_at', '>', at), eb('expires_at', '<', until - slackSeconds * 1000)])]))
      .execute();
  }

  /** Delete records that expired at or before now. @returns how many. */
  async sweep(): Promise<number> {
    const deleted = await this.db.deleteFrom('oauth_records').where('expires_at', '<=', this.now()).executeTakeFirst();
    return Number(deleted.numDeletedRows);
  }

  /** Rows that have not expired. */
  private live() {
    const at = this.now();
    return this.db
      .selectFrom('oauth_records')
      .select(['payload', 'consumed_at'])
      .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', at)]));
  }
}

/** The payload as stored, with `consumed` from its column (set by {@link SqlOAuthStore.consume}). */
function payloadOf(row: { payload: string; consumed_at: number | string | null }): Record<string, unknown> {
  const payload = json<Record<string, unknown>>(row.payload);
  // PostgreSQL returns bigint as text.
  if (row.consumed_at !== null) payload.consumed = Number(row.consumed_at);
  return payload;
}
