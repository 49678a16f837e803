/**
 * What a store is bound to: the database itself (each call commits on its own) or one transaction (everything commits
 * together, see `RecordStore.transaction`). Kysely's `Transaction` is a `Kysely`, so both have one type.
 */
import type { Kysely } from 'kysely';
import type { Database } from './schema.js';

/** The database, or a transaction on it. */
export type Executor = Kysely<Database>;

/**
 * Run `fn` in a transaction: `db`'s own when it is one already, else a new one.
 * @returns what `fn` returns, once committed.
 */
export function inTransaction<T>(db: Executor, fn: (tx: Executor) => Promise<T>): Promise<T> {
  return db.isTransaction ? fn(db) : db.transaction().execute(fn);
}

/** Parse a JSON column written by the store. */
export function json<T>(text: string): T {
  return JSON.parse(text) as T;
}
