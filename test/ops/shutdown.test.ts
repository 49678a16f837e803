/**
 * Issue 13 §3: SIGTERM to a real `pds serve` process during a burst. Every request pds had accepted is answered
 * (writes, MCP calls, log reads; each with its body still arriving when the signal comes), the process exits 0, and
 * no operation is lost: a second pds on the same data directory knows every workflow the first one acknowledged and
 * runs the ones the first left running to the end.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { once } from 'node:events';
import { request } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { issueSelfToken } from '../../auth/self-issued.js';
import { freePort } from '../fixtures/free-port.js';
import { until } from '../helpers/until.js';

const SECRET = 'shutdown-test-secret-'.padEnd(48, 'x');
const METRICS_TOKEN = 'shutdown-test-metrics-token';
const PDS = path.resolve('bin/pds-src.js');

interface Pds {
  child: ChildProcessWithoutNullStreams;
  url: string;
  output: () => string;
  exited: Promise<number | null>;
}

let dataDir: string;
let port: number;
const started: Pds[] = [];

async function startPds(): Promise<Pds> {
  const child = spawn(process.execPath, [PDS, 'serve'], {
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      PDS_BASE_URL: `http://127.0.0.1:${port}`,
      PDS_DATA_DIR: dataDir,
      PDS_JWT_SECRET: SECRET,
      PDS_METRICS_TOKEN: METRICS_TOKEN,
      PDS_ADMINS: 'root',
      REDIS_URL: inject('redisUrl'),
      PDS_SANDBOX_STEP_MS: '250',
      PDS_SHUTDOWN_S: '10',
      PDS_LOG_LEVEL: 'info',
    },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d) => (output += d));
  child.stderr.on('data', (d) => (output += d));
  const exited = once(child, 'exit').then(([code]) => code as number | null);
  const pds = { child, url: `http://127.0.0.1:${port}`, output: () => output, exited };
  started.push(pds);
  // Starting through tsx takes seconds on a quiet machine and many more on a loaded one: a generous bound.
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`pds exited early:\n${output}`);
    if (await fetch(`${pds.url}/healthz`).then((r) => r.ok, () => false)) return pds;
    if (Date.now() > deadline) throw new Error(`pds did not start:\n${output}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const token = (user: string) => issueSelfToken(new TextEncoder().encode(SECRET), `http://127.0.0.1:${port}`, { sub: user, groups: [] }, 3600);

async function api(user: string, method: string, p: string, body?: unknown) {
  const res = await fetch(`http://127.0.0.1:${port}${p}`, {
    method,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${await token(user)}` },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

/**
 * Bearer tokens pds has looked up so far (`pds_token_cache_lookups_total{cache="jwt"}`, one per authenticated
 * request): a request counted here has had its headers read; pds reads its body only after authenticating it.
 */
async function authenticated(url: string): Promise<number> {
  const res = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
  expect(res.status).toBe(200);
  let sum = 0;
  for (const m of (await res.text()).matchAll(/^pds_token_cache_lookups_total\{[^}]*cache="jwt"[^}]*\} (\d+)$/gm)) sum += Number(m[1]);
  return sum;
}

async function settled(user: string, name: string, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await api(user, 'GET', `/api/v1/workflows/${name}`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    if (res.body.audit.status !== 'submitted') return res.body;
    if (Date.now() > deadline) throw new Error(`${name} did not settle`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * A request whose body arrives in two halves: the headers and the first half now, the rest when `finish()` is called.
 * Resolves `answer` with the status and body, or rejects with the socket error.
 */
function halfSent(user: string, method: string, p: string, body: unknown, headers: Record<string, string> = {}) {
  const text = JSON.stringify(body);
  const cut = Math.floor(text.length / 2);
  let finish!: () => void;
  const answer = token(user).then(
    (bearer) =>
      new Promise<{ status: number; body: any }>((resolve, reject) => {
        const req = request(`http://127.0.0.1:${port}${p}`, {
          method,
          agent: false,
          headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), authorization: `Bearer ${bearer}`, ...headers },
        });
        req.on('error', reject);
        req.on('response', (res) => {
          let data = '';
          res.on('data', (d) => (data += d));
          res.on('end', () => resolve({ status: res.statusCode!, body: data ? JSON.parse(data) : undefined }));
          res.on('error', reject);
        });
        req.write(text.slice(0, cut));
        finish = () => req.end(text.slice(cut));
      }),
  );
  return { answer, finish: () => finish() };
}

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(tmpdir(), 'pds-shutdown-'));
  port = await freePort();
});

afterAll(async () => {
  for (const pds of started) if (pds.child.exitCode === null) pds.child.kill('SIGKILL');
  await rm(dataDir, { recursive: true, force: true });
});

it('finishes every accepted request on SIGTERM, exits 0, and the next pds resumes every acknowledged operation', async () => {
  const first = await startPds();
  const created = await api('root', 'POST', '/api/v1/operations/create-tenant/execute', { team_name: 'acme', admins: 'alice,bob' });
  expect(created.status).toBe(200);
  await settled('root', created.body.workflowName);
  expect((await api('alice', 'POST', '/api/v1/repos/grant-access', { team_name: 'acme', repo: 'acme/web' })).status).toBe(200);
  expect((await api('alice', 'POST', '/api/v1/repos/sync', { team: 'acme' })).status).toBe(200);
  const services = ['web', 'api', 'worker', 'cron'];
  for (const app of services) {
    const onboard = await api('alice', 'POST', '/api/v1/operations/deploy-service/execute', {
      action: 'onboard', team_name: 'acme', component_name: app, dockerfile_repo: 'acme/web', git_tag: '1.0.0', port: '8080',
    });
    expect(onboard.status, JSON.stringify(onboard.body)).toBe(200);
    await settled('alice', onboard.body.workflowName);
  }

  const before = await authenticated(first.url);
  // The burst: writes (a deploy per service, by two users), MCP calls and log reads, each with half its body sent.
  const mcpHeaders = { accept: 'application/json, text/event-stream' };
  const burst = [
    ...services.flatMap((app, i) => [
      halfSent(i % 2 ? 'bob' : 'alice', 'POST', '/api/v1/operations/deploy-service/execute', { action: 'deploy', team_name: 'acme', component_name: app, dockerfile_repo: 'acme/web', git_tag: '1.1.0' }),
    ]),
    ...Array.from({ length: 8 }, (_, i) =>
      halfSent('alice', 'POST', '/mcp', { jsonrpc: '2.0', id: i, method: 'tools/call', params: { name: i % 2 ? 'platform_get_logs' : 'platform_get_service', arguments: { team: 'acme', app: services[i % 4] } } }, mcpHeaders),
    ),
    ...Array.from({ length: 8 }, (_, i) => halfSent('bob', 'POST', '/api/v1/repos/sync', { team: 'acme', pad: i })),
  ];
  // Every request's headers are in (each bearer token looked up): pds is waiting for their bodies.
  await until('pds to have read every request of the burst', async () => (await authenticated(first.url)) - before >= burst.length, 20);
  first.child.kill('SIGTERM');
  // The drain has begun once the listener is closed.
  const refused = () => fetch(`${first.url}/healthz`).then(() => 'answered', (err: Error) => (err.cause as { code?: string })?.code);
  await until('the listener to close', async () => (await refused()) === 'ECONNREFUSED', 20);
  for (const r of burst) r.finish();
  const answers = await Promise.all(burst.map((r) => r.answer));

  expect(answers.map((a) => a.status)).toEqual(burst.map(() => 200));
  for (const a of answers.filter((x) => x.body.result)) expect(a.body.result.isError, JSON.stringify(a.body)).toBeFalsy();
  const acknowledged = answers.map((a) => a.body.workflowName as string | undefined).filter((n): n is string => !!n);
  expect(acknowledged).toHaveLength(services.length);
  expect(await first.exited).toBe(0);
  const lines = first.output().split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l));
  expect(lines.find((l) => l.msg === 'pds stopped')).toMatchObject({ unfinished: 0 });
  expect(lines.filter((l) => l.status >= 500)).toEqual([]);

  // The next pds on the same data directory: every acknowledged operation is there; those left running finish.
  await startPds();
  const atRestart = await Promise.all(acknowledged.map((name) => api('alice', 'GET', `/api/v1/workflows/${name}`)));
  expect(atRestart.map((r) => r.status)).toEqual(acknowledged.map(() => 200));
  expect(atRestart.some((r) => r.body.audit.status === 'submitted')).toBe(true); // left running by the first pds
  for (const name of acknowledged) expect((await settled('alice', name)).audit.status).toBe('succeeded');
}, 120_000);

it('signals the platform (Platform.shutdown, readiness) at the start of the drain and still answers what is in flight', async () => {
  const { startTestServer } = await import('../helpers/server.js');
  const pds = await startTestServer({ PDS_JWT_SECRET: SECRET, PDS_METRICS_TOKEN: METRICS_TOKEN });
  port = pds.port;
  const before = await authenticated(pds.url);
  const inFlight = halfSent('root', 'POST', '/api/v1/repos/sync', { team: 'nope' });
  await until('pds to have read the request\'s headers', async () => (await authenticated(pds.url)) > before, 20);
  const stopping = pds.shutdown(5_000);
  expect(pds.platform.shutdown.aborted).toBe(true); // waits answer at once from here on
  expect(await pds.platform.ready()).toBe(false);
  inFlight.finish();
  expect((await inFlight.answer).status).toBe(404); // answered, not cut off
  expect(await stopping).toEqual({ unfinished: 0 });
  await pds.stop();
});
