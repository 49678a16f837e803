/**
 * Issue 13 §1: one structured line per request (request id, user, route or tool, status, duration, limit decision),
 * the request id answered in `X-Request-Id` and on every error's line, workflow transitions, upstream failures with
 * their cause — and no secret in any of it. pds runs with the production logger (`createLogger`, its redaction) at
 * `trace`, writing into memory; every secret the scenario hands pds is then searched for in the whole log.
 */
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger, type Logger } from '../../core/logger.js';
import { findSecrets } from '../helpers/secrets.js';
import { freePort } from '../fixtures/free-port.js';
import { registerRepository, startTestServer, waitForWorkflow, type TestServer } from '../helpers/server.js';
import { startGitHubFixture, type GitHubFixture } from '../fixtures/github-api.js';

interface Line {
  level: number;
  msg: string;
  [field: string]: unknown;
}

/** The production logger at `trace`, its JSON lines kept as text. */
function memoryLogger(): { log: Logger; text: () => string; lines: () => Line[] } {
  let text = '';
  const sink = new Writable({
    write(chunk, _encoding, done) {
      text += String(chunk);
      done();
    },
  });
  return {
    log: createLogger({ level: 'trace', destination: sink, pretty: false }),
    text: () => text,
    lines: () => text.split('\n').filter(Boolean).map((l) => JSON.parse(l) as Line),
  };
}

const ENV_SECRET = 'sk_live_env_value_9f8e7d6c5b4a';
const METRICS_TOKEN = 'metrics-token-0123456789abcdef';
const PAT = `ghp_${'L'.repeat(36)}`;
const FORWARDED = { 'x-forwarded-for': '198.51.100.23' };

let pds: TestServer;
let gh: GitHubFixture;
const memory = memoryLogger();
/** Every secret handed to pds in this file. */
const secrets: string[] = [ENV_SECRET, METRICS_TOKEN, PAT];

async function call(token: string | undefined, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(pds.url + path, {
    method,
    headers: { 'content-type': 'application/json', ...(token && { authorization: `Bearer ${token}` }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
}

/**
 * The request line of the request answered with this id. pds writes it when the response closes on its side, which
 * nothing orders before the client reading the answer: wait for it (up to 10 s).
 */
async function lineOf(requestId: string | null): Promise<Line> {
  const of = () => memory.lines().filter((l) => l.reqId === requestId && typeof l.status === 'number');
  await expect.poll(() => of().length, { timeout: 10_000, message: `the request line of ${requestId}` }).toBeGreaterThan(0);
  const found = of();
  expect(found, `one request line for ${requestId}`).toHaveLength(1);
  return found[0]!;
}

beforeAll(async () => {
  gh = await startGitHubFixture();
  gh.addToken(PAT, 'octocat', ['read:user']);
  pds = await startTestServer({ PDS_TRUST_PROXY: 'true', PDS_GITHUB_API_URL: gh.url, PDS_METRICS_TOKEN: METRICS_TOKEN }, { log: memory.log });
  const root = await pds.token('root');
  const alice = await pds.token('alice');
  secrets.push(root, alice);
  const created = await call(root, 'POST', '/api/v1/operations/create-tenant/execute', { team_name: 'acme', admins: 'alice' }, FORWARDED);
  expect(created.status).toBe(200);
  await waitForWorkflow(pds, 'root', created.body.workflowName);
  await registerRepository(pds, 'alice', 'acme', 'acme/web');
  const onboard = await call(alice, 'POST', '/api/v1/operations/deploy-service/execute', {
    action: 'onboard', team_name: 'acme', component_name: 'web', dockerfile_repo: 'acme/web', git_tag: '0.1.0', port: '8080',
  }, FORWARDED);
  expect(onboard.status).toBe(200);
  await waitForWorkflow(pds, 'alice', onboard.body.workflowName);
});

afterAll(async () => {
  await pds?.stop();
  await gh?.close();
});

describe('a line per request', () => {
  it('names the request id, user, route, tool, outcome, status, duration and the limit decision', async () => {
    const token = await pds.token('alice');
    const res = await call(token, 'GET', '/api/v1/services/acme/web', undefined, FORWARDED);
    expect(res.status).toBe(200);
    const id = res.headers.get('x-request-id');
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    expect(await lineOf(id)).toMatchObject({
      level: 30,
      method: 'GET',
      route: '/api/v1/services/:team/:app',
      status: 200,
      ms: expect.any(Number),
      user: 'alice',
      tool: 'platform_get_service',
      outcome: 'ok',
      limit: 'allowed',
    });
  });

  it('keeps a caller\'s request id when it is a plain token, and replaces one that is not', async () => {
    const kept = await call(undefined, 'GET', '/healthz', undefined, { 'x-request-id': 'edge-proxy.4711' });
    expect(kept.headers.get('x-request-id')).toBe('edge-proxy.4711');
    expect(await lineOf('edge-proxy.4711')).toMatchObject({ route: '/healthz', status: 200 });
    const replaced = await call(undefined, 'GET', '/healthz', undefined, { 'x-request-id': 'has spaces and {json}' });
    expect(replaced.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('says loopback callers are exempt from the route limit', async () => {
    const token = await pds.token('alice');
    const exempt = await call(token, 'GET', '/api/v1/tenants');
    expect(await lineOf(exempt.headers.get('x-request-id'))).toMatchObject({ limit: 'exempt', user: 'alice' });
  });

  it('puts the request id and the error on every error answer\'s line', async () => {
    const token = await pds.token('alice');
    const answers = [
      await call(undefined, 'GET', '/api/v1/services'),
      await call('not-a-token', 'GET', '/api/v1/services'),
      await call(token, 'GET', '/api/v1/services/acme/nope', undefined, FORWARDED),
      await call(token, 'GET', '/nowhere'),
      await call(token, 'POST', '/api/v1/operations/deploy-service/execute', { action: 'update-config', team_name: 'acme', component_name: 'web', env_vars: `TOKEN=${ENV_SECRET}\n1BAD=x` }, FORWARDED),
    ];
    for (const res of answers) {
      expect(res.status).toBeGreaterThanOrEqual(400);
      const line = await lineOf(res.headers.get('x-request-id'));
      expect(line.error, JSON.stringify(line)).toBe(res.body.error);
      expect(line.status).toBe(res.status);
    }
    expect(await lineOf(answers[2]!.headers.get('x-request-id'))).toMatchObject({ code: 'NOT_FOUND', tool: 'platform_get_service', outcome: 'NOT_FOUND' });
  });

  it('names the tool, the MCP method and the outcome of an MCP call', async () => {
    const token = await pds.token('alice');
    const res = await call(token, 'POST', '/mcp', { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'platform_get_status', arguments: { team: 'acme', app: 'nope' } } }, {
      accept: 'application/json, text/event-stream',
      ...FORWARDED,
    });
    expect(res.status).toBe(200);
    expect(res.body.result.isError).toBe(true);
    expect(await lineOf(res.headers.get('x-request-id'))).toMatchObject({
      route: '/mcp', mcp: 'tools/call', tool: 'platform_get_status', outcome: 'NOT_FOUND', user: 'alice', status: 200, limit: 'allowed', error: res.body.result.content[0].text,
    });
  });

  it('caps and cleans the JSON-RPC method it logs: 900 KB of method with line breaks is one short line', async () => {
    const token = await pds.token('alice');
    const method = `tools/call\n{"level":60,"msg":"forged"}\u2028\u001b[31m${'x'.repeat(900_000)}`;
    const res = await call(token, 'POST', '/mcp', { jsonrpc: '2.0', id: 9, method }, { accept: 'application/json, text/event-stream' });
    const line = await lineOf(res.headers.get('x-request-id'));
    const logged = line.mcp as string;
    expect(logged.length).toBeLessThan(120);
    expect(logged).toMatch(/^tools\/call\?\{"level":60,"msg":"forged"\}\?\?\[31mx+…\(900\d{3} characters\)$/);
    expect(logged).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/);
    expect(memory.lines().filter((l) => l.msg === 'forged')).toHaveLength(0);
    expect(JSON.stringify(line).length).toBeLessThan(2000);
  });

  it('logs an upstream failure with its cause, at warn', async () => {
    const unreachable = await startTestServer({ PDS_GITHUB_API_URL: `http://127.0.0.1:${await freePort()}` }, { log: memory.log });
    try {
      const res = await fetch(`${unreachable.url}/api/v1/tenants`, { headers: { authorization: `Bearer ghp_${'U'.repeat(36)}` } });
      expect(res.status).toBe(503);
      const line = await lineOf(res.headers.get('x-request-id'));
      expect(line).toMatchObject({ level: 40, status: 503, code: 'UNAVAILABLE' });
      const err = line.err as { message: string; stack: string };
      expect(err.stack).toMatch(/caused by/i); // the fetch failure under pds's error
    } finally {
      await unreachable.stop();
    }
  });
});

describe('workflow transitions', () => {
  it('logs a submitted workflow on the request line, each step as it runs, and its settlement', async () => {
    const token = await pds.token('alice');
    const res = await call(token, 'POST', '/api/v1/operations/deploy-service/execute', { action: 'deploy', team_name: 'acme', component_name: 'web', dockerfile_repo: 'acme/web', git_tag: '0.2.0' }, FORWARDED);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(await lineOf(res.headers.get('x-request-id'))).toMatchObject({ tool: 'platform_deploy_service', workflow: res.body.workflowName });
    await waitForWorkflow(pds, 'alice', res.body.workflowName);
    await expect.poll(() => memory.lines().find((l) => l.workflow === res.body.workflowName && l.phase), { timeout: 10_000 }).toMatchObject({
      operation: 'deploy-service', phase: 'succeeded', seconds: expect.any(Number), msg: `workflow ${res.body.workflowName} succeeded`,
    });
    // A line per step as it ran, in order, each saying which of how many.
    const steps = memory.lines().filter((l) => l.workflow === res.body.workflowName && l.step);
    expect(steps.length).toBeGreaterThan(1);
    expect(steps.map((l) => l.index)).toEqual(steps.map((_, i) => i + 1));
    expect(steps.every((l) => l.of === steps.length && l.status === 'succeeded' && l.operation === 'deploy-service')).toBe(true);
  });
});

describe('secrets', () => {
  it('never logs tokens, Authorization headers, confirm values or env values', async () => {
    const alice = await pds.token('alice');
    // Env values, accepted and refused; a confirmation asked for and given; a PAT; the metrics token.
    const config = await call(alice, 'POST', '/api/v1/operations/deploy-service/execute', { action: 'update-config', team_name: 'acme', component_name: 'web', env_vars: `API_TOKEN=${ENV_SECRET}` }, FORWARDED);
    expect(config.status).toBe(200);
    await waitForWorkflow(pds, 'alice', config.body.workflowName);
    const ask = await call(alice, 'POST', '/api/v1/operations/retire-service/execute', { team_name: 'acme', component_name: 'web' }, FORWARDED);
    expect(ask.status).toBe(400);
    const confirm = ask.headers.get('pds-confirm')!;
    secrets.push(confirm);
    const retired = await call(alice, 'POST', '/api/v1/operations/retire-service/execute', { team_name: 'acme', component_name: 'web', confirm }, FORWARDED);
    expect(retired.status).toBe(200);
    await waitForWorkflow(pds, 'alice', retired.body.workflowName);
    expect((await call(PAT, 'GET', '/api/v1/operations', undefined, FORWARDED)).status).toBe(200);
    expect((await fetch(`${pds.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).status).toBe(200);
    expect((await call(`${alice}x`, 'GET', '/api/v1/tenants', undefined, FORWARDED)).status).toBe(401);
    // The same secrets written straight at the logger, in the places redaction covers.
    memory.log.info({ req: { headers: { authorization: `Bearer ${alice}` } }, parameters: { env_vars: `API_TOKEN=${ENV_SECRET}`, confirm } }, 'redaction probe');
    memory.log.info({ authorization: `Bearer ${PAT}`, token: METRICS_TOKEN, confirm }, 'redaction probe');

    const text = memory.text();
    expect(text.split('\n').length).toBeGreaterThan(30);
    expect(text).toContain('[redacted]'); // the probes' fields were there and were redacted
    expect(findSecrets(text, secrets)).toEqual([]);
  });

  it('finds a secret when one is there (the check can fail)', () => {
    const alice = secrets[3]!;
    expect(findSecrets(JSON.stringify({ msg: 'x', header: `Bearer ${alice}` }))).not.toEqual([]);
    expect(findSecrets(JSON.stringify({ env: ENV_SECRET }), [ENV_SECRET])).not.toEqual([]);
    expect(findSecrets(JSON.stringify({ env_vars: `A=${ENV_SECRET}` }))).not.toEqual([]);
    expect(findSecrets(JSON.stringify({ env_vars: 'A=***' }))).toEqual([]);
  });
});
