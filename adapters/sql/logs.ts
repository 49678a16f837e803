/**
 * The sandbox's log lines (`docs/api.md#log-line`): what its workflows and "deployments" write, per service (`team`, `app`;
 * `app` '' for tenant-level workflows). A step appends its lines in the transaction that commits the step, so a line
 * is never shown for a step that did not happen, and every process on one database reads the same lines.
 *
 * Bounded: reads show at most the newest `maxPerKey` lines of a service, and {@link LogStore.trim} (run by the sandbox at
 * start and every 10 minutes) deletes older ones. Trimming on every append cost ~3 ms per step commit at the bound
 * (the walk of `maxPerKey` index entries), so it is batched (`bench/log-lines.ts`).
 */
import { json, type Executor } from './executor.js';

/** One log line as written; `labels` are string labels such as `source`, `workflow`, `step`, `pod`. */
export interface LogRecord {
  team: string;
  app: string;
  /** ISO 8601 UTC. */
  timestamp: string;
  line: string;
  labels: Record<string, string>;
}

/** Newest lines kept per service unless told otherwise. */
export const DEFAULT_MAX_LINES_PER_SERVICE = 5_000;

/** The lines of `team/app` not older than `since` (ISO 8601), to select from. */
function linesSince(db: Executor, team: string, app: string, since: string) {
  return db.selectFrom('log_lines').where('team', '=', team).where('app', '=', app).where('timestamp', '>=', since);
}

/**
 * The count {@link LogStore.read} makes: how many of the newest `bound` lines of `team/app` are not older than `since`
 * (ISO 8601), as a query (`{ n }`) to run or, in `test/sql/logs.test.ts`, to explain. It is answered from the index
 * `log_lines_by_service_time` alone (migration `0013-log-lines-covering`).
 */
export function countLinesSince(db: Executor, team: string, app: string, since: string, bound: number) {
  return db
    .selectFrom(linesSince(db, team, app, since).select('seq').orderBy('seq', 'desc').limit(bound).as('matched'))
    .select((eb) => eb.fn.countAll<number>().as('n'));
}

/** Reads and writes of log lines; bound to the database or to one transaction. */
export class LogStore {
  constructor(
    private readonly db: Executor,
    private readonly maxPerKey: number = DEFAULT_MAX_LINES_PER_SERVICE,
  ) {}

  /** Append `lines` in order. */
  async append(lines: readonly LogRecord[]): Promise<void> {
    if (lines.length === 0) return;
    await this.db
      .insertInto('log_lines')
      .values(lines.map((l) => ({ team: l.team, app: l.app, timestamp: l.timestamp, line: l.line, labels: JSON.stringify(l.labels) })))
      .execute();
  }

  /**
   * Cut every service holding more than `maxPerKey` lines back to its newest `maxPerKey`.
   * @returns how many lines were deleted.
   */
  async trim(): Promise<number> {
    const over = await this.db
      .selectFrom('log_lines')
      .select(['team', 'app', (eb) => eb.fn.countAll<number>().as('n')])
      .groupBy(['team', 'app'])
      .having((eb) => eb.fn.countAll(), '>', this.maxPerKey)
      .execute();
    let deleted = 0;
    for (const { team, app } of over) deleted += await this.trimOne(team, app);
    return deleted;
  }

  /**
   * The newest `limit` lines of `team/app` not older than `since` (ISO 8601), oldest first, of its newest `maxPerKey`;
   * and how many more of those matched. Both queries walk the index `log_lines_by_service_time` newest first; the count
   * reads `timestamp` from the index too, not the table (migration `0013-log-lines-covering`).
   */
  async read(team: string, app: string, options: { since: string; limit: number }): Promise<{ lines: LogRecord[]; hidden: number }> {
    const limit = Math.min(this.maxPerKey, Math.max(0, Math.floor(options.limit)));
    const rows = limit === 0 ? [] : await linesSince(this.db, team, app, options.since).selectAll().orderBy('seq', 'desc').limit(limit).execute();
    // How many matched in all (counting no further than the bound), only when not all were shown.
    const total = rows.length < limit ? { n: rows.length } : await countLinesSince(this.db, team, app, options.since, this.maxPerKey).executeTakeFirstOrThrow();
    const lines = rows.reverse().map((r) => ({ team: r.team, app: r.app, timestamp: r.timestamp, line: r.line, labels: json<Record<string, string>>(r.labels) }));
    return { lines, hidden: Number(total.n) - lines.length };
  }

  /** Delete every line of `team` (its services and the tenant's own), e.g. when the tenant is deleted. */
  async deleteTeam(team: string): Promise<void> {
    await this.db.deleteFrom('log_lines').where('team', '=', team).execute();
  }

  private async trimOne(team: string, app: string): Promise<number> {
    const cut = await this.db
      .selectFrom('log_lines')
      .select('seq')
      .where('team', '=', team)
      .where('app', '=', app)
      .orderBy('seq', 'desc')
      .offset(this.maxPerKey)
      .limit(1)
      .executeTakeFirst();
    if (!cut) return 0;
    const deleted = await this.db.deleteFrom('log_lines').where('team', '=', team).where('app', '=', app).where('seq', '<=', cut.seq).executeTakeFirst();
    return Number(deleted.numDeletedRows);
  }
}
