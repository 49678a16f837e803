/**
 * Opening the record store's database (DESIGN "Where things live"; issue 9): SQLite through better-sqlite3 at
 * `<dataDir>/pds.db` by default, PostgreSQL through `pg` when a `postgres://` URL is given (`PDS_DATABASE_URL`). Both
 * behind Kysely, with the same schema and migrations (`migrations.ts`), applied here at open.
 *
 * SQLite runs in WAL mode with `synchronous=FULL`: every commit fsyncs the write-ahead log before it returns, so an
 * acknowledged write survives a killed process **and** a power loss or kernel crash. (`NORMAL` would survive a killed
 * process only: WAL commits are fsynced at checkpoints, so the last transactions before a power loss can vanish.) It
 * costs one fsync per transaction, measured here at 0.8 ms median and 10 ms p99 (BENCHMARKS.md) — affordable for the
 * rates pds writes at, and the same promise `state.json` made (fsync on every change).
 *
 * One process writes a SQLite file at a time (the sandbox's data-directory lock sees to it); PostgreSQL is shared by
 * every replica. Kysely's SQLite driver runs one statement at a time on one connection, so a transaction there is
 * never interleaved with other work of the process.
 */
import path from 'node:path';
import { mkdirSync } from 'node:fs';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect } from './kysely.js';
import { loadPostgresDriver } from './postgres-driver.js';
import { silentLogger, type Logger } from '../../core/logger.js';
import { migrateToLatest } from './migrations.js';
import type { Database } from './schema.js';

/** Which SQL engine holds the records. */
export type Engine = 'sqlite' | 'postgres';

/** File name of the SQLite database inside the data directory. */
export const SQLITE_FILE = 'pds.db';

/** Where the records are and how to reach them. */
export interface DatabaseOptions {
  /** `PDS_DATA_DIR`: where `pds.db` lives when no `databaseUrl` is given (created when missing). */
  dataDir: string;
  /** `PDS_DATABASE_URL` (`postgres://…` or `postgresql://…`): use PostgreSQL instead of SQLite. */
  databaseUrl?: string;
  /** PostgreSQL connections per process (default 10). */
  poolSize?: number;
  /** Milliseconds a PostgreSQL statement may run before it is cancelled (default 10,000). */
  statementTimeoutMs?: number;
  /**
   * Milliseconds a SQLite write waits for another connection's write lock before failing `SQLITE_BUSY` (default 5,000).
   * better-sqlite3 waits synchronously, so this also bounds how long such a wait blocks the process.
   */
  busyTimeoutMs?: number;
  log?: Logger;
}

/** An open database: the Kysely instance, its engine, and `close()`. */
export interface OpenDatabase {
  readonly engine: Engine;
  readonly db: Kysely<Database>;
  /** Where the records are, for start-up messages: the SQLite file, or the PostgreSQL URL without its password. */
  readonly location: string;
  /** Close every connection. */
  close(): Promise<void>;
}

/** PostgreSQL's `int8` (OID 20) as a JavaScript number: our bigints are milliseconds and sequence numbers (< 2^53). */
const INT8_OID = 20;

/**
 * Open the database and apply pending migrations.
 * @throws Error when the SQLite file cannot be opened, PostgreSQL cannot be reached within 5 s, or a migration fails;
 *   the message names where the records were to be.
 */
export async function openDatabase(options: DatabaseOptions): Promise<OpenDatabase> {
  const log = options.log ?? silentLogger;
  const opened = options.databaseUrl ? await openPostgres(options.databaseUrl, options, log) : openSqlite(options.dataDir, options.busyTimeoutMs ?? 5_000);
  try {
    await migrateToLatest(opened.db, opened.engine);
  } catch (err) {
    await opened.close().catch(() => undefined);
    throw new Error(`cannot open the record store at ${opened.location}: ${err instanceof Error ? err.message : String(err)}`, {
      cause: err,
    });
  }
  return opened;
}

function openSqlite(dataDir: string, busyTimeoutMs: number): OpenDatabase {
  mkdirSync(dataDir, { recursive: true });
  const file = path.join(path.resolve(dataDir), SQLITE_FILE);
  let sqlite: BetterSqlite3.Database;
  try {
    sqlite = new BetterSqlite3(file);
    sqlite.pragma('journal_mode = WAL');
    sqlite.pragma('synchronous = FULL');
    sqlite.pragma('foreign_keys = ON');
    // Readers never wait in WAL mode; a writer waits this long for another connection's write (a second process).
    sqlite.pragma(`busy_timeout = ${Math.max(0, Math.floor(busyTimeoutMs))}`);
  } catch (err) {
    throw new Error(`cannot open the record store ${file}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite }) });
  return { engine: 'sqlite', db, location: file, close: () => db.destroy() };
}

async function openPostgres(url: string, options: DatabaseOptions, log: Logger): Promise<OpenDatabase> {
  const pg = await loadPostgresDriver();
  const statementTimeout = options.statementTimeoutMs ?? 10_000;
  const pool = new pg.Pool({
    connectionString: url,
    max: options.poolSize ?? 10,
    connectionTimeoutMillis: 5_000,
    idleTimeoutMillis: 30_000,
    // Server-side limit, and a client-side one a little later in case the server does not answer at all.
    statement_timeout: statementTimeout,
    query_timeout: statementTimeout + 2_000,
    idle_in_transaction_session_timeout: 60_000,
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        oid === INT8_OID ? (value: string) => Number(value) : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
    },
  });
  // An idle connection dropped by the server (restart, failover) emits here; without a listener it would crash pds.
  // The pool replaces it on the next query, so readiness recovers by itself.
  pool.on('error', (err) => log.warn({ err }, 'record store: an idle PostgreSQL connection failed; it will be replaced'));
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  return { engine: 'postgres', db, location: redactPassword(url), close: () => db.destroy() };
}

/** The URL with its password replaced by `***`. */
export function redactPassword(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return 'PostgreSQL (PDS_DATABASE_URL)';
  }
}
