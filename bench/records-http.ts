/**
 * The records scenario of `npm run bench` through HTTP (issue 9): pds (`pds-server`, the composition of `pds serve`,
 * sandbox backend) on the record store, SQLite (`pds.db` in a temp data directory) and PostgreSQL (a server started
 * with its production durability settings). For each engine the store is seeded directly in SQL to 10k, 100k and 1M
 * audit entries (a tenth as many finished workflows: 100,000 at 1M; 200 tenants, 500 users; `store.ts` seeds), and
 * after each size a fresh pds process is started on it and timed, one request at a time on loopback:
 *
 * - **start-up**: from fork to pds answering (Node's start, pds's modules, its records opened, migrations checked), and
 *   `startServer` alone (what the records add is in the second figure);
 * - **execute**: `POST /api/v1/operations/create-tenant/execute` as a platform admin (preflight reads, then the audit
 *   entry and the workflow in one transaction);
 * - **audit, admin** / **audit, member of 3**: `GET /api/v1/audit` (newest 50) as a platform admin and as a member of
 *   three tenants;
 * - **workflow by name**: `GET /api/v1/workflows/{name}` as a platform admin, names spread over the seeded table;
 * - **RSS** of the pds process after the run.
 *
 * Environment: `BENCH_RECORDS_SIZES` (default `10000,100000,1000000`), `BENCH_RECORDS_ITERATIONS` (requests per
 * row, default 500), `BENCH_RECORDS_ENGINES` (default `sqlite,postgres`).
 */
import { once } from 'node:events';
import { performance } from 'node:perf_hooks';
import { sql } from '../adapters/sql/kysely.js';
import { issueSelfToken } from '../auth/self-issued.js';
import { openRecordStore, type Engine } from '../adapters/sql/index.js';
import { freePort } from '../test/fixtures/free-port.js';
import { forkEntry } from './child.js';
import { SEED_CHUNK, TENANTS, benchLocation, seed, seedTenants } from './store.js';

const SECRET = 'bench-records-secret-'.padEnd(48, 'x');
const TARGETS = { executeP99: 20, readP99: 10, startMs: 2000, rssMiB: 200 };

interface Timing {
  p50: number;
  p99: number;
}

interface Row {
  engine: Engine;
  audit: number;
  workflows: number;
  /** From fork to pds answering: Node's start, loading pds's modules, opening the records, listening. */
  startMs: number;
  /** `startServer` alone: the platform (records opened, migrations checked, import checked, engine started), listening. */
  serverStartMs: number;
  rssMiB: number;
  execute: Timing;
  auditAdmin: Timing;
  auditMember: Timing;
  workflowGet: Timing;
}

async function time(iterations: number, what: (i: number) => Promise<Response>): Promise<Timing> {
  for (let i = 0; i < Math.min(50, iterations); i++) await (await what(-1 - i)).arrayBuffer(); // warm-up
  const samples: number[] = [];
  for (let i = 0; i < iterations; i++) {
    const t = performance.now();
    const res = await what(i);
    await res.arrayBuffer();
    samples.push(performance.now() - t);
    if (!res.ok) throw new Error(`${res.url} answered ${res.status}`);
  }
  samples.sort((a, b) => a - b);
  const at = (q: number) => Number(samples[Math.min(samples.length - 1, Math.floor(q * samples.length))]!.toFixed(2));
  return { p50: at(0.5), p99: at(0.99) };
}

/** Start pds on the seeded location, time the requests, stop it. */
async function measure(location: { dataDir: string; databaseUrl?: string }, workflows: number, iterations: number, round: number): Promise<Omit<Row, 'engine' | 'audit' | 'workflows'>> {
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const started = performance.now();
  const child = forkEntry('pds-server', {
    env: {
      PORT: String(port),
      HOST: '127.0.0.1',
      PDS_BASE_URL: baseUrl,
      PDS_DATA_DIR: location.dataDir,
      PDS_JWT_SECRET: SECRET,
      PDS_BACKEND: 'sandbox',
      PDS_ADMINS: 'root',
      // Executes are limited to 20 a minute per user: each one is made by another platform admin (by group).
      PDS_ADMIN_GROUPS: 'bench-admins',
      PDS_LOG_LEVEL: 'warn',
      // Submitted workflows wait a minute before their first step: the measurement is of the requests alone.
      PDS_SANDBOX_STEP_MS: '60000',
      ...(location.databaseUrl ? { PDS_DATABASE_URL: location.databaseUrl } : {}),
    },
  });
  try {
    const [ready] = (await Promise.race([
      once(child, 'message'),
      once(child, 'exit').then(([code]) => {
        throw new Error(`pds exited with ${code} before listening`);
      }),
    ])) as [{ startMs: number }];
    const startMs = performance.now() - started;
    const serverStartMs = ready.startMs;
    const secret = new TextEncoder().encode(SECRET);
    const bearer = async (sub: string, groups: string[] = []) => ({ authorization: `Bearer ${await issueSelfToken(secret, baseUrl, { sub, groups }, 3600)}` });
    const root = await bearer('root');
    const member = await bearer('u0'); // member of t0, t199 and t198
    const admins = await Promise.all(Array.from({ length: iterations + 50 }, (_, n) => bearer(`bench-admin-${round}-${n}`, ['bench-admins'])));
    const execute = await time(iterations, (i) =>
      fetch(`${baseUrl}/api/v1/operations/create-tenant/execute`, {
        method: 'POST',
        headers: { ...admins[i < 0 ? iterations - 1 - i : i]!, 'content-type': 'application/json' },
        body: JSON.stringify({ team_name: `bench-r${round}-${i < 0 ? `w${-i}` : i}` }),
      }),
    );
    const auditAdmin = await time(iterations, () => fetch(`${baseUrl}/api/v1/audit`, { headers: root }));
    const auditMember = await time(iterations, () => fetch(`${baseUrl}/api/v1/audit`, { headers: member }));
    const stride = Math.max(1, Math.floor(workflows / iterations));
    const workflowGet = await time(iterations, (i) => fetch(`${baseUrl}/api/v1/workflows/seed-${1 + ((Math.abs(i) * stride) % workflows)}`, { headers: root }));
    child.send({ type: 'rss' });
    const [memory] = (await once(child, 'message')) as [NodeJS.MemoryUsage];
    return { startMs, serverStartMs, rssMiB: memory.rss / 2 ** 20, execute, auditAdmin, auditMember, workflowGet };
  } finally {
    child.send({ type: 'stop' });
    await Promise.race([once(child, 'exit'), new Promise((r) => setTimeout(r, 5_000))]);
    if (child.exitCode === null) child.kill('SIGKILL');
  }
}

/**
 * Run the records scenario through HTTP on each engine and size.
 * @returns the report (Markdown table and PASS/MISS lines) and whether every target was met.
 */
export async function recordsHttpBenchmark(log: (line: string) => void): Promise<{ report: string; ok: boolean }> {
  const sizes = (process.env.BENCH_RECORDS_SIZES ?? '10000,100000,1000000').split(',').map(Number);
  const iterations = Number(process.env.BENCH_RECORDS_ITERATIONS ?? 500);
  const engines = (process.env.BENCH_RECORDS_ENGINES ?? 'sqlite,postgres').split(',') as Engine[];
  const rows: Row[] = [];
  const cleanups: Array<() => Promise<unknown>> = [];
  try {
    for (const engine of engines) {
      const location = await benchLocation(engine, 'pds-bench-records-', cleanups);
      let audit = 0;
      let workflows = 0;
      for (const [round, size] of sizes.entries()) {
        const store = await openRecordStore(location);
        if (round === 0) await seedTenants(store);
        // The create-tenant workflows the previous row submitted would run during this row's measurement: settle them.
        await sql`delete from workflow_arguments`.execute(store.db);
        await sql`update workflows set phase = 'succeeded', message = 'settled by the bench', finished_at = started_at where phase = 'submitted'`.execute(store.db);
        await sql`update audit_entries set status = 'succeeded', message = 'settled by the bench' where status = 'submitted'`.execute(store.db);
        const wfTarget = Math.floor(size / 10);
        log(`bench: records over HTTP on ${engine}: seeding to ${size} audit entries and ${wfTarget} workflows…`);
        for (let from = audit + 1; from <= size; from += SEED_CHUNK) {
          const to = Math.min(size, from + SEED_CHUNK - 1);
          const wfFrom = Math.max(workflows + 1, Math.floor((from - 1) / 10) + 1);
          await seed(store, from, to, wfFrom, Math.min(wfTarget, Math.floor(to / 10)));
        }
        if (engine === 'postgres') await sql`analyze`.execute(store.db);
        await store.close();
        audit = size;
        workflows = wfTarget;
        log(`bench: records over HTTP on ${engine} at ${size}: starting pds, ${iterations} requests per row…`);
        rows.push({ engine, audit, workflows, ...(await measure(location, workflows, iterations, round)) });
      }
    }
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup();
  }

  const f = (t: Timing) => `${t.p50.toFixed(2)} / ${t.p99.toFixed(2)}`;
  const table = [
    '| engine | audit entries | workflows | execute p50 / p99 ms | GET /audit admin p50 / p99 ms | GET /audit member of 3 p50 / p99 ms | GET /workflows/{name} p50 / p99 ms | start-up ms (process / startServer) | RSS MiB |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...rows.map(
      (r) =>
        `| ${r.engine} | ${r.audit.toLocaleString('en')} | ${r.workflows.toLocaleString('en')} | ${f(r.execute)} | ${f(r.auditAdmin)} | ${f(r.auditMember)} | ` +
        `${f(r.workflowGet)} | ${r.startMs.toFixed(0)} / ${r.serverStartMs.toFixed(0)} | ${r.rssMiB.toFixed(0)} |`,
    ),
  ].join('\n');
  const worst = (pick: (r: Row) => number) => Math.max(...rows.map(pick));
  const reads = (r: Row) => Math.max(r.auditAdmin.p99, r.auditMember.p99, r.workflowGet.p99);
  const checks: [string, boolean][] = [
    [`execute p99 ≤ ${TARGETS.executeP99} ms (worst: ${worst((r) => r.execute.p99).toFixed(2)} ms)`, worst((r) => r.execute.p99) <= TARGETS.executeP99],
    [`audit and workflow reads p99 ≤ ${TARGETS.readP99} ms (worst: ${worst(reads).toFixed(2)} ms)`, worst(reads) <= TARGETS.readP99],
    [`start-up ≤ ${TARGETS.startMs} ms (worst: ${worst((r) => r.startMs).toFixed(0)} ms)`, worst((r) => r.startMs) <= TARGETS.startMs],
    [`RSS ≤ ${TARGETS.rssMiB} MiB (worst: ${worst((r) => r.rssMiB).toFixed(0)} MiB)`, worst((r) => r.rssMiB) <= TARGETS.rssMiB],
  ];
  const report = [
    `records through HTTP — ${iterations} requests per row, one at a time, a fresh pds per row; SQLite WAL synchronous=FULL; PostgreSQL with fsync and synchronous_commit on; ${TENANTS} tenants`,
    '',
    table,
    '',
    ...checks.map(([what, ok]) => `${ok ? 'PASS' : 'MISS'}  records over HTTP: ${what}`),
  ].join('\n');
  return { report, ok: checks.every(([, ok]) => ok) };
}
