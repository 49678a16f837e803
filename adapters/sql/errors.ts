/**
 * Database failures as {@link PlatformError}s (STYLE "Adapters translate"): what means "the database cannot be reached
 * or written right now" becomes `Unavailable` (503, retry), anything else from the database `Upstream` (502), with the
 * driver's error as `cause` for the log. Errors of our own tree pass through unchanged.
 */
import BetterSqlite3 from 'better-sqlite3';
import { loadedPostgresDriver } from './postgres-driver.js';
import { isPlatformError, Unavailable, Upstream, type PlatformError } from '../../core/errors.js';

/** SQLite result codes (better-sqlite3's `SqliteError.code`) that mean the file cannot be used right now. */
const SQLITE_UNAVAILABLE = /^SQLITE_(BUSY|LOCKED|IOERR|FULL|READONLY|CANTOPEN|PROTOCOL|NOMEM|NOTADB|CORRUPT)/;

/**
 * PostgreSQL SQLSTATEs that mean "not now": connection exceptions (08), insufficient resources such as a full disk or
 * too many connections (53), operator intervention such as a shutdown or a statement timeout (57), a read-only server
 * (25006), and serialization failures and deadlocks worth retrying (40001, 40P01).
 */
const PG_UNAVAILABLE = /^(08|53|57)|^(25006|40001|40P01)$/;

/** Socket-level failures reaching PostgreSQL. */
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EPIPE', 'EAI_AGAIN']);

/** Failures reported without a code: the connection dropped, never came up in time, or was closed. */
const CONNECTION_MESSAGES =
  /^(Connection terminated|timeout exceeded when trying to connect|Query read timeout|Client has encountered a connection error|driver has already been destroyed|The database connection is not open)/i;

const UNAVAILABLE_MESSAGE = 'the record store cannot be reached or written right now; retry shortly';

/** Whether `err` came from the database layer (driver, pool, Kysely) rather than from code running in a transaction. */
export function isDatabaseError(err: unknown): boolean {
  const pg = loadedPostgresDriver();
  if (err instanceof BetterSqlite3.SqliteError || (pg && err instanceof pg.DatabaseError)) return true;
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && NETWORK_CODES.has(code)) return true;
  return err instanceof Error && CONNECTION_MESSAGES.test(err.message);
}

/** Whether `err` means the database is unreachable or unwritable for now (as opposed to a failed statement). */
export function isUnavailable(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  if (err instanceof BetterSqlite3.SqliteError) return typeof code === 'string' && SQLITE_UNAVAILABLE.test(code);
  const pg = loadedPostgresDriver();
  if (pg && err instanceof pg.DatabaseError) return typeof code === 'string' && PG_UNAVAILABLE.test(code);
  return isDatabaseError(err);
}

/**
 * The error to show for a failure of a store call.
 * @returns `err` itself when it is a PlatformError; `Unavailable` when the database cannot be reached or written;
 *   `Upstream` for any other failure (a statement the database refused).
 */
export function translateError(err: unknown): PlatformError {
  if (isPlatformError(err)) return err;
  if (isUnavailable(err)) return new Unavailable(UNAVAILABLE_MESSAGE, { cause: err });
  return new Upstream('the record store failed to carry out a statement', { cause: err });
}

/**
 * `store` with every method's database failure passed through {@link translateError}; other errors (a PlatformError
 * the store throws, a RangeError for a bad argument) pass unchanged. Methods called by the store on itself are not
 * wrapped (they run on the target), so an error is translated once, at the edge.
 */
export function translated<T extends object>(store: T): T {
  return new Proxy(store, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        try {
          const result: unknown = value.apply(target, args);
          return result instanceof Promise ? result.catch((err: unknown) => Promise.reject(asStoreError(err))) : result;
        } catch (err) {
          throw asStoreError(err);
        }
      };
    },
  });
}

/** Database failures translated, anything else as it is. */
export function asStoreError(err: unknown): unknown {
  return isDatabaseError(err) ? translateError(err) : err;
}
