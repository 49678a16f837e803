/**
 * Single-use claims in SQL ({@link OnceStore}): a confirmation value claimed by one pds process is claimed for every
 * process on the same database. The claim is one statement — insert the key, or take over a row whose claim has
 * expired — so it is atomic on both engines: of two processes claiming one key at once, exactly one gets `true`.
 */
import type { OnceStore } from '../../core/ports.js';
import type { Executor } from './executor.js';

/** The once-store; bound to the database or to one transaction. */
export class SqlOnceStore implements OnceStore {
  constructor(
    private readonly db: Executor,
    private readonly now: () => number,
  ) {}

  /**
   * True the first time `key` is claimed within `ttlSeconds`, false afterwards (until the claim expires).
   * @throws RangeError when `ttlSeconds` is not a positive integer (the contract of every once-store).
   */
  async claim(key: string, ttlSeconds: number): Promise<boolean> {
    if (!Number.isInteger(ttlSeconds) || ttlSeconds < 1) throw new RangeError('ttlSeconds must be a positive integer');
    const at = this.now();
    const row = await this.db
      .insertInto('once_claims')
      .values({ key, expires_at: at + ttlSeconds * 1000 })
      .onConflict((oc) =>
        oc
          .column('key')
          .doUpdateSet((eb) => ({ expires_at: eb.ref('excluded.expires_at') }))
          .where('once_claims.expires_at', '<=', at),
      )
      .returning('key')
      .executeTakeFirst();
    return row !== undefined;
  }

  /**
   * Record a claim made elsewhere (the `state.json` import) that holds until `expiresAt` (milliseconds since the
   * epoch); an existing claim keeps the later expiry.
   */
  async restore(key: string, expiresAt: number): Promise<void> {
    await this.db
      .insertInto('once_claims')
      .values({ key, expires_at: expiresAt })
      .onConflict((oc) => oc.column('key').doUpdateSet({ expires_at: expiresAt }).where('once_claims.expires_at', '<', expiresAt))
      .execute();
  }

  /** Delete claims that expired at or before now. @returns how many. */
  async sweep(): Promise<number> {
    const deleted = await this.db.deleteFrom('once_claims').where('expires_at', '<=', this.now()).executeTakeFirst();
    return Number(deleted.numDeletedRows);
  }
}
