/**
 * `npm run soak` (issue 13 §5; not part of `npm test`): an hour under load, compressed. Starts a redis-server and pds
 * (compiled, in its own process, the image's Node flags, sandbox backend with the default record store, `REDIS_URL`
 * set, proxy trusted so no request is loopback-exempt) and drives it at a steady rate, open loop — requests are sent on
 * schedule whether or not earlier ones have been answered, so a slow pds shows as latency, not as a lower rate.
 *
 * The mix per 100 requests: 1 write (`deploy-service` deploys, each a workflow the sandbox runs to the end, spread over
 * {@link WRITERS} tenant admins: 3 a minute each, within the 20/min write limit; `SOAK_WRITE_PERCENT` changes the
 * share), 20 MCP `tools/call` reads (2025-11-25, stateless), 20 log reads (`GET /api/v1/logs/…?lines=100`), the rest
 * REST reads (service, status, tenant, catalog). Callers rotate over {@link USERS} users, each well within 300
 * requests a minute. A warm-up at the same rate (`SOAK_WARMUP` s, default 15; every token verified once) comes first
 * and is not counted.
 *
 * Per minute: requests, achieved rate, client-side p50/p99/max latency, non-2xx by status, network errors, and pds's
 * RSS and V8 heap at the minute's end. Targets: p99 < 50 ms every minute, no 5xx, RSS growing less than 1 MiB/min
 * after the first two minutes (least-squares slope). pds's own log (JSON lines at `info`: a line per request) is written
 * to a file and searched for secrets at the end.
 *
 * Environment: `SOAK_DURATION` seconds (default 600), `SOAK_RATE` requests/s (default 300), `SOAK_WRITE_PERCENT`
 * (default 1), `SOAK_WARMUP` seconds (default 15), `REDIS_URL` (use that Redis), `BENCH_PDS_FLAGS` (Node flags for pds
 * instead of the image's).
 */
import { once } from 'node:events';
import { createWriteStream, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { issueSelfToken } from '../auth/self-issued.js';
import { freePort, startRedisServer } from '../test/fixtures/redis-server.js';
import { findSecrets } from '../test/helpers/secrets.js';
import { forkEntry } from './child.js';
import { pdsNodeFlags } from './run.js';

const USERS = 200;
/** Users who write: at 1 % of 300/s, 180 writes a minute, 3 each; at 5 %, 15 each (the limit is 20). */
const WRITERS = 60;
const SERVICES = 12;
const SECRET = 'soak-secret-'.padEnd(48, 'x');

interface Minute {
  minute: number;
  latencies: number[];
  statuses: Map<number, number>;
  errors: number;
  rss?: number;
  heap?: number;
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** Least-squares slope of y over x. */
function slope(points: [number, number][]): number {
  const n = points.length;
  if (n < 2) return Number.NaN;
  const mx = points.reduce((s, [x]) => s + x, 0) / n;
  const my = points.reduce((s, [, y]) => s + y, 0) / n;
  const num = points.reduce((s, [x, y]) => s + (x - mx) * (y - my), 0);
  const den = points.reduce((s, [x]) => s + (x - mx) ** 2, 0);
  return num / den;
}

export async function main(): Promise<number> {
  const seconds = Number(process.env.SOAK_DURATION ?? 600);
  const rate = Number(process.env.SOAK_RATE ?? 300);
  const writePct = Number(process.env.SOAK_WRITE_PERCENT ?? 1);
  const warmup = Number(process.env.SOAK_WARMUP ?? 15);
  const cleanups: (() => Promise<unknown> | void)[] = [];
  // Interrupted: still stop pds and Redis.
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
    const dataDir = await mkdtemp(path.join(tmpdir(), 'pds-soak-'));
    cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const logFile = path.join(dataDir, 'pds.log');
    const child = forkEntry('pds-server', {
      env: {
        PORT: String(port),
        HOST: '127.0.0.1',
        PDS_BASE_URL: base,
        PDS_DATA_DIR: dataDir,
        PDS_JWT_SECRET: SECRET,
        PDS_BACKEND: 'sandbox',
        REDIS_URL: redisUrl,
        PDS_TRUST_PROXY: 'true',
        PDS_ADMINS: 'root',
        PDS_SANDBOX_STEP_MS: '100',
        PDS_LOG_LEVEL: 'info',
      },
      execArgv: pdsNodeFlags(),
      stdio: 'pipe',
    });
    const log = createWriteStream(logFile);
    child.stdout!.pipe(log);
    child.stderr!.pipe(process.stderr);
    cleanups.push(async () => {
      if (child.exitCode !== null) return;
      const exited = once(child, 'exit');
      child.send({ type: 'stop' });
      await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
      if (child.exitCode === null) child.kill('SIGKILL');
    });
    const [ready] = (await once(child, 'message')) as [{ url: string }];
    const ask = async <T>(type: string): Promise<T> => {
      child.send({ type });
      const [msg] = (await once(child, 'message')) as [T];
      return msg;
    };

    const secret = new TextEncoder().encode(SECRET);
    const mint = (sub: string) => issueSelfToken(secret, base, { sub, groups: [] }, 4 * 3600);
    const users = Array.from({ length: USERS }, (_, n) => `soak-${n}`);
    const tokens = await Promise.all(users.map(mint));
    const root = await mint('root');
    const forwarded = { 'x-forwarded-for': '198.51.100.77' };
    const send = (token: string, method: string, p: string, body?: unknown, extra: Record<string, string> = {}) =>
      fetch(ready.url + p, {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...forwarded, ...extra },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    const waitFor = async (token: string, name: string) => {
      for (;;) {
        const r = (await (await send(token, 'GET', `/api/v1/workflows/${name}`)).json()) as { audit: { status: string } };
        if (r.audit.status !== 'submitted') return r.audit.status;
        await new Promise((res) => setTimeout(res, 50));
      }
    };
    const expectOk = async (res: Response, what: string) => {
      const body = (await res.json()) as Record<string, unknown>;
      if (!res.ok) throw new Error(`${what}: HTTP ${res.status} ${JSON.stringify(body)}`);
      return body;
    };

    // Setup: one tenant with every soak user (the writers as admins), its repository, SERVICES services.
    const admins = users.slice(0, WRITERS).join(',');
    const members = users.slice(WRITERS).join(',');
    const created = await expectOk(await send(root, 'POST', '/api/v1/operations/create-tenant/execute', { team_name: 'soak', admins: `root,${admins}`, members }), 'create-tenant');
    await waitFor(root, created.workflowName as string);
    await expectOk(await send(root, 'POST', '/api/v1/repos/grant-access', { team_name: 'soak', repo: 'soak/app' }), 'grant-access');
    await expectOk(await send(root, 'POST', '/api/v1/repos/sync', { team: 'soak' }), 'sync');
    for (let s = 0; s < SERVICES; s++) {
      const onboard = await expectOk(
        await send(root, 'POST', '/api/v1/operations/deploy-service/execute', { action: 'onboard', team_name: 'soak', component_name: `svc${s}`, dockerfile_repo: 'soak/app', git_tag: '1.0.0', port: '8080' }),
        `onboard svc${s}`,
      );
      await waitFor(root, onboard.workflowName as string);
    }

    // The load: open loop, `rate` a second, in ticks of 10 ms.
    const minutes: Minute[] = [];
    const minuteOf = (i: number) => (minutes[i] ??= { minute: i + 1, latencies: [], statuses: new Map(), errors: 0 });
    let n = 0;
    let writes = 0;
    let inflight = 0;
    let t0 = Date.now();
    const byKind: Record<string, number[]> = {};
    const warmupMinute: Minute = { minute: 0, latencies: [], statuses: new Map(), errors: 0 };
    const one = (warming = false) => {
      const k = n++;
      const user = k % USERS;
      const token = tokens[user]!;
      const svc = `svc${k % SERVICES}`;
      const slot = k % 100;
      let request: Promise<Response>;
      const kind = slot < writePct ? 'write (deploy-service)' : slot < writePct + 20 ? 'MCP tools/call' : slot < writePct + 40 ? 'log read' : 'REST read';
      if (slot < writePct) {
        const writer = writes++ % WRITERS;
        request = send(tokens[writer]!, 'POST', '/api/v1/operations/deploy-service/execute', {
          action: 'deploy', team_name: 'soak', component_name: `svc${writer % SERVICES}`, dockerfile_repo: 'soak/app', git_tag: `1.${Math.floor(writes / WRITERS)}.${writer}`,
        });
      } else if (slot < writePct + 20) {
        request = send(token, 'POST', '/mcp', { jsonrpc: '2.0', id: k, method: 'tools/call', params: { name: slot % 2 ? 'platform_get_service' : 'platform_get_status', arguments: { team: 'soak', app: svc } } }, {
          accept: 'application/json, text/event-stream',
        });
      } else if (slot < writePct + 40) {
        request = send(token, 'GET', `/api/v1/logs/soak/${svc}?lines=100&since=1h`);
      } else {
        const reads = [`/api/v1/services/soak/${svc}`, `/api/v1/status/soak/${svc}`, '/api/v1/tenants/soak', '/api/v1/operations'];
        request = send(token, 'GET', reads[slot % reads.length]!);
      }
      const started = performance.now();
      const minute = warming ? warmupMinute : minuteOf(Math.min(Math.floor((Date.now() - t0) / 60_000), Math.ceil(seconds / 60) - 1));
      const kindLatencies = warming ? [] : (byKind[kind] ??= []);
      inflight++;
      request
        .then(async (res) => {
          await res.arrayBuffer();
          const ms = performance.now() - started;
          minute.latencies.push(ms);
          kindLatencies.push(ms);
          minute.statuses.set(res.status, (minute.statuses.get(res.status) ?? 0) + 1);
        })
        .catch(() => {
          minute.errors++;
        })
        .finally(() => inflight--);
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
    process.stderr.write(`soak: ${rate} req/s for ${seconds} s against ${ready.url} (pds log: ${logFile})\n`);
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
          void ask<{ rss: number; heapUsed: number }>('rss').then(({ rss, heapUsed }) => {
            const m = minuteOf(index);
            m.rss = rss;
            m.heap = heapUsed;
            const sorted = [...m.latencies].sort((a, b) => a - b);
            process.stderr.write(`soak: minute ${index + 1}: ${m.latencies.length} answered, p99 ${percentile(sorted, 99).toFixed(1)} ms, RSS ${(rss / 2 ** 20).toFixed(0)} MiB\n`);
          });
        }
        if (now >= end) {
          clearInterval(tick);
          resolve();
        }
      }, 10);
    });
    const drainUntil = Date.now() + 10_000;
    while (inflight > 0 && Date.now() < drainUntil) await new Promise((r) => setTimeout(r, 50));
    await new Promise((r) => setTimeout(r, 200)); // the last minute's memory sample
    const final = await ask<{ rss: number; heapUsed: number }>('rss');
    const last = minutes.at(-1)!;
    last.rss ??= final.rss;
    last.heap ??= final.heapUsed;

    // Report.
    const rows = minutes.map((m) => {
      const sorted = [...m.latencies].sort((a, b) => a - b);
      const non2xx = [...m.statuses].filter(([s]) => s < 200 || s >= 300);
      const span = Math.min(60, (Math.min(Date.now(), end) - t0) / 1000 - (m.minute - 1) * 60);
      return {
        m,
        p50: percentile(sorted, 50),
        p99: percentile(sorted, 99),
        max: sorted.at(-1) ?? Number.NaN,
        rps: m.latencies.length / Math.max(1, span),
        non2xx: non2xx.map(([s, c]) => `${c}× ${s}`).join(', ') || '0',
        fivexx: non2xx.filter(([s]) => s >= 500).reduce((a, [, c]) => a + c, 0),
      };
    });
    const mib = (b?: number) => (b === undefined ? '—' : (b / 2 ** 20).toFixed(1));
    const table = [
      '| minute | answered | req/s | p50 ms | p99 ms | max ms | non-2xx | errors | RSS MiB | heap MiB |',
      '|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|',
      ...rows.map((r) => `| ${r.m.minute} | ${r.m.latencies.length} | ${r.rps.toFixed(0)} | ${r.p50.toFixed(1)} | ${r.p99.toFixed(1)} | ${r.max.toFixed(0)} | ${r.non2xx} | ${r.m.errors} | ${mib(r.m.rss)} | ${mib(r.m.heap)} |`),
    ].join('\n');
    const kinds = [
      '| request | answered | p50 ms | p99 ms | max ms |',
      '|---|---:|---:|---:|---:|',
      ...Object.entries(byKind).map(([kind, l]) => {
        const sorted = [...l].sort((a, b) => a - b);
        return `| ${kind} | ${l.length} | ${percentile(sorted, 50).toFixed(1)} | ${percentile(sorted, 99).toFixed(1)} | ${(sorted.at(-1) ?? 0).toFixed(0)} |`;
      }),
    ].join('\n');
    const settled = rows.filter((r) => r.m.minute > 2 && r.m.rss !== undefined).map((r) => [r.m.minute, r.m.rss! / 2 ** 20] as [number, number]);
    const rssSlope = slope(settled);
    const logText = readFileSync(logFile, 'utf8');
    const logLines = logText.split('\n').filter(Boolean).length;
    const secrets = findSecrets(logText, [SECRET, root, ...tokens]);
    const checks: [string, boolean][] = [
      [`p99 < 50 ms every minute (worst ${Math.max(...rows.map((r) => r.p99)).toFixed(1)} ms)`, rows.every((r) => r.p99 < 50)],
      [`no 5xx (${rows.reduce((a, r) => a + r.fivexx, 0)})`, rows.every((r) => r.fivexx === 0)],
      [`no network errors (${rows.reduce((a, r) => a + r.m.errors, 0)})`, rows.every((r) => r.m.errors === 0)],
      [
        settled.length >= 2
          ? `RSS slope after minute 2 < 1 MiB/min (${rssSlope.toFixed(2)} MiB/min over minutes ${settled[0]![0]}–${settled.at(-1)![0]})`
          : 'RSS slope after minute 2 < 1 MiB/min (too short a run to tell: needs ≥ 4 minutes)',
        settled.length >= 2 && rssSlope < 1,
      ],
      [`pds's log (${logLines} lines) holds no secret (${secrets.length} found)`, secrets.length === 0],
    ];
    const report = [
      `pds soak — ${new Date().toISOString().slice(0, 16)}Z — Node ${process.version}; ${rate} req/s open loop for ${seconds} s; ${writes} writes; pds with REDIS_URL, sandbox backend`,
      '',
      table,
      '',
      kinds,
      '',
      ...checks.map(([what, ok]) => `${ok ? 'PASS' : 'MISS'}  ${what}`),
    ].join('\n');
    console.log(report);
    return checks.every(([, ok]) => ok) ? 0 : 1;
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup();
  }
}
