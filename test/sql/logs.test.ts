import { CompiledQuery, sql } from '../../adapters/sql/kysely.js';
import type { Executor } from '../../adapters/sql/executor.js';
import { countLinesSince } from '../../adapters/sql/logs.js';
import { describe, expect, it } from 'vitest';
import type { LogRecord } from '../../adapters/sql/index.js';
import { ENGINES, freshStore } from './helpers.js';

/** `n` lines of `team/app`, one a second from `from` (ISO 8601), numbered from 0. */
function lines(team: string, app: string, n: number, from: string): LogRecord[] {
  const start = Date.parse(from);
  return Array.from({ length: n }, (_, i) => ({
    team,
    app,
    timestamp: new Date(start + i * 1000).toISOString(),
    line: `line ${i}`,
    labels: { source: 'workflow' },
  }));
}

describe.each(ENGINES)('log lines on %s', (engine) => {
  it('read the newest lines since a time, oldest first, and count the older ones within the bound', async () => {
    const store = await freshStore(engine, { maxLogLinesPerService: 50 });
    await store.logs.append(lines('acme', 'web', 80, '2026-11-01T12:00:00.000Z'));
    await store.logs.append(lines('acme', 'api', 5, '2026-11-01T12:00:00.000Z'));

    const newest = await store.logs.read('acme', 'web', { since: '2026-11-01T00:00:00.000Z', limit: 10 });
    expect(newest.lines.map((l) => l.line)).toEqual(Array.from({ length: 10 }, (_, i) => `line ${70 + i}`));
    expect(newest.hidden).toBe(40); // of the newest 50 (the bound), 10 shown

    // Since 12:01:00: lines 60..79 match.
    const recent = await store.logs.read('acme', 'web', { since: '2026-11-01T12:01:00.000Z', limit: 10 });
    expect(recent.lines[0]!.line).toBe('line 70');
    expect(recent.hidden).toBe(10);

    const all = await store.logs.read('acme', 'api', { since: '2026-11-01T00:00:00.000Z', limit: 100 });
    expect(all.lines).toHaveLength(5);
    expect(all.hidden).toBe(0);
    expect(all.lines[0]).toEqual({ team: 'acme', app: 'api', timestamp: '2026-11-01T12:00:00.000Z', line: 'line 0', labels: { source: 'workflow' } });
  });

  it('count the lines of a read from the index alone (no table read per line)', async () => {
    const store = await freshStore(engine);
    await store.logs.append(lines('acme', 'web', 200, '2026-11-01T12:00:00.000Z'));
    for (const app of ['api', 'worker', 'cron']) await store.logs.append(lines('acme', app, 1000, '2026-11-01T12:00:00.000Z'));
    // The count query LogStore.read sends, explained with its parameters.
    const count = countLinesSince(store.db, 'acme', 'web', '2026-11-01T12:00:00.000Z', 5000).compile();
    const explain = <Row>(db: Executor, prefix: string) => db.executeQuery<Row>(CompiledQuery.raw(`${prefix} ${count.sql}`, [...count.parameters]));
    if (engine === 'sqlite') {
      const plan = await explain<{ detail: string }>(store.db, 'explain query plan');
      expect(plan.rows.map((r) => r.detail).join('\n')).toMatch(/USING COVERING INDEX log_lines_by_service_time/);
    } else {
      // PostgreSQL answers from the index alone once the visibility map says the pages are all-visible (autovacuum
      // sets it for an insert-mostly table); a small table would be read whole, so steer the planner off that.
      await sql`vacuum analyze log_lines`.execute(store.db);
      const plan = await store.db.connection().execute(async (db) => {
        await sql`set enable_seqscan = off`.execute(db);
        await sql`set enable_bitmapscan = off`.execute(db);
        return explain<{ 'QUERY PLAN': string }>(db, 'explain');
      });
      expect(plan.rows.map((r) => r['QUERY PLAN']).join('\n')).toMatch(/Index Only Scan Backward using log_lines_by_service_time/);
    }
  });
});
