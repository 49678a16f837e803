/**
 * The sandbox's durable state: `<dataDir>/state.json`, rewritten atomically (temp file, fsync, rename, fsync of the
 * directory) after every mutation (SPEC "loses nothing"; DESIGN "sandbox: atomic writes; nothing lost on restart").
 *
 * Mutations run one at a time on a copy of the state, so a mutation that throws changes nothing. Writes go through one
 * queue; mutations that arrive while a write is in flight are committed together by the next write (group commit), and
 * each mutation resolves only once a write that contains it has reached the disk.
 *
 * One process owns a data directory at a time (`<dataDir>/lock` holds its pid); a second open fails rather than letting
 * two writers race.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, open, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Unavailable } from '../../core/errors.js';
import { emptyState, SandboxState } from './state.js';

const STATE_FILE = 'state.json';
const LOCK_FILE = 'lock';
/** Written and removed by {@link StateStore.probe}. */
const PROBE_FILE = 'ready-probe';
/** Temp files are `<target>.<12 hex digits>.tmp`; any left behind by a crash are removed at open. */
const TEMP_SUFFIX = '.tmp';

/** Data directories opened by this process, so a second open in the same process is refused too. */
const openDirs = new Set<string>();

/**
 * A state write failed (disk full, permissions, …): 503 to a caller, with the file and the system error as `cause`
 * for the log. The change is kept in memory and the next write retries it.
 */
export class StateWriteError extends Unavailable {
  constructor(file: string, cause: unknown) {
    super('the sandbox could not write its state to disk; retry shortly', {
      cause: new Error(`${file}: ${cause instanceof Error ? cause.message : String(cause)}`, { cause }),
    });
  }
}

/**
 * Write `data` to `file` atomically: a reader (or a restart) sees the old content or the new, never a mix.
 * @param file absolute path of the target.
 */
export async function writeFileAtomic(file: string, data: string): Promise<void> {
  const temp = `${file}.${randomBytes(6).toString('hex')}${TEMP_SUFFIX}`;
  const handle = await open(temp, 'w', 0o600);
  try {
    await handle.writeFile(data, 'utf8');
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await rename(temp, file);
  } catch (err) {
    await rm(temp, { force: true });
    throw err;
  }
  await syncDirectory(path.dirname(file));
}

/** fsync the directory so the rename itself is durable; some file systems refuse, which is not worth failing for. */
async function syncDirectory(dir: string): Promise<void> {
  try {
    const handle = await open(dir, 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch {
    // EISDIR/EPERM/EINVAL on platforms without directory fsync: the rename is still atomic.
  }
}

/** Owner of `<dataDir>/state.json`. Create with {@link StateStore.open}. */
export class StateStore {
  /** The newest state, including mutations whose write is still in flight. */
  private current: SandboxState;
  /** The newest state known to be on disk. */
  private committed: SandboxState;
  private writing: Promise<void> | undefined;
  private queued: Promise<void> | undefined;
  private closed = false;

  private constructor(
    readonly dataDir: string,
    initial: SandboxState,
  ) {
    this.current = initial;
    this.committed = initial;
  }

  /**
   * Lock `dataDir` (creating it), remove temp files left by a crash, and load `state.json` (an empty state when absent).
   * @throws Error when another live process (or this one) holds the directory, or `state.json` is not valid state.
   */
  static async open(dataDir: string): Promise<StateStore> {
    const dir = path.resolve(dataDir);
    await mkdir(dir, { recursive: true });
    await acquireLock(dir);
    try {
      await removeTempFiles(dir);
      const file = path.join(dir, STATE_FILE);
      const store = new StateStore(dir, await loadState(file));
      await store.flush(); // the directory now holds a valid state.json even when it started empty
      return store;
    } catch (err) {
      await releaseLock(dir);
      throw err;
    }
  }

  /** Path of the state file. */
  get file(): string {
    return path.join(this.dataDir, STATE_FILE);
  }

  /**
   * The state as last written to disk: what reads should show, so nothing is reported that a crash could take back.
   * Treat it as read-only: mutations replace the state rather than edit it, so a reference held across an `await`
   * stays a consistent snapshot.
   */
  get state(): Readonly<SandboxState> {
    return this.committed;
  }

  /** The newest state, including mutations still being written: for deciding what to change next. Read-only. */
  get latest(): Readonly<SandboxState> {
    return this.current;
  }

  /**
   * Apply `change` to a copy of the state, make the copy current, and resolve once it is on disk.
   * @returns what `change` returned.
   * @throws whatever `change` throws (the state is then unchanged); {@link StateWriteError} when the write fails.
   * @throws Unavailable when the store is closed (the sandbox is shutting down).
   */
  async mutate<T>(change: (draft: SandboxState) => T): Promise<T> {
    if (this.closed) throw new Unavailable('the sandbox is shutting down; retry once it is back');
    const draft = structuredClone(this.current);
    const result = change(draft);
    this.current = draft;
    await this.flush();
    return result;
  }

  /** Resolve once everything mutated so far is on disk. */
  flush(): Promise<void> {
    if (this.queued) return this.queued;
    const before = this.writing ?? Promise.resolve();
    const next: Promise<void> = before
      .catch(() => undefined)
      .then(() => {
        this.queued = undefined;
        this.writing = next;
        // The snapshot is taken now, so it includes every mutation made while this write waited in the queue.
        const snapshot = this.current;
        return writeFileAtomic(this.file, JSON.stringify(snapshot)).then(
          () => void (this.committed = snapshot),
          (err: unknown) => {
            throw new StateWriteError(this.file, err);
          },
        );
      })
      .finally(() => {
        if (this.writing === next) this.writing = undefined;
      });
    this.queued = next;
    return next;
  }

  /**
   * Whether the state can be written right now (readiness, issue 7 item 12): when changes are waiting for a write
   * that failed, retry it; otherwise write, fsync and remove a probe file next to `state.json`.
   * @returns false when the store is closed or the write fails (the error is not thrown).
   */
  async probe(): Promise<boolean> {
    if (this.closed) return false;
    try {
      if (this.current !== this.committed) await this.flush();
      else {
        const file = path.join(this.dataDir, PROBE_FILE);
        await writeFileAtomic(file, new Date().toISOString());
        await rm(file, { force: true });
      }
      return true;
    } catch {
      return false;
    }
  }

  /** Flush, refuse further mutations, and release the directory lock. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    try {
      await this.flush();
    } finally {
      await releaseLock(this.dataDir);
    }
  }
}

async function loadState(file: string): Promise<SandboxState> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return emptyState();
    throw err;
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new Error(`sandbox state ${file} is not valid JSON (${(err as Error).message}); move it aside to start empty`);
  }
  const parsed = SandboxState.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(
      `sandbox state ${file} does not match this version of pds (${issue?.path.join('.') || '(root)'}: ${issue?.message}); ` +
        'move it aside to start empty',
    );
  }
  return parsed.data;
}

/** Only temp files of {@link writeFileAtomic}: others in the directory (e.g. the JWT secret's) are not ours to remove. */
const OUR_TEMP_FILE = /^.+\.[0-9a-f]{12}\.tmp$/;

async function removeTempFiles(dir: string): Promise<void> {
  for (const name of await readdir(dir)) {
    if (OUR_TEMP_FILE.test(name)) await rm(path.join(dir, name), { force: true });
  }
}

/**
 * Take `<dir>/lock`. A lock whose pid is not running is stale (the previous process crashed) and is taken over; so is
 * one carrying this process's own pid when this process has not opened the directory (a container restarted with the
 * same pid).
 */
async function acquireLock(dir: string): Promise<void> {
  if (openDirs.has(dir)) throw new Error(`sandbox data directory ${dir} is already open in this process; close it first`);
  const file = path.join(dir, LOCK_FILE);
  try {
    const holder = Number.parseInt(await readFile(file, 'utf8'), 10);
    if (Number.isInteger(holder) && holder !== process.pid && isRunning(holder)) {
      throw new Error(`sandbox data directory ${dir} is in use by process ${holder}; stop it or use another PDS_DATA_DIR`);
    }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  await writeFile(file, String(process.pid), 'utf8');
  openDirs.add(dir);
}

async function releaseLock(dir: string): Promise<void> {
  openDirs.delete(dir);
  try {
    if ((await readFile(path.join(dir, LOCK_FILE), 'utf8')) === String(process.pid)) await rm(path.join(dir, LOCK_FILE), { force: true });
  } catch {
    // already gone
  }
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
