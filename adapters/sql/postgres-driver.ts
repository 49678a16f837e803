/**
 * The `pg` driver, imported the first time a PostgreSQL record store is opened: a pds on SQLite (the default) never
 * loads it (issue 23 item 1: load what the configuration uses).
 */
import type pg from 'pg';

let driver: typeof pg | undefined;

/** Import `pg` (once) and return it. */
export async function loadPostgresDriver(): Promise<typeof pg> {
  driver ??= (await import('pg')).default;
  return driver;
}

/** `pg` if a PostgreSQL store was opened in this process, else `undefined` (so no error can have come from it). */
export function loadedPostgresDriver(): typeof pg | undefined {
  return driver;
}
