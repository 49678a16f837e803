/**
 * `npm run soak` (issue 13 §5, issue 23 item 4; not part of `npm test`): pds under a steady load for minutes to an
 * hour. Starts a redis-server and pds (compiled, each in its own process, the image's Node flags, sandbox backend,
 * `REDIS_URL` set, proxy trusted so no request is loopback-exempt) and drives it at a steady rate, open loop — requests
 * are sent on schedule whether or not earlier ones have been answered, so a slow pds shows as latency, not as a lower
 * rate.
 *
 * - **Store and processes.** By default one pds on SQLite (`pds.db` in a temp data directory). With
 *   `SOAK_STORE=postgres` a durable PostgreSQL server of its own is started in a temp directory
 *   (`test/fixtures/postgres.ts`, through `benchLocation` in `bench/store.ts`) and `SOAK_PROCESSES` pds processes
 *   (default 1) run on it and on the one Redis, each with a data directory of its own and the same `PDS_BASE_URL`, as
 *   replicas behind a load balancer are. Each request kind goes to the processes in turn (round robin per kind, so
 *   every process gets the same mix).
 * - **The mix** per 100 requests: 1 write (`deploy-service` deploys, each a workflow the sandbox runs to the end, spread
 *   over {@link WRITERS} tenant admins: 3 a minute each, within the 20/min write limit; `SOAK_WRITE_PERCENT` changes
 *   the share), 20 MCP `tools/call` reads (2025-11-25, stateless), 20 log reads (`GET /api/v1/logs/…?lines=100`, read
 *   from `log_lines` as it fills towards its 5,000 lines per service), the rest REST reads (service, status, tenant,
 *   catalog). Callers rotate over {@link USERS} users, each well within 300 requests a minute. A warm-up at the same
 *   rate (`SOAK_WARMUP` s, default 15; every token verified once) comes first and is not counted.
 * - **Per minute**: requests, achieved rate, client-side p50/p99/max latency over all processes, the log reads' p99
 *   apart, non-2xx by status, network errors, `log_lines` rows, and each pds process's RSS and V8 heap at the minute's
 *   end.
 * - **At the end**: once the load stops, the soak waits (up to 2 minutes) for every workflow to settle, stops the pds
 *   processes, and checks that every write answered 2xx settled exactly once across them: one audit entry, settled,
 *   and one settlement line (`workflow <name> <phase>`) in one process's log. Missing, unsettled and duplicated ones
 *   are named. Each pds's own log (JSON lines at `info`: a line per request) is written to a file, searched for
 *   secrets, and its warnings and errors (a 5xx's request line among them) are counted by message and cause and the
 *   most frequent printed: the files go with the soak's temp directory. So are the non-2xx answers, by status, request
 *   kind and their `error` text (digits blanked so alike refusals group), so a refusal (a 409, say) can be told from
 *   a fault afterwards.
 * - **Targets** (issue 23 item 4): p99 < 50 ms every minute, and so for the log reads alone; zero 5xx; each process's
 *   RSS slope (least squares over the minutes after `SOAK_SLOPE_FROM`) < {@link RSS_SLOPE_TARGET} MiB/min; every
 *   write settled exactly once; no secret in the logs.
 *
 * Environment: `SOAK_DURATION` seconds (default 600), `SOAK_RATE` requests/s (default 300), `SOAK_WRITE_PERCENT`
 * (default 1), `SOAK_WARMUP` seconds (default 15), `SOAK_STORE` (`sqlite`, default, or `postgres`), `SOAK_PROCESSES`
 * (default 1; more needs `postgres`), `SOAK_SLOPE_FROM` (minutes; default 10 when the run is 20 minutes or longer,
 * else 2), `SOAK_MALLOC_ARENA_MAX` (passed to the pds processes as glibc's `MALLOC_ARENA_MAX`; the report names the
 * C library pds runs on), `REDIS_URL` (use that Redis), `BENCH_PDS_FLAGS` (Node flags for pds instead of the image's).
 *
 * Commands (BENCHMARKS.md "Soak"), each alone on a quiet machine:
 * - the hour: `SOAK_DURATION=3600 npm run soak` (and `SOAK_MALLOC_ARENA_MAX=2 SOAK_DURATION=3600 npm run soak` to
 *   compare glibc's arenas);
 * - PostgreSQL with two processes: `SOAK_STORE=postgres SOAK_PROCESSES=2 SOAK_DURATION=600 npm run soak`;
 * - a short check of the tooling: `SOAK_DURATION=90 SOAK_RATE=100 npm run soak`.
 */
import type { ChildProcess } from 'node:child_process';
import { createReadStream, createWriteStream, type WriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { sql } from '../adapters/sql/kysely.js';
import { issueSelfToken } from '../auth/self-issued.js';
import { openRecordStore, type RecordStore } from '../adapters/sql/index.js';
import { freePorts } from '../test/fixtures/free-port.js';
import { startRedisServer } from '../test/fixtures/redis-server.js';
import { findSecrets, type SecretFinding } from '../test/helpers/secrets.js';
import { forkEntry } from './child.js';
import { pdsNodeFlags } from './run.js';
import { checkSettlement, libcOf, percentile, problemLine, RSS_SLOPE_TARGET, rssSlope, settleLine, slopeFrom } from './soak-check.js';
import { benchLocation } from './store.js';

const USERS = 200;
/** Users who write: at 1 % of 300/s, 180 writes a minute, 3 each; at 5 %, 15 each (the limit is 20). */
const WRITERS = 60;
const SERVICES = 12;
const SECRET = 'soak-secret-'.padEnd(48, 'x');
/** How long the soak waits after the load for the workflows still running to settle, milliseconds. */
const SETTLE_WAIT_MS = 120_000;
/** How long a pds process may take to answer a memory sample before the sample is left out, milliseconds. */
const SAMPLE_TIMEOUT_MS = 10_000;

/** The soak's settings, from the environment. */
interface SoakSettings {
  seconds: number;
  rate: number;
  writePct: number;
  warmup: number;
  store: 'sqlite' | 'postgres';
  processes: number;
  /** Minutes after which the RSS slope is fitted (`SOAK_SLOPE_FROM`). */
  slopeAfter: number;
  /** `SOAK_MALLOC_ARENA_MAX`, passed to pds as `MALLOC_ARENA_MAX`. */
  arenaMax?: string;
}

/**
 * Read the soak's settings.
 * @throws TypeError for a store other than `sqlite`/`postgres`, a process count that is not a whole number ≥ 1, more
 *   than one process on SQLite, or a `SOAK_SLOPE_FROM` that is not a whole number ≥ 0.
 */
function settings(env: NodeJS.ProcessEnv): SoakSettings {
  const seconds = Number(env.SOAK_DURATION ?? 600);
  const store = env.SOAK_STORE ?? 'sqlite';
  if (store !== 'sqlite' && store !== 'postgres') throw new TypeError(`SOAK_STORE must be sqlite or postgres, not ${JSON.stringify(store)}`);
  const processes = Number(env.SOAK_PROCESSES ?? 1);
  if (!Number.isInteger(processes) || processes < 1) throw new TypeError(`SOAK_PROCESSES must be a whole number ≥ 1, not ${JSON.stringify(env.SOAK_PROCESSES)}`);
  // pds claims its SQLite data directory for one process; replicas share PostgreSQL.
  if (processes > 1 && store !== 'postgres') throw new TypeError(`SOAK_PROCESSES=${processes} needs SOAK_STORE=postgres: one pds process at a time owns a SQLite store`);
  return {
    seconds,
    rate: Number(env.SOAK_RATE ?? 300),
    writePct: Number(env.SOAK_WRITE_PERCENT ?? 1),
    warmup: Number(env.SOAK_WARMUP ?? 15),
    store,
    processes,
    slopeAfter: slopeFrom(seconds, env.SOAK_SLOPE_FROM),
    arenaMax: env.SOAK_MALLOC_ARENA_MAX || undefined,
  };
}

/** One pds process of the soak. */
interface Pds {
  /** 1-based. */
  n: number;
  child: ChildProcess;
  url: string;
  logFile: string;
  /** Resolves when everything the process wrote to stdout is in {@link logFile}. */
  logWritten: Promise<void>;
  stopping: boolean;
  /** Set when the process ended without being asked to. */
  died?: string;
}

interface Minute {
  minute: number;
  latencies: number[];
  logLatencies: number[];
  statuses: Map<number, number>;
  errors: number;
  /** Per process (index = n - 1), at the minute's end. */
  rss: (number | undefined)[];
  heap: (number | undefined)[];
  logLines?: number;
}

type Memory = { rss: number; heapUsed: number };

const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Send `type` to a pds process and wait for its answer; undefined when it does not answer within `timeoutMs`. */
function ask<T>(child: ChildProcess, type: string, timeoutMs = SAMPLE_TIMEOUT_MS): Promise<T | undefined> {
  return new Promise((resolve) => {
    if (!child.connected) return resolve(undefined);
    const answered = (msg: unknown) => {
      clearTimeout(timer);
      resolve(msg as T);
    };
    const timer = setTimeout(() => {
      child.off('message', answered);
      resolve(undefined);
    }, timeoutMs);
    child.once('message', answered);
    try {
      child.send({ type });
    } catch {
      child.off('message', answered);
      clearTimeout(timer);
      resolve(undefined);
    }
  });
}

/** Ask a pds process to stop (it gives back its workflow leases and closes), killing it after 10 s. */
async function stopPds(pds: Pds): Promise<void> {
  if (pds.child.exitCode !== null || pds.child.signalCode !== null) return;
  pds.stopping = true;
  const exited = new Promise<void>((resolve) => pds.child.once('exit', () => resolve()));
  try {
    pds.child.send({ type: 'stop' });
  } catch {
    // the IPC channel is gone: the kill below ends it
  }
  await Promise.race([exited, delay(10_000)]);
  if (pds.child.exitCode === null && pds.child.signalCode === null) {
    pds.child.kill('SIGKILL');
    await exited;
  }
}

/**
 * Read one pds log: the workflows it logged settling, its warnings and errors counted by {@link problemLine}, its line
 * count, and the secrets in it (line numbers are the file's). Streamed: an hour's log is a million lines.
 */
async function scanLog(file: string, known: string[]): Promise<{ settled: string[]; problems: Map<string, number>; lines: number; secrets: SecretFinding[] }> {
  const settled: string[] = [];
  const problems = new Map<string, number>();
  const secrets: SecretFinding[] = [];
  let lines = 0;
  let chunk: string[] = [];
  const scan = () => {
    const offset = lines - chunk.length;
    for (const f of findSecrets(chunk.join('\n'), known)) secrets.push({ ...f, line: f.line + offset });
    chunk = [];
  };
  for await (const line of createInterface({ input: createReadStream(file), crlfDelay: Infinity })) {
    if (!line) continue;
    lines++;
    chunk.push(line);
    const settlement = settleLine(line);
    if (settlement) settled.push(settlement.workflow);
    const problem = problemLine(line);
    if (problem !== undefined) problems.set(problem, (problems.get(problem) ?? 0) + 1);
    if (chunk.length >= 10_000) scan();
  }
  scan();
  return { settled, problems, lines, secrets };
}

export async function main(): Promise<number> {
  const { seconds, rate, writePct, warmup, store: engine, processes, slopeAfter, arenaMax } = settings(process.env);
  const cleanups: (() => Promise<unknown>)[] = [];
  // Interrupted: still stop pds, PostgreSQL and Redis.
  const interrupted = () => void (async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
    process.exit(130);
  })();
  process.once('SIGINT', interrupted);
  process.once('SIGTERM', interrupted);
  try {
    let redisUrl = process.env.REDIS_URL;
    if (!redisUrl) {
      const redis = await startRedisServer();
      cleanups.push(() => redis.stop());
      redisUrl = redis.url;
    }
    const redisAt = redisUrl;
    if (engine === 'postgres') process.stderr.write('soak: starting PostgreSQL (durable: fsync and synchronous_commit on)\n');
    const { dataDir: soakDir, databaseUrl } = await benchLocation(engine, 'pds-soak-', cleanups);
    const ports = await freePorts(processes);
    // One public address for every process, as replicas behind a load balancer have: tokens name it as their issuer.
    const base = `http://127.0.0.1:${ports[0]}`;
    const flags = pdsNodeFlags();
    const arenas = arenaMax ?? process.env.MALLOC_ARENA_MAX;
    const libc = libcOf((process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined)?.header);

    const startPds = async (n: number): Promise<Pds> => {
      const dataDir = path.join(soakDir, `data-${n}`);
      await mkdir(dataDir, { recursive: true });
      const logFile = path.join(soakDir, `pds-${n}.log`);
      const child = forkEntry('pds-server', {
        env: {
          PORT: String(ports[n - 1]),
          HOST: '127.0.0.1',
          PDS_BASE_URL: base,
          PDS_DATA_DIR: dataDir,
          ...(databaseUrl && { PDS_DATABASE_URL: databaseUrl }),
          PDS_JWT_SECRET: SECRET,
          PDS_BACKEND: 'sandbox',
          REDIS_URL: redisAt,
          PDS_TRUST_PROXY: 'true',
          PDS_ADMINS: 'root',
          PDS_SANDBOX_STEP_MS: '100',
          PDS_LOG_LEVEL: 'info',
          ...(arenaMax && { MALLOC_ARENA_MAX: arenaMax }),
        },
        execArgv: flags,
        stdio: 'pipe',
      });
      const log: WriteStream = createWriteStream(logFile);
      const logWritten = new Promise<void>((resolve) => log.once('finish', () => resolve()).once('error', () => resolve()));
      child.stdout!.pipe(log);
      child.stderr!.pipe(process.stderr);
      const pds: Pds = { n, child, url: '', logFile, logWritten, stopping: false };
      cleanups.push(() => stopPds(pds));
      const ready = await new Promise<{ url: string }>((resolve, reject) => {
        child.once('message', (msg) => resolve(msg as { url: string }));
        child.once('exit', (code, signal) => reject(new Error(`pds ${n} exited with ${code ?? signal} before listening`)));
      });
      pds.url = ready.url;
      child.on('exit', (code, signal) => {
        if (!pds.stopping) pds.died = `exited with ${code ?? signal} during the run`;
      });
      return pds;
    };
    // One after the other: the first applies the migrations, the others find them applied.
    const fleet: Pds[] = [];
    for (let n = 1; n <= processes; n++) fleet.push(await startPds(n));
    const first = fleet[0]!;
    // The soak's own connection to the records: log_lines' size each minute, the audit trail at the end.
    const records: RecordStore = await openRecordStore({ dataDir: path.join(soakDir, 'data-1'), databaseUrl, poolSize: 2 });
    cleanups.push(() => records.close());
    const logLineCount = async () => Number((await records.db.selectFrom('log_lines').select(sql<number>`count(*)`.as('n')).executeTakeFirstOrThrow()).n);
    const unsettledCount = async () =>
      Number((await records.db.selectFrom('audit_entries').select(sql<number>`count(*)`.as('n')).where('status', '=', 'submitted').executeTakeFirstOrThrow()).n);

    const secret = new TextEncoder().encode(SECRET);
    const mint = (sub: string) => issueSelfToken(secret, base, { sub, groups: [] }, 4 * 3600);
    const users = Array.from({ length: USERS }, (_, n) => `soak-${n}`);
    const tokens = await Promise.all(users.map(mint));
    const root = await mint('root');
    const forwarded = { 'x-forwarded-for': '198.51.100.77' };
    const send = (to: Pds, token: string, method: string, p: string, body?: unknown, extra: Record<string, string> = {}) =>
      fetch(to.url + p, {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...forwarded, ...extra },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    const waitFor = async (token: string, name: string) => {
      for (;;) {
        const r = (await (await send(first, token, 'GET', `/api/v1/workflows/${name}`)).json()) as { audit: { status: string } };
        if (r.audit.status !== 'submitted') return r.audit.status;
        await delay(50);
      }
    };
    const expectOk = async (res: Response, what: string) => {
      const body = (await res.json()) as Record<string, unknown>;
      if (!res.ok) throw new Error(`${what}: HTTP ${res.status} ${JSON.stringify(body)}`);
      return body;
    };
    /** Workflow names of every write answered 2xx, setup included: each must settle exactly once. */
    const accepted: string[] = [];

    // Setup: one tenant with every soak user (the writers as admins), its repository, SERVICES services.
    const admins = users.slice(0, WRITERS).join(',');
    const members = users.slice(WRITERS).join(',');
    const created = await expectOk(await send(first, root, 'POST', '/api/v1/operations/create-tenant/execute', { team_name: 'soak', admins: `root,${admins}`, members }), 'create-tenant');
    accepted.push(created.workflowName as string);
    await waitFor(root, created.workflowName as string);
    await expectOk(await send(first, root, 'POST', '/api/v1/repos/grant-access', { team_name: 'soak', repo: 'soak/app' }), 'grant-access');
    await expectOk(await send(first, root, 'POST', '/api/v1/repos/sync', { team: 'soak' }), 'sync');
    for (let s = 0; s < SERVICES; s++) {
      const onboard = await expectOk(
        await send(first, root, 'POST', '/api/v1/operations/deploy-service/execute', { action: 'onboard', team_name: 'soak', component_name: `svc${s}`, dockerfile_repo: 'soak/app', git_tag: '1.0.0', port: '8080' }),
        `onboard svc${s}`,
      );
      accepted.push(onboard.workflowName as string);
      await waitFor(root, onboard.workflowName as string);
    }

    // The load: open loop, `rate` a second, in ticks of 10 ms.
    const minutes: Minute[] = [];
    const newMinute = (minute: number): Minute => ({ minute, latencies: [], logLatencies: [], statuses: new Map(), errors: 0, rss: [], heap: [] });
    const minuteOf = (i: number) => (minutes[i] ??= newMinute(i + 1));
    let n = 0;
    let writes = 0;
    let inflight = 0;
    let t0 = Date.now();
    const byKind: Record<string, number[]> = {};
    /** Non-2xx answers by status, request kind and their `error` text (numbers blanked so alike refusals group). */
    const refusals = new Map<string, number>();
    const warmupMinute = newMinute(0);
    // Round robin per request kind, so each process gets every kind in the same share.
    const turns = new Map<string, number>();
    const next = (kind: string): Pds => {
      const turn = turns.get(kind) ?? 0;
      turns.set(kind, turn + 1);
      return fleet[turn % fleet.length]!;
    };
    const one = (warming = false) => {
      const k = n++;
      const user = k % USERS;
      const token = tokens[user]!;
      const svc = `svc${k % SERVICES}`;
      const slot = k % 100;
      let request: Promise<Response>;
      const kind = slot < writePct ? 'write (deploy-service)' : slot < writePct + 20 ? 'MCP tools/call' : slot < writePct + 40 ? 'log read' : 'REST read';
      const to = next(kind);
      if (slot < writePct) {
        const writer = writes++ % WRITERS;
        request = send(to, tokens[writer]!, 'POST', '/api/v1/operations/deploy-service/execute', {
          action: 'deploy', team_name: 'soak', component_name: `svc${writer % SERVICES}`, dockerfile_repo: 'soak/app', git_tag: `1.${Math.floor(writes / WRITERS)}.${writer}`,
        });
      } else if (slot < writePct + 20) {
        request = send(to, token, 'POST', '/mcp', { jsonrpc: '2.0', id: k, method: 'tools/call', params: { name: slot % 2 ? 'platform_get_service' : 'platform_get_status', arguments: { team: 'soak', app: svc } } }, {
          accept: 'application/json, text/event-stream',
        });
      } else if (slot < writePct + 40) {
        request = send(to, token, 'GET', `/api/v1/logs/soak/${svc}?lines=100&since=1h`);
      } else {
        const reads = [`/api/v1/services/soak/${svc}`, `/api/v1/status/soak/${svc}`, '/api/v1/tenants/soak', '/api/v1/operations'];
        request = send(to, token, 'GET', reads[slot % reads.length]!);
      }
      const started = performance.now();
      const minute = warming ? warmupMinute : minuteOf(Math.min(Math.floor((Date.now() - t0) / 60_000), Math.ceil(seconds / 60) - 1));
      const kindLatencies = warming ? [] : (byKind[kind] ??= []);
      inflight++;
      request
        .then(async (res) => {
          if (kind.startsWith('write') && res.ok) {
            const { workflowName } = (await res.json()) as { workflowName?: unknown };
            if (typeof workflowName === 'string') accepted.push(workflowName);
          } else if (!res.ok && !warming) {
            const text = await res.text();
            let error: unknown;
            try {
              error = (JSON.parse(text) as { error?: unknown }).error;
            } catch {
              error = undefined;
            }
            const what = typeof error === 'string' ? error.replace(/\d+/g, 'N').slice(0, 160) : text.slice(0, 80);
            const key = `${res.status} ${kind}: ${what}`;
            refusals.set(key, (refusals.get(key) ?? 0) + 1);
          } else {
            await res.arrayBuffer();
          }
          const elapsed = performance.now() - started;
          minute.latencies.push(elapsed);
          if (kind === 'log read') minute.logLatencies.push(elapsed);
          kindLatencies.push(elapsed);
          minute.statuses.set(res.status, (minute.statuses.get(res.status) ?? 0) + 1);
        })
        .catch(() => {
          minute.errors++;
        })
        .finally(() => inflight--);
    };
    const mib = (b?: number) => (b === undefined ? '—' : (b / 2 ** 20).toFixed(1));
    const ms = (v: number) => (Number.isNaN(v) ? '—' : v.toFixed(1));
    /** Each process's memory and log_lines' size into minute `index`'s row. */
    const sample = async (index: number) => {
      const [memory, logLines] = await Promise.all([
        Promise.all(fleet.map((p) => ask<Memory>(p.child, 'rss'))),
        logLineCount().catch(() => undefined),
      ]);
      const m = minuteOf(index);
      memory.forEach((mem, i) => {
        if (!mem) return;
        m.rss[i] ??= mem.rss;
        m.heap[i] ??= mem.heapUsed;
      });
      m.logLines ??= logLines;
      return m;
    };

    // Warm-up at the same rate, not counted: each user's token verified once, JIT, connections opened.
    process.stderr.write(`soak: warm-up ${warmup} s at ${rate} req/s\n`);
    const warmupEnd = Date.now() + warmup * 1000;
    let warmupSent = 0;
    const warmupStart = Date.now();
    await new Promise<void>((resolve) => {
      const tick = setInterval(() => {
        const due = Math.floor(((Math.min(Date.now(), warmupEnd) - warmupStart) / 1000) * rate);
        while (warmupSent < due) {
          one(true);
          warmupSent++;
        }
        if (Date.now() >= warmupEnd) {
          clearInterval(tick);
          resolve();
        }
      }, 10);
    });
    process.stderr.write(
      `soak: ${rate} req/s for ${seconds} s against ${fleet.map((p) => p.url).join(', ')} (pds logs: ${fleet.map((p) => p.logFile).join(', ')})\n`,
    );
    t0 = Date.now();
    const end = t0 + seconds * 1000;
    let sent = 0;
    let sampled = 0;
    await new Promise<void>((resolve) => {
      const tick = setInterval(() => {
        const now = Date.now();
        const due = Math.min(Math.floor(((Math.min(now, end) - t0) / 1000) * rate), Math.floor(seconds * rate));
        while (sent < due) {
          one();
          sent++;
        }
        const minute = Math.floor((now - t0) / 60_000);
        if (minute > sampled || now >= end) {
          const index = sampled;
          sampled = minute;
          void sample(index).then((m) => {
            const sorted = [...m.latencies].sort((a, b) => a - b);
            const logs = [...m.logLatencies].sort((a, b) => a - b);
            const rss = m.rss.map((r) => mib(r)).join(' / ');
            process.stderr.write(
              `soak: minute ${index + 1}: ${m.latencies.length} answered, p99 ${ms(percentile(sorted, 99))} ms, log reads p99 ${ms(percentile(logs, 99))} ms, log_lines ${m.logLines ?? '—'}, RSS ${rss} MiB\n`,
            );
          });
        }
        if (now >= end) {
          clearInterval(tick);
          resolve();
        }
      }, 10);
    });
    const drainUntil = Date.now() + 10_000;
    while (inflight > 0 && Date.now() < drainUntil) await delay(50);
    await delay(200); // the last minute's memory sample
    if (minutes.length > 0) await sample(minutes.length - 1);

    // Settlement: wait for the workflows still running, then stop pds so every log line is written, then count.
    process.stderr.write(`soak: load done; waiting up to ${SETTLE_WAIT_MS / 1000} s for the ${writes} writes' workflows to settle\n`);
    const settleUntil = Date.now() + SETTLE_WAIT_MS;
    for (;;) {
      const open = await unsettledCount().catch(() => Number.NaN);
      if (open === 0 || Date.now() > settleUntil) break;
      await delay(500);
    }
    for (const pds of fleet) await stopPds(pds);
    await Promise.race([Promise.all(fleet.map((p) => p.logWritten)), delay(10_000)]);
    const trail = await records.db.selectFrom('audit_entries').select(['workflow_name as workflowName', 'status']).execute();
    const known = [SECRET, root, ...tokens];
    const logs: Awaited<ReturnType<typeof scanLog>>[] = [];
    for (const pds of fleet) logs.push(await scanLog(pds.logFile, known));
    const settlement = checkSettlement(accepted, trail, logs.map((l) => l.settled));

    // Report.
    const rows = minutes.map((m) => {
      const sorted = [...m.latencies].sort((a, b) => a - b);
      const non2xx = [...m.statuses].filter(([s]) => s < 200 || s >= 300);
      const span = Math.min(60, (Math.min(Date.now(), end) - t0) / 1000 - (m.minute - 1) * 60);
      return {
        m,
        p50: percentile(sorted, 50),
        p99: percentile(sorted, 99),
        logP99: percentile([...m.logLatencies].sort((a, b) => a - b), 99),
        max: sorted.at(-1) ?? Number.NaN,
        rps: m.latencies.length / Math.max(1, span),
        non2xx: non2xx.map(([s, c]) => `${c}× ${s}`).join(', ') || '0',
        fivexx: non2xx.filter(([s]) => s >= 500).reduce((a, [, c]) => a + c, 0),
      };
    });
    const memoryHeads = fleet.length === 1 ? ['RSS MiB', 'heap MiB'] : fleet.flatMap((p) => [`pds ${p.n} RSS MiB`, `pds ${p.n} heap MiB`]);
    const table = [
      `| minute | answered | req/s | p50 ms | p99 ms | max ms | log-read p99 ms | non-2xx | errors | log_lines | ${memoryHeads.join(' | ')} |`,
      `|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|${memoryHeads.map(() => '---:|').join('')}`,
      ...rows.map(
        (r) =>
          `| ${r.m.minute} | ${r.m.latencies.length} | ${r.rps.toFixed(0)} | ${ms(r.p50)} | ${ms(r.p99)} | ${r.max.toFixed(0)} | ${ms(r.logP99)} | ${r.non2xx} | ${r.m.errors} | ${r.m.logLines ?? '—'} | ${fleet.map((_, i) => `${mib(r.m.rss[i])} | ${mib(r.m.heap[i])}`).join(' | ')} |`,
      ),
    ].join('\n');
    const kinds = [
      '| request | answered | p50 ms | p99 ms | max ms |',
      '|---|---:|---:|---:|---:|',
      ...Object.entries(byKind).map(([kind, l]) => {
        const sorted = [...l].sort((a, b) => a - b);
        return `| ${kind} | ${l.length} | ${ms(percentile(sorted, 50))} | ${ms(percentile(sorted, 99))} | ${(sorted.at(-1) ?? 0).toFixed(0)} |`;
      }),
    ].join('\n');
    const named = (names: string[]) => (names.length === 0 ? '' : `: ${names.slice(0, 10).join(', ')}${names.length > 10 ? `, … ${names.length - 10} more` : ''}`);
    const settlementLines = [
      `settlement: ${settlement.accepted} writes answered 2xx (setup and warm-up included); ${settlement.settled} settled exactly once; settlements logged by ${fleet.map((p, i) => `pds ${p.n}: ${settlement.perProcess[i]}`).join(', ')}`,
      ...(settlement.missing.length ? [`  no audit entry (${settlement.missing.length})${named(settlement.missing)}`] : []),
      ...(settlement.unsettled.length ? [`  still submitted after ${SETTLE_WAIT_MS / 1000} s (${settlement.unsettled.length})${named(settlement.unsettled)}`] : []),
      ...(settlement.duplicates.length
        ? [`  settled more than once (${settlement.duplicates.length})${named(settlement.duplicates.map((d) => `${d.workflow} (${d.entries} entries; logged by pds ${d.settledBy.join(', ') || 'none'})`))}`]
        : []),
      ...(settlement.unlogged.length ? [`  settled, but no process logged settling it (${settlement.unlogged.length})${named(settlement.unlogged)}`] : []),
      ...(settlement.unanswered.length ? [`  audit entries no 2xx answer named (a lost answer; not counted as a miss) (${settlement.unanswered.length})${named(settlement.unanswered)}`] : []),
    ];
    // The logs are deleted with the soak's directory: what went wrong is named here (5xx answers among it).
    const problems = logs
      .flatMap((l, i) => [...l.problems].map(([what, times]) => ({ what, times, n: fleet[i]!.n })))
      .sort((a, b) => b.times - a.times);
    /** The 15 most frequent of `counted` (sorted, most first), one indented line each, and how many kinds were left. */
    const mostFrequent = (counted: { what: string; times: number }[]) => [
      ...counted.slice(0, 15).map((c) => `  ${c.times}× ${c.what}`),
      ...(counted.length > 15 ? [`  … ${counted.length - 15} more kinds`] : []),
    ];
    // What each non-2xx answer said, so a refusal in the table can be told from a fault after the logs are gone.
    const answers = [...refusals].map(([what, times]) => ({ what, times })).sort((a, b) => b.times - a.times);
    const answerLines = answers.length ? ['non-2xx answers, most frequent first:', ...mostFrequent(answers)] : [];
    const problemLines = [
      `pds's warnings and errors: ${problems.reduce((a, p) => a + p.times, 0)} lines${problems.length ? ', most frequent first:' : ''}`,
      ...mostFrequent(problems.map((p) => ({ what: `${fleet.length > 1 ? `[pds ${p.n}] ` : ''}${p.what}`, times: p.times }))),
    ];
    const slopes = fleet.map((p, i) => ({ p, ...rssSlope(rows.map((r) => (r.m.rss[i] === undefined ? undefined : r.m.rss[i]! / 2 ** 20)), slopeAfter) }));
    const slopeTarget = `RSS slope after minute ${slopeAfter} < ${RSS_SLOPE_TARGET} MiB/min`;
    const secretsFound = logs.reduce((a, l) => a + l.secrets.length, 0);
    const logLines = logs.reduce((a, l) => a + l.lines, 0);
    const checks: [string, boolean][] = [
      [`p99 < 50 ms every minute (worst ${ms(Math.max(...rows.map((r) => r.p99)))} ms)`, rows.every((r) => r.p99 < 50)],
      [
        `log reads p99 < 50 ms every minute (worst ${ms(Math.max(...rows.map((r) => (Number.isNaN(r.logP99) ? 0 : r.logP99))))} ms; log_lines ${rows.at(-1)?.m.logLines ?? '—'} rows at the end)`,
        rows.every((r) => Number.isNaN(r.logP99) || r.logP99 < 50),
      ],
      [`no 5xx (${rows.reduce((a, r) => a + r.fivexx, 0)})`, rows.every((r) => r.fivexx === 0)],
      [`no network errors (${rows.reduce((a, r) => a + r.m.errors, 0)})`, rows.every((r) => r.m.errors === 0)],
      [
        `every accepted write settled exactly once across ${fleet.length} pds process${fleet.length > 1 ? 'es' : ''} (${settlement.settled} of ${settlement.accepted}; missing ${settlement.missing.length}, unsettled ${settlement.unsettled.length}, duplicated ${settlement.duplicates.length}, unlogged ${settlement.unlogged.length})`,
        settlement.ok,
      ],
      ...slopes.map(({ p, slope, first: from, last: to }): [string, boolean] => {
        const who = fleet.length > 1 ? `pds ${p.n}: ` : '';
        return Number.isNaN(slope)
          ? [`${who}${slopeTarget} (too short a run to tell: needs ≥ ${slopeAfter + 2} minutes; SOAK_SLOPE_FROM moves the window)`, false]
          : [`${who}${slopeTarget} (${slope.toFixed(2)} MiB/min over minutes ${from}–${to})`, slope < RSS_SLOPE_TARGET];
      }),
      ...fleet.filter((p) => p.died).map((p): [string, boolean] => [`pds ${p.n} ran to the end (${p.died})`, false]),
      [`pds's log${fleet.length > 1 ? 's' : ''} (${logLines} lines) hold${fleet.length > 1 ? '' : 's'} no secret (${secretsFound} found)`, secretsFound === 0],
    ];
    const store = engine === 'postgres' ? 'PostgreSQL (durable)' : 'SQLite';
    const report = [
      `pds soak — ${new Date().toISOString().slice(0, 16)}Z — Node ${process.version}; ${rate} req/s open loop for ${seconds} s; ${writes} writes; ${fleet.length} pds process${fleet.length > 1 ? 'es' : ''} on ${store} with one Redis (REDIS_URL), sandbox backend`,
      `pds's Node flags: ${flags.join(' ') || '(none)'}; pds's C library: ${libc} (the same Node binary as the soak); MALLOC_ARENA_MAX: ${arenas ?? "unset (glibc's default: 8 arenas per core)"}`,
      '',
      table,
      '',
      kinds,
      '',
      ...settlementLines,
      '',
      ...answerLines,
      ...problemLines,
      '',
      ...checks.map(([what, ok]) => `${ok ? 'PASS' : 'MISS'}  ${what}`),
    ].join('\n');
    console.log(report);
    return checks.every(([, ok]) => ok) ? 0 : 1;
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup();
  }
}
