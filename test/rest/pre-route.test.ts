/**
 * Pre-routed reads (issue 23 item 2, `rest/pre-route.ts`): a `GET` to a fixed-path tool route is found without asking
 * the routers — and still passes every gate: authentication, the per-user route limit counted in Redis, scopes, the
 * tool's invocation, the request line and the metrics. Other methods and paths go through the routers as before.
 */
import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import Router from '@koa/router';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { issueSelfToken, loadOrCreateSecret } from '../../auth/self-issued.js';
import { createLogger } from '../../core/logger.js';
import { preRoute } from '../../rest/pre-route.js';
import { createRouteLimit } from '../../rest/ratelimit.js';
import { createRouter } from '../../rest/router.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const METRICS_TOKEN = 'pre-route-metrics-token-0123456789';
const FORWARDED = { 'x-forwarded-for': '198.51.100.40' };
/** The route limit of this file's pds: small, so the test reaches it. */
const MAX = 3;

let pds: TestServer;
let redis: Redis;
let lines = '';
const namespace = `pds:test:preroute:${randomUUID().slice(0, 8)}`;

beforeAll(async () => {
  redis = new Redis(inject('redisUrl'));
  const sink = new Writable({
    write(chunk, _encoding, done) {
      lines += String(chunk);
      done();
    },
  });
  pds = await startTestServer(
    { REDIS_URL: inject('redisUrl'), PDS_TRUST_PROXY: 'true', PDS_METRICS_TOKEN: METRICS_TOKEN },
    { log: createLogger({ level: 'info', destination: sink, pretty: false }), routeLimit: createRouteLimit({ redis, trustProxy: true, max: MAX, namespace }) },
  );
});

afterAll(async () => {
  await pds?.stop();
  redis?.disconnect();
});

const unique = (name: string) => `${name}-${randomUUID().slice(0, 8)}`;

async function read(user: string | undefined, init: { method?: string; scope?: string } = {}) {
  const headers: Record<string, string> = { ...FORWARDED };
  if (user) {
    const secret = await loadOrCreateSecret(pds.config.jwtSecret, pds.dataDir);
    const token = await issueSelfToken(secret, pds.config.baseUrl, { sub: user, groups: [], ...(init.scope !== undefined && { scope: init.scope }) }, 600);
    headers.authorization = `Bearer ${token}`;
  }
  const res = await fetch(`${pds.url}/api/v1/operations`, { method: init.method ?? 'GET', headers });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

/** The request line answered with `requestId`; written when the response closes, which nothing orders before the read. */
async function lineOf(requestId: string | null): Promise<Record<string, unknown>> {
  const find = () =>
    lines
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .find((l) => l.reqId === requestId && typeof l.status === 'number');
  await expect.poll(find, { timeout: 10_000, message: `the request line of ${requestId}` }).toBeDefined();
  return find()!;
}

/** The caller's one request was counted in Redis, and its request line names the route, the tool and an allowed call. */
async function expectCountedAndLogged(res: { headers: Headers }, user: string, method: string, route: string): Promise<void> {
  expect(await redis.zcard(`${namespace}:${user}`)).toBe(1);
  expect(await lineOf(res.headers.get('x-request-id'))).toMatchObject({
    method,
    route,
    status: 200,
    user,
    tool: 'platform_list_operations',
    outcome: 'ok',
    limit: 'allowed',
  });
}

async function metric(pattern: RegExp): Promise<number> {
  const res = await fetch(`${pds.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
  const match = pattern.exec(await res.text());
  return match ? Number(match[1]) : 0;
}

describe('a pre-routed read', () => {
  it('is found without asking any router', async () => {
    const match = vi.spyOn(Router.prototype, 'match');
    try {
      const res = await read(unique('alice'));
      expect(res.status).toBe(200);
      expect(match).not.toHaveBeenCalled();
      // A path with parameters still goes through the routers.
      await fetch(`${pds.url}/api/v1/operations/create-tenant`, { headers: FORWARDED });
      expect(match).toHaveBeenCalled();
    } finally {
      match.mockRestore();
    }
  });

  it('counts the caller in Redis, writes the request line and the metrics, and answers with every header', async () => {
    const user = unique('bob');
    const before = await metric(/^pds_http_requests_total\{method="GET",route="\/api\/v1\/operations",status="200"\} (\d+)/m);
    const res = await read(user);
    expect(res.status).toBe(200);
    expect(JSON.parse(res.text).items).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'create-tenant' })]));
    expect(res.headers.get('ratelimit-limit')).toBe(String(MAX));
    expect(res.headers.get('ratelimit-remaining')).toBe(String(MAX - 1));
    expect(res.headers.get('etag')).toMatch(/^W\/"sha256-/);
    expect(res.headers.get('content-security-policy')).toBe("frame-ancestors 'none'");
    await expectCountedAndLogged(res, user, 'GET', '/api/v1/operations');
    await expect
      .poll(() => metric(/^pds_http_requests_total\{method="GET",route="\/api\/v1\/operations",status="200"\} (\d+)/m), { timeout: 10_000 })
      .toBe(before + 1);
    expect(await metric(/^pds_tool_calls_total\{tool="platform_list_operations",door="rest",outcome="ok"\} (\d+)/m)).toBeGreaterThan(0);
  });

  it('refuses a caller over the limit with 429, and one without a token with 401, each named by its route', async () => {
    const counted = (status: number) => metric(new RegExp(`^pds_http_requests_total\\{method="GET",route="\\/api\\/v1\\/operations",status="${status}"\\} (\\d+)`, 'm'));
    const [before429, before401] = [await counted(429), await counted(401)];
    const user = unique('carol');
    for (let i = 0; i < MAX; i++) expect((await read(user)).status).toBe(200);
    const refused = await read(user);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(await lineOf(refused.headers.get('x-request-id'))).toMatchObject({
      method: 'GET',
      route: '/api/v1/operations',
      status: 429,
      limit: 'refused',
      code: 'RATE_LIMITED',
    });
    const anonymous = await read(undefined);
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('www-authenticate')).toMatch(/resource_metadata=/);
    expect(await lineOf(anonymous.headers.get('x-request-id'))).toMatchObject({ method: 'GET', route: '/api/v1/operations', status: 401 });
    await expect.poll(() => counted(429), { timeout: 10_000 }).toBe(before429 + 1);
    await expect.poll(() => counted(401), { timeout: 10_000 }).toBe(before401 + 1);
  });

  it('names a route with parameters and /mcp by their routes when authentication refuses them', async () => {
    const operation = await fetch(`${pds.url}/api/v1/operations/create-tenant`, { headers: FORWARDED });
    expect(operation.status).toBe(401);
    expect(await lineOf(operation.headers.get('x-request-id'))).toMatchObject({ method: 'GET', route: '/api/v1/operations/:name', status: 401 });
    const mcp = await fetch(`${pds.url}/mcp`, { method: 'POST', headers: { ...FORWARDED, 'content-type': 'application/json' }, body: '{}' });
    expect(mcp.status).toBe(401);
    expect(await lineOf(mcp.headers.get('x-request-id'))).toMatchObject({ method: 'POST', route: '/mcp', status: 401 });
    const text = await (await fetch(`${pds.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text();
    expect(text).not.toMatch(/route="[^"]*\(\?:/);
  });

  it('checks the token scopes in invoke()', async () => {
    const res = await read(unique('dave'), { scope: 'pds:write' });
    expect(res.status).toBe(403);
    expect(res.headers.get('pds-error-code')).toBe('FORBIDDEN');
    expect(res.headers.get('www-authenticate')).toMatch(/insufficient_scope/);
  });

  it('leaves other methods to the routers: 405 with Allow, HEAD answered', async () => {
    const post = await read(unique('erin'), { method: 'POST' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toMatch(/GET/);
    const head = await read(unique('erin'), { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.text).toBe('');
  });
});

describe('a pre-routed MCP call (POST /mcp)', () => {
  async function callMcp(user: string, method = 'POST') {
    const secret = await loadOrCreateSecret(pds.config.jwtSecret, pds.dataDir);
    const token = await issueSelfToken(secret, pds.config.baseUrl, { sub: user, groups: [] }, 600);
    const res = await fetch(`${pds.url}/mcp?toolsets=catalog`, {
      method,
      headers: { ...FORWARDED, authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      ...(method === 'POST' && {
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'platform_list_operations', arguments: {} } }),
      }),
    });
    return { status: res.status, headers: res.headers, text: await res.text() };
  }

  it('is found without asking any router, and passes every gate: the limit in Redis, the request line, the metrics', async () => {
    const user = unique('frank');
    const before = await metric(/^pds_tool_calls_total\{tool="platform_list_operations",door="mcp",outcome="ok"\} (\d+)/m);
    const match = vi.spyOn(Router.prototype, 'match');
    let res;
    try {
      res = await callMcp(user);
      expect(match).not.toHaveBeenCalled();
    } finally {
      match.mockRestore();
    }
    expect(res.status).toBe(200);
    expect(JSON.parse(res.text).result.structuredContent.items).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'create-tenant' })]));
    expect(res.headers.get('ratelimit-remaining')).toBe(String(MAX - 1));
    await expectCountedAndLogged(res, user, 'POST', '/mcp');
    await expect
      .poll(() => metric(/^pds_tool_calls_total\{tool="platform_list_operations",door="mcp",outcome="ok"\} (\d+)/m), { timeout: 10_000 })
      .toBe(before + 1);
  });

  it('refuses a call over the limit (an isError result an agent can read), and leaves GET /mcp to the routers (405)', async () => {
    const user = unique('grace');
    for (let i = 0; i < MAX; i++) expect(JSON.parse((await callMcp(user)).text).result.isError).toBeUndefined();
    const refused = await callMcp(user);
    expect(refused.status).toBe(200);
    expect(JSON.parse(refused.text).result).toMatchObject({ isError: true });
    expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
    const get = await callMcp(unique('grace'), 'GET');
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST');
  });
});

describe('preRoute', () => {
  it('takes only fixed paths of its method that no earlier router routes', () => {
    const earlier = createRouter();
    earlier.get('/taken', () => undefined);
    earlier.post('/posted', () => undefined);
    const target = createRouter();
    target.use((_ctx, next) => next());
    for (const path of ['/taken', '/posted', '/free', '/with/:param']) target.get(path, () => undefined);
    target.post('/written', () => undefined);
    expect(preRoute(target, [earlier]).paths).toEqual(['/free']);
    target.post('/taken', () => undefined);
    expect(preRoute(target, [earlier], 'POST').paths).toEqual(['/written']);
  });
});
