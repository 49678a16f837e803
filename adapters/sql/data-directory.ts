/**
 * The start-up refusal of issue 7 item 13: a data directory that holds files of an earlier pds (its log journal, an
 * imported `state.json`) but not the records they belong with has lost its store — a deleted or
 * unmounted `pds.db`, a missing `state.json`. Starting empty there would hide that and, worse, compact the journal of
 * services that "no longer exist". pds refuses instead, names the file it found and how to start fresh, and deletes
 * nothing. The platform factory calls {@link checkDataDirectory} before it opens the store.
 */
import { randomUUID } from 'node:crypto';
import { mkdir, readdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Engine } from './database.js';
import { SQLITE_FILE } from './database.js';
import { LEGACY_STATE_FILE, IMPORTED_STATE_FILE } from './state-import.js';

/** Files only a pds that had records writes into its data directory, in the order they are named in a refusal. */
/**
 * `jwt-secret` is not one: `pds token` (and an operator preparing a directory) writes it before any pds has run there.
 */
const TRACES = ['pds-records.json', 'logs.jsonl', IMPORTED_STATE_FILE, 'logs.jsonl.imported', `${SQLITE_FILE}-wal`, `${SQLITE_FILE}-shm`];

/** The data directory holds pds files but not its store; `file` is the one that gave it away. */
export class DataDirectoryError extends Error {
  constructor(
    readonly dataDir: string,
    readonly file: string,
    message: string,
  ) {
    super(message);
    this.name = 'DataDirectoryError';
  }
}

/**
 * Refuse to start on a data directory whose records are missing.
 * - SQLite: the directory holds a trace of an earlier pds (`pds-records.json`, `logs.jsonl`, `state.json.imported`, `logs.jsonl.imported`,
 *   `pds.db-wal`/`-shm`) but neither `pds.db` nor a `state.json` to import.
 * - PostgreSQL: the directory holds `pds.db`, records that PostgreSQL does not have.
 * A directory that does not exist or holds none of these is fine (a first start).
 * @throws DataDirectoryError naming the file found and how to start fresh; nothing is deleted.
 */
export async function checkDataDirectory(options: { dataDir: string; engine: Engine }): Promise<void> {
  const dir = path.resolve(options.dataDir);
  let names: Set<string>;
  try {
    names = new Set(await readdir(dir));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw err;
  }
  if (options.engine === 'postgres') {
    if (names.has(SQLITE_FILE)) {
      throw new DataDirectoryError(
        dir,
        SQLITE_FILE,
        `PDS_DATA_DIR ${dir} holds ${SQLITE_FILE}, the SQLite records of an earlier pds, but PDS_DATABASE_URL selects ` +
          `PostgreSQL, which does not have them; pds will not start without them. Unset PDS_DATABASE_URL to keep using ` +
          `${SQLITE_FILE}, or, to start fresh on PostgreSQL, move it aside (mv ${path.join(dir, SQLITE_FILE)} ` +
          `${path.join(dir, `${SQLITE_FILE}.old`)}). Nothing was deleted.`,
      );
    }
    return;
  }
  if (names.has(SQLITE_FILE) || names.has(LEGACY_STATE_FILE)) return;
  const trace = TRACES.find((name) => names.has(name));
  if (!trace) return;
  throw new DataDirectoryError(
    dir,
    trace,
    `PDS_DATA_DIR ${dir} holds ${trace} from an earlier pds but not its records (${SQLITE_FILE}, or a ${LEGACY_STATE_FILE} ` +
      `to import); pds will not start empty beside them. Restore ${SQLITE_FILE} (with its -wal file, if any) from a ` +
      `backup, or, to start fresh, move the directory aside (mv ${dir} ${dir}.old) and start again. Nothing was deleted.`,
  );
}

/** The file that says which records a data directory belongs with (see {@link claimDataDirectory}). */
export const RECORDS_FILE = 'pds-records.json';
/** `pds_meta` key of the store's identity. */
const STORE_ID = 'store_id';

/**
 * Tie the data directory to the open record store, so that losing the store later is noticed instead of starting
 * empty (issue 7 item 13): the store gets an identity (`pds_meta.store_id`, made once), and `<dataDir>/pds-records.json`
 * names it with the engine and location. Call right after opening (and importing).
 * - The file is absent: written (a first start, or a directory from before the file existed).
 * - It names this store: nothing to do.
 * - It names another store, or this store has no identity yet although the file names one (an empty database at
 *   PDS_DATABASE_URL where the records were): refuse.
 * @throws DataDirectoryError naming the file, both stores and how to start fresh; nothing is deleted.
 */
export async function claimDataDirectory(
  store: { engine: Engine; location: string; meta: { get(key: string): Promise<string | undefined>; put(key: string, value: string): Promise<void> } },
  dataDir: string,
): Promise<void> {
  const dir = path.resolve(dataDir);
  const file = path.join(dir, RECORDS_FILE);
  let claimed: { storeId?: string; engine?: string; location?: string } | undefined;
  try {
    claimed = JSON.parse(await readFile(file, 'utf8')) as typeof claimed;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT' && !(err instanceof SyntaxError)) throw err;
  }
  let storeId = await store.meta.get(STORE_ID);
  if (claimed?.storeId && claimed.storeId !== storeId) {
    throw new DataDirectoryError(
      dir,
      RECORDS_FILE,
      `PDS_DATA_DIR ${dir} belongs with the records of store ${claimed.storeId} (${claimed.engine ?? '?'} at ${claimed.location ?? '?'}, ` +
        `named in ${file}), but ${store.location} ${storeId ? `holds store ${storeId}` : 'holds no records of pds'}; pds will not start ` +
        `on records that are not its own. Point PDS_DATABASE_URL (or PDS_DATA_DIR) at the records this directory belongs with, or, ` +
        `to start fresh with these, move ${file} aside (mv ${file} ${file}.old). Nothing was deleted.`,
    );
  }
  if (!storeId) {
    storeId = randomUUID();
    await store.meta.put(STORE_ID, storeId);
  }
  if (claimed?.storeId === storeId) return;
  await mkdir(dir, { recursive: true });
  const temp = `${file}.${process.pid}.tmp`;
  await writeFile(temp, JSON.stringify({ storeId, engine: store.engine, location: store.location, since: new Date().toISOString() }, null, 2) + '\n');
  await rename(temp, file);
}
