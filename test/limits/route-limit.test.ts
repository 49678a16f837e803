import { silentLogger } from '../../core/logger.js';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { randomUUID } from 'node:crypto';
import Koa, { type Middleware } from 'koa';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { connectRedis } from '../../adapters/redis/connect.js';
import { errorMiddleware } from '../../rest/errors.js';
import { createRouteLimit, clientAddress } from '../../rest/ratelimit.js';
import { recordingLogger } from '../helpers/log.js';
import { burst, closeAgents, send } from './http.js';

const recorded = recordingLogger('warn');
const quiet = recorded.log;
const servers: Server[] = [];
let redis: Redis;

/** A Koa app shaped like pds's: errors → (stand-in) authentication from `x-user` → route limit → handler. */
async function limitedApp(limit: Middleware, host = '127.0.0.1'): Promise<string> {
  const app = new Koa();
  app.use(errorMiddleware(silentLogger));
  app.use((ctx, next) => {
    ctx.state.identity = { userId: ctx.get('x-user'), groups: [], admin: false, tokenKind: 'self-issued' };
    return next();
  });
  app.use(limit);
  app.use((ctx) => {
    ctx.body = { ok: true, peer: ctx.req.socket.remoteAddress };
  });
  const server = app.listen(0, host);
  await once(server, 'listening');
  servers.push(server);
  const { port } = server.address() as AddressInfo;
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}/api/v1/operations`;
}

beforeAll(async () => {
  redis = await connectRedis(inject('redisUrl'), { log: quiet });
});
afterAll(async () => {
  // Refusals are not Redis failures: nothing here may have fallen back to memory.
  expect(recorded.lines).toEqual([]);
  closeAgents();
  for (const s of servers) s.close();
  redis.disconnect();
});

const ns = () => `test:route:${randomUUID()}`;

describe.each([
  ['redis', () => createRouteLimit({ redis, trustProxy: false, namespace: ns(), log: quiet })],
  ['memory', () => createRouteLimit({ trustProxy: false, log: quiet })],
])('route limit (%s)', (_driver, make) => {
  it('caps a user at 300 requests per minute from 127.0.0.2: the 301st is 429 with Retry-After and RateLimit-*', async () => {
    const url = await limitedApp(make());
    const replies = await burst(300, () => send(url, { from: '127.0.0.2', headers: { 'x-user': 'alice' } }));
    expect(replies.every((r) => r.status === 200)).toBe(true);
    expect(replies[0]!.json().peer).toBe('127.0.0.2');
    const refused = await send(url, { from: '127.0.0.2', headers: { 'x-user': 'alice' } });
    expect(refused.status).toBe(429);
    expect(refused.json().error).toMatch(/^rate limit exceeded: 300 requests per minute per user; retry in \d+ s$/);
    const retry = Number(refused.headers['retry-after']);
    expect(retry).toBeGreaterThan(0);
    expect(retry).toBeLessThanOrEqual(60);
    expect(refused.headers['ratelimit-limit']).toBe('300');
    expect(refused.headers['ratelimit-remaining']).toBe('0');
    expect(Number(refused.headers['ratelimit-reset'])).toBe(retry);
    // Another user is not affected.
    expect((await send(url, { from: '127.0.0.2', headers: { 'x-user': 'bob' } })).status).toBe(200);
  });

  it('exempts 127.0.0.1 without consuming the bucket', async () => {
    const url = await limitedApp(make());
    const replies = await burst(350, () => send(url, { from: '127.0.0.1', headers: { 'x-user': 'carol' } }));
    expect(replies.every((r) => r.status === 200)).toBe(true);
    expect(replies[0]!.headers['ratelimit-remaining']).toBeUndefined();
    const counted = await send(url, { from: '127.0.0.3', headers: { 'x-user': 'carol' } });
    expect(counted.status).toBe(200);
    expect(counted.headers['ratelimit-limit']).toBe('300');
    expect(counted.headers['ratelimit-remaining']).toBe('299');
    const reset = Number(counted.headers['ratelimit-reset']);
    expect(reset).toBeGreaterThan(0);
    expect(reset).toBeLessThanOrEqual(60);
  });

  it('exempts ::ffff:127.0.0.1 (IPv4 on a dual-stack socket) and ::1', async () => {
    const dual = await limitedApp(make(), '::');
    const url = dual.replace('[::]', '127.0.0.1');
    const first = await send(url, { headers: { 'x-user': 'dave' } });
    expect(first.json().peer).toBe('::ffff:127.0.0.1');
    expect(first.headers['ratelimit-remaining']).toBeUndefined();
    const v6 = await send(dual.replace('[::]', '[::1]'), { headers: { 'x-user': 'dave' } });
    expect(v6.json().peer).toBe('::1');
    expect(v6.headers['ratelimit-remaining']).toBeUndefined();
    const counted = await send(url, { from: '127.0.0.2', headers: { 'x-user': 'dave' } });
    expect(counted.json().peer).toBe('::ffff:127.0.0.2');
    expect(counted.headers['ratelimit-remaining']).toBe('299');
  });
});

describe('route limit across replicas', () => {
  it('two limiters on one Redis enforce one budget per user', async () => {
    const namespace = ns();
    const a = await limitedApp(createRouteLimit({ redis, trustProxy: false, namespace, log: quiet }));
    const b = await limitedApp(createRouteLimit({ redis, trustProxy: false, namespace, log: quiet }));
    const replies = await burst(300, (() => {
      let i = 0;
      return () => send(i++ % 2 ? a : b, { from: '127.0.0.2', headers: { 'x-user': 'erin' } });
    })());
    expect(replies.filter((r) => r.status === 200)).toHaveLength(300);
    expect((await send(a, { from: '127.0.0.2', headers: { 'x-user': 'erin' } })).status).toBe(429);
    expect((await send(b, { from: '127.0.0.2', headers: { 'x-user': 'erin' } })).status).toBe(429);
  });
});

describe('client address', () => {
  const ctx = (peer: string, xff?: string) =>
    ({ req: { socket: { remoteAddress: peer } }, get: (h: string) => (h === 'X-Forwarded-For' ? xff ?? '' : '') }) as never;

  it('ignores X-Forwarded-For unless PDS_TRUST_PROXY is set', () => {
    expect(clientAddress(ctx('127.0.0.2', '127.0.0.1'), false)).toBe('127.0.0.2');
  });

  it('with a trusted proxy, believes the entry the proxy appended (the last), not what the client claimed', () => {
    expect(clientAddress(ctx('10.0.0.5', '127.0.0.1, 203.0.113.7'), true)).toBe('203.0.113.7');
    expect(clientAddress(ctx('10.0.0.5', '203.0.113.7'), true)).toBe('203.0.113.7');
    expect(clientAddress(ctx('127.0.0.1'), true)).toBe('127.0.0.1');
  });

  it('counts a spoofed X-Forwarded-For: 127.0.0.1 when no proxy is trusted', async () => {
    const url = await limitedApp(createRouteLimit({ trustProxy: false, log: quiet }));
    const r = await send(url, { from: '127.0.0.2', headers: { 'x-user': 'frank', 'x-forwarded-for': '127.0.0.1' } });
    expect(r.headers['ratelimit-remaining']).toBe('299');
  });

  it('exempts a loopback client reported by a trusted proxy', async () => {
    const url = await limitedApp(createRouteLimit({ trustProxy: true, log: quiet }));
    const r = await send(url, { from: '127.0.0.2', headers: { 'x-user': 'gina', 'x-forwarded-for': '127.0.0.1' } });
    expect(r.headers['ratelimit-remaining']).toBeUndefined();
    const s = await send(url, { from: '127.0.0.1', headers: { 'x-user': 'gina', 'x-forwarded-for': '127.0.0.1, 198.51.100.4' } });
    expect(s.headers['ratelimit-remaining']).toBe('299');
  });
});
