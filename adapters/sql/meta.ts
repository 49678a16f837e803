/**
 * Facts about the store itself, as key/value text in `pds_meta`: the `state.json` import marker (committed with the
 * imported records), the readiness probe's write.
 */
import type { Executor } from './executor.js';

/** Key/value facts; bound to the database or to one transaction. */
export class MetaStore {
  constructor(private readonly db: Executor) {}

  /** The value of `key`, or `undefined`. */
  async get(key: string): Promise<string | undefined> {
    const row = await this.db.selectFrom('pds_meta').select('value').where('key', '=', key).executeTakeFirst();
    return row?.value;
  }

  /** Set `key` to `value` (insert or replace). */
  async put(key: string, value: string): Promise<void> {
    await this.db
      .insertInto('pds_meta')
      .values({ key, value })
      .onConflict((oc) => oc.column('key').doUpdateSet({ value }))
      .execute();
  }
}
