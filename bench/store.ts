/**
 * The record-store scenario of `npm run bench` (issue 9): on SQLite (a temp `pds.db`) and on PostgreSQL (a server
 * started from Debian's package with its production durability settings), seed the audit trail and finished workflows
 * directly in SQL to 10k, 100k and 1M audit entries (with a tenth as many workflows: 100,000 at 1M), and after each
 * size time, in a fresh process (`store-probe.ts`), the store operations behind the API: an execute (audit entry and
 * workflow in one transaction), `GET /api/v1/audit` (newest 50 visible, as a platform admin and as a member of three
 * tenants), `GET /api/v1/workflows/{name}` (audit entry and workflow by name); plus start-up time and resident memory.
 * The HTTP-level figures come when the sandbox runs on the store (issue 9 phase 2).
 *
 * Environment: `BENCH_STORE_SIZES` (default `10000,100000,1000000`), `BENCH_STORE_ITERATIONS` (calls per operation,
 * default 1000), `BENCH_STORE_ENGINES` (default `sqlite,postgres`).
 */
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { sql } from '../adapters/sql/kysely.js';
import { openRecordStore, type Engine, type RecordStore } from '../adapters/sql/index.js';
import { startPostgres } from '../test/fixtures/postgres.js';
import { forkEntry } from './child.js';
import type { ProbeResult } from './store-probe.js';

export const TENANTS = 200;
/** Rows per seeding statement. */
export const SEED_CHUNK = 50_000;
const USERS = 500;
const STEPS = JSON.stringify(
  ['validate', 'clone', 'build', 'push', 'gitops', 'sync', 'rollout', 'health'].map((name) => ({
    name,
    status: 'succeeded',
    finishedAt: '2026-11-01T12:00:00.000Z',
  })),
);

/** Targets of issue 9, checked on the store operations (the HTTP path adds its own cost in phase 2). */
const TARGETS = { executeP99: 20, readP99: 10, startMs: 2000, rssMiB: 200 };

interface Row {
  engine: Engine;
  audit: number;
  workflows: number;
  seedSeconds: number;
  result: ProbeResult;
}

/**
 * `n` consecutive integers from `from` as a row source named `s(i)`: SQLite has no `generate_series` in its default
 * build, so a recursive CTE there.
 */
function series(engine: Engine, from: number, to: number) {
  return engine === 'postgres'
    ? sql`select i from generate_series(${sql.lit(from)}::bigint, ${sql.lit(to)}::bigint) as s(i)`
    : sql`with recursive s(i) as (select ${sql.lit(from)} union all select i + 1 from s where i < ${sql.lit(to)}) select i from s`;
}

/** ISO 8601 text of `1_762_000_000 + i` seconds since the epoch. */
function isoOf(engine: Engine) {
  return engine === 'postgres'
    ? sql`to_char(to_timestamp(1762000000 + i) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`
    : sql`strftime('%Y-%m-%dT%H:%M:%fZ', 1762000000 + i, 'unixepoch')`;
}

export async function seedTenants(store: RecordStore): Promise<void> {
  await store.transaction(async (tx) => {
    for (let k = 0; k < TENANTS; k++) {
      await tx.tenants.create({
        uid: `uid-t${k}`,
        name: `t${k}`,
        displayName: `Team ${k}`,
        description: '',
        contactEmail: '',
        quotas: { cpu: '4', memory: '8Gi', pods: '20' },
        members: [0, 1, 2].map((d) => ({ userId: `u${(k + TENANTS - d) % TENANTS}`, role: 'member' as const })),
        createdAt: '2026-01-01T00:00:00.000Z',
      });
    }
  });
}

/** Audit entries `from..to` and workflows `from..wfTo` (finished), generated in the database. */
export async function seed(store: RecordStore, from: number, to: number, wfFrom: number, wfTo: number): Promise<void> {
  const engine = store.engine;
  const parameters = sql`'{"action":"deploy","team_name":"t' || (i % ${sql.lit(TENANTS)}) || '","component_name":"svc' || (i % 5) || '","git_tag":"0.' || (i % 97) || '.' || (i % 89) || '","dockerfile_repo":"org/svc' || (i % 5) || '"}'`;
  await sql`
    insert into audit_entries (id, timestamp, user_id, operation, parameters, workflow_name, status, risk_level, message, tenant, tenant_uid, service)
    select 'a-' || i, ${isoOf(engine)}, 'u' || (i % ${sql.lit(USERS)}), 'deploy-service', ${parameters}, 'seed-' || i, 'succeeded', 'medium',
           'deployed t' || (i % ${sql.lit(TENANTS)}) || '/svc' || (i % 5), 't' || (i % ${sql.lit(TENANTS)}), 'uid-t' || (i % ${sql.lit(TENANTS)}), 'svc' || (i % 5)
    from (${series(engine, from, to)}) as s`.execute(store.db);
  if (wfTo < wfFrom) return;
  await sql`
    insert into workflows (name, operation, workflow_template, user_id, tenant, tenant_uid, service, parameters, phase, message, started_at, finished_at, steps, next_step, due_at)
    select 'seed-' || i, 'deploy-service', 'deploy-service', 'u' || (i % ${sql.lit(USERS)}), 't' || (i % ${sql.lit(TENANTS)}), 'uid-t' || (i % ${sql.lit(TENANTS)}),
           'svc' || (i % 5), ${parameters}, 'succeeded', 'deployed', ${isoOf(engine)}, ${isoOf(engine)}, ${STEPS}, 8, 0
    from (${series(engine, wfFrom, wfTo)}) as s`.execute(store.db);
}

async function probe(location: { dataDir: string; databaseUrl?: string }, workflows: number, iterations: number): Promise<ProbeResult> {
  const child = forkEntry('store-probe', { args: [JSON.stringify({ ...location, iterations, workflows, tenants: TENANTS })] });
  const [result] = (await Promise.race([
    once(child, 'message'),
    once(child, 'exit').then(([code]) => {
      throw new Error(`store-probe exited with ${code}`);
    }),
  ])) as [ProbeResult];
  await once(child, 'exit').catch(() => undefined);
  return result;
}

/**
 * A fresh place for the records of one engine's run: a temp data directory, and for `postgres` a durable PostgreSQL
 * server of its own (test/fixtures/postgres.ts). Both are removed by the `cleanups` pushed here.
 * @returns the data directory, and the server's URL for `postgres`.
 */
export async function benchLocation(
  engine: Engine,
  prefix: string,
  cleanups: Array<() => Promise<unknown>>,
): Promise<{ dataDir: string; databaseUrl?: string }> {
  const dataDir = await mkdtemp(path.join(tmpdir(), prefix));
  cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
  if (engine !== 'postgres') return { dataDir };
  const server = await startPostgres({ durable: true });
  cleanups.push(() => server.stop());
  return { dataDir, databaseUrl: server.url };
}

/**
 * Run the store scenario on each engine and size.
 * @returns the report (Markdown tables and PASS/MISS lines) and whether every target was met.
 */
export async function storeBenchmark(log: (line: string) => void): Promise<{ report: string; ok: boolean }> {
  const sizes = (process.env.BENCH_STORE_SIZES ?? '10000,100000,1000000').split(',').map(Number);
  const iterations = Number(process.env.BENCH_STORE_ITERATIONS ?? 1000);
  const engines = (process.env.BENCH_STORE_ENGINES ?? 'sqlite,postgres').split(',') as Engine[];
  const rows: Row[] = [];
  const cleanups: Array<() => Promise<unknown>> = [];
  try {
    for (const engine of engines) {
      const { dataDir, databaseUrl } = await benchLocation(engine, 'pds-bench-store-', cleanups);
      const store = await openRecordStore({ dataDir, databaseUrl });
      await seedTenants(store);
      let audit = 0;
      let workflows = 0;
      for (const size of sizes) {
        const wfTarget = Math.floor(size / 10);
        log(`bench: store on ${engine}: seeding to ${size} audit entries and ${wfTarget} workflows…`);
        const t = performance.now();
        // In chunks: each statement stays well inside the store's statement timeout.
        for (let from = audit + 1; from <= size; from += SEED_CHUNK) {
          const to = Math.min(size, from + SEED_CHUNK - 1);
          const wfFrom = Math.max(workflows + 1, Math.floor((from - 1) / 10) + 1);
          await seed(store, from, to, wfFrom, Math.min(wfTarget, Math.floor(to / 10)));
        }
        if (engine === 'postgres') await sql`analyze`.execute(store.db);
        const seedSeconds = (performance.now() - t) / 1000;
        audit = size;
        workflows = wfTarget;
        log(`bench: store on ${engine} at ${size}: measuring ${iterations} calls per operation…`);
        rows.push({ engine, audit, workflows, seedSeconds, result: await probe({ dataDir, databaseUrl }, workflows, iterations) });
      }
      await store.close();
    }
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup();
  }

  const f = (t: { p50: number; p99: number }) => `${t.p50.toFixed(2)} / ${t.p99.toFixed(2)}`;
  const table = [
    '| engine | audit entries | workflows | execute p50 / p99 ms | audit, admin p50 / p99 ms | audit, member of 3 p50 / p99 ms | workflow by name p50 / p99 ms | start-up ms | RSS MiB | seeding s |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...rows.map(
      (r) =>
        `| ${r.engine} | ${r.audit.toLocaleString('en')} | ${r.workflows.toLocaleString('en')} | ${f(r.result.execute)} | ${f(r.result.auditAdmin)} | ` +
        `${f(r.result.auditMember)} | ${f(r.result.workflowGet)} | ${r.result.startMs.toFixed(0)} | ${r.result.rssMiB.toFixed(0)} | ${r.seedSeconds.toFixed(1)} |`,
    ),
  ].join('\n');
  const worst = (pick: (r: ProbeResult) => number) => Math.max(...rows.map((r) => pick(r.result)));
  const checks: [string, boolean][] = [
    [`execute p99 ≤ ${TARGETS.executeP99} ms (worst: ${worst((r) => r.execute.p99).toFixed(2)} ms)`, worst((r) => r.execute.p99) <= TARGETS.executeP99],
    [
      `audit and workflow reads p99 ≤ ${TARGETS.readP99} ms (worst: ${worst((r) => Math.max(r.auditAdmin.p99, r.auditMember.p99, r.workflowGet.p99)).toFixed(2)} ms)`,
      worst((r) => Math.max(r.auditAdmin.p99, r.auditMember.p99, r.workflowGet.p99)) <= TARGETS.readP99,
    ],
    [`start-up ≤ ${TARGETS.startMs} ms (worst: ${worst((r) => r.startMs).toFixed(0)} ms)`, worst((r) => r.startMs) <= TARGETS.startMs],
    [`RSS ≤ ${TARGETS.rssMiB} MiB (worst: ${worst((r) => r.rssMiB).toFixed(0)} MiB)`, worst((r) => r.rssMiB) <= TARGETS.rssMiB],
  ];
  const report = [
    `record store — ${iterations} calls per operation, one at a time, in a fresh process per row; SQLite WAL synchronous=FULL; PostgreSQL ${'with fsync and synchronous_commit on'}`,
    '',
    table,
    '',
    ...checks.map(([what, ok]) => `${ok ? 'PASS' : 'MISS'}  store: ${what}`),
  ].join('\n');
  return { report, ok: checks.every(([, ok]) => ok) };
}
