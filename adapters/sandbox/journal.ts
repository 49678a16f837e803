/**
 * The sandbox's log journal: every line its workflows and "deployments" produce, appended to `<dataDir>/logs.jsonl`
 * (one JSON object per line) and kept in memory per service for `logs` (SPEC "Log line").
 *
 * Bounded: at most `maxPerKey` newest lines per service are kept; the file is compacted (rewritten atomically with
 * only what is kept) at open when it holds more, and while running once it has grown well past that. A torn last
 * line (the process died mid-append) or any other unparsable line is skipped at open.
 */
import { appendFile, readFile } from 'node:fs/promises';
import { writeFileAtomic } from './store.js';

/** One journal line; `app` is empty for tenant-level workflows (create-tenant, delete-tenant). */
export interface JournalLine {
  team: string;
  app: string;
  /** ISO 8601 UTC. */
  timestamp: string;
  line: string;
  labels: Record<string, string>;
}

export interface JournalOptions {
  /** Newest lines kept per `team/app` (default 5,000). */
  maxPerKey?: number;
  /** Whether lines of `team/app` are still wanted (the service or tenant exists); others are dropped at compaction. */
  keep?: (team: string, app: string) => boolean;
}

const DEFAULT_MAX_PER_KEY = 5_000;

/** Owner of `logs.jsonl`. Create with {@link LogJournal.open}. */
export class LogJournal {
  private readonly byKey = new Map<string, JournalLine[]>();
  private readonly maxPerKey: number;
  private readonly keep: (team: string, app: string) => boolean;
  /** Lines in the file, kept or not; compaction resets it to what is kept. */
  private fileLines = 0;
  private queue: Promise<void> = Promise.resolve();
  /** Lines readable but not yet appended: a compaction must not write them, or their own append would repeat them. */
  private readonly unwritten = new Set<JournalLine>();

  private constructor(
    readonly file: string,
    options: JournalOptions,
  ) {
    this.maxPerKey = options.maxPerKey ?? DEFAULT_MAX_PER_KEY;
    this.keep = options.keep ?? (() => true);
  }

  /** Load `file` (absent means empty), skipping torn or garbage lines, and compact it when it holds more than is kept. */
  static async open(file: string, options: JournalOptions = {}): Promise<LogJournal> {
    const journal = new LogJournal(file, options);
    let text = '';
    try {
      text = await readFile(file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    for (const raw of text.split('\n')) {
      if (raw.trim() === '') continue;
      journal.fileLines++;
      const parsed = parseLine(raw);
      if (parsed && journal.keep(parsed.team, parsed.app)) journal.remember(parsed);
    }
    if (journal.fileLines > journal.keptLines()) await journal.compact();
    return journal;
  }

  /** The newest `maxPerKey` lines of one service (or of a tenant, with `app` = ""), oldest first. Do not modify. */
  read(team: string, app: string): readonly JournalLine[] {
    const list = this.byKey.get(key(team, app)) ?? [];
    return list.length > this.maxPerKey ? list.slice(-this.maxPerKey) : list;
  }

  /**
   * Make lines readable now and append them to the file after earlier appends; resolves once appended.
   */
  append(lines: readonly JournalLine[]): Promise<void> {
    if (lines.length === 0) return this.queue;
    for (const line of lines) {
      this.remember(line);
      this.unwritten.add(line);
    }
    const text = lines.map((l) => JSON.stringify(l)).join('\n') + '\n';
    this.queue = this.queue
      .catch(() => undefined)
      .then(async () => {
        try {
          await appendFile(this.file, text, 'utf8');
        } finally {
          for (const line of lines) this.unwritten.delete(line);
        }
        this.fileLines += lines.length;
        if (this.fileLines > 2 * this.keptLines() + 10_000) await this.compact();
      });
    return this.queue;
  }

  /** Resolve once every append so far has been written. */
  async flush(): Promise<void> {
    await this.queue.catch(() => undefined);
  }

  private remember(line: JournalLine): void {
    const k = key(line.team, line.app);
    let list = this.byKey.get(k);
    if (!list) this.byKey.set(k, (list = []));
    list.push(line);
    // Trim in batches so a busy service does not shift its array on every line.
    if (list.length > this.maxPerKey + Math.ceil(this.maxPerKey / 10)) list.splice(0, list.length - this.maxPerKey);
  }

  private keptLines(): number {
    let n = 0;
    for (const [k, list] of this.byKey) {
      const [team, app] = split(k);
      if (!this.keep(team, app)) this.byKey.delete(k);
      else {
        if (list.length > this.maxPerKey) list.splice(0, list.length - this.maxPerKey);
        n += list.length;
      }
    }
    return n;
  }

  private async compact(): Promise<void> {
    const kept = [...this.byKey.values()].flat().filter((l) => !this.unwritten.has(l)).sort((a, b) => (a.timestamp < b.timestamp ? -1 : a.timestamp > b.timestamp ? 1 : 0));
    await writeFileAtomic(this.file, kept.map((l) => JSON.stringify(l) + '\n').join(''));
    this.fileLines = kept.length;
  }
}

function key(team: string, app: string): string {
  return `${team}/${app}`;
}

function split(k: string): [string, string] {
  const slash = k.indexOf('/');
  return [k.slice(0, slash), k.slice(slash + 1)];
}

function parseLine(raw: string): JournalLine | undefined {
  try {
    const v = JSON.parse(raw) as Partial<JournalLine> | null;
    if (!v || typeof v.team !== 'string' || typeof v.app !== 'string' || typeof v.timestamp !== 'string' || typeof v.line !== 'string') {
      return undefined;
    }
    const labels = v.labels && typeof v.labels === 'object' ? (v.labels as Record<string, string>) : {};
    return { team: v.team, app: v.app, timestamp: v.timestamp, line: v.line, labels };
  } catch {
    return undefined;
  }
}
