/**
 * The documented Redis-outage policy (rest/ratelimit.ts): limits fail open to per-process memory, nothing waits on
 * Redis, the switch is logged once each way; single-use markers fail closed (503). Uses its own redis-server so the
 * shared one keeps running for the other suites.
 */
import { silentLogger } from '../../core/logger.js';
import { once } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import Koa from 'koa';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectRedis } from '../../adapters/redis/connect.js';
import { redisOnceStore } from '../../adapters/redis/once.js';
import type { Identity } from '../../auth/identity.js';
import { errorMiddleware } from '../../rest/errors.js';
import { createRouteLimit, createWriteLimiter } from '../../rest/ratelimit.js';
import { startRedisServer, type RedisServer } from '../fixtures/redis-server.js';
import { recordingLogger } from '../helpers/log.js';
import { startTestServer } from '../helpers/server.js';
import { burst, closeAgents, send } from './http.js';
import { until } from '../helpers/until.js';


const who = (userId: string): Identity => ({ userId, groups: [], admin: false, tokenKind: 'pat' });
let server: RedisServer;
let redis: Redis;
let http: Server;
const recorded = recordingLogger();
const log = recorded.log;

beforeAll(async () => {
  server = await startRedisServer();
  redis = await connectRedis(server.url, { log });
});
afterAll(async () => {
  closeAgents();
  http?.close();
  redis.disconnect();
  server.resume();
  await server.stop();
});

describe('Redis stops mid-run', () => {
  it('limits keep answering at once from memory, the switch is logged once each way, and Redis takes over again', async () => {
    const namespace = `outage:${randomUUID()}`;
    const writes = createWriteLimiter({ redis, namespace: `${namespace}:w`, log, redisRetryMs: 200 });
    const app = new Koa();
    app.use(errorMiddleware(silentLogger));
    app.use((ctx, next) => {
      ctx.state.identity = who(ctx.get('x-user'));
      return next();
    });
    app.use(createRouteLimit({ redis, trustProxy: false, namespace: `${namespace}:r`, log, redisRetryMs: 200 }));
    app.use((ctx) => {
      ctx.body = { ok: true };
    });
    http = app.listen(0, '127.0.0.1');
    await once(http, 'listening');
    const url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/api/v1/operations`;
    const get = () => send(url, { from: '127.0.0.2', headers: { 'x-user': 'alice' } });

    // Healthy: 10 requests and 5 writes are counted in Redis.
    await burst(10, get);
    for (let i = 0; i < 5; i++) await writes.consume(who('alice'));
    expect(await redis.zcard(`${namespace}:r:alice`)).toBe(10);

    await server.stop();
    await until('the client to lose Redis', () => redis.status !== 'ready', 10);

    // Down: every request is answered from per-process memory, which enforces the same numbers. Redis stays down until
    // it is restarted below, so a request that waited for it would never be answered (the test's timeout says so).
    const replies = await Promise.all(Array.from({ length: 50 }, () => get()));
    expect(replies.every((r) => r.status === 200)).toBe(true);
    expect(replies.at(-1)!.headers['ratelimit-limit']).toBe('300');
    for (let i = 0; i < 20; i++) await writes.consume(who('alice'));
    const refused = await writes.consume(who('alice')).then(() => undefined, (e: unknown) => e);
    expect(refused).toMatchObject({ code: 'RATE_LIMITED' });
    expect(recorded.count('warn', /^route limit \(300\/min\): redis unavailable/)).toBe(1);
    expect(recorded.count('warn', /^write limit \(20\/min\): redis unavailable/)).toBe(1);
    expect(recorded.count('warn', /^redis redis:\/\/127\.0\.0\.1:\d+\/? unreachable/)).toBe(1);

    // Back: ioredis reconnects on its own; the next requests use Redis again (the shared window kept nothing while
    // it was down: a fresh server has no data), and the recovery is logged once.
    await server.restart();
    await until('the client to reconnect to Redis', () => redis.status === 'ready', 10);
    await burst(3, get);
    expect(await redis.zcard(`${namespace}:r:alice`)).toBe(3);
    await writes.consume(who('alice'));
    expect(recorded.count('info', /^route limit \(300\/min\): redis answers again/)).toBe(1);
    expect(recorded.count('info', /^write limit \(20\/min\): redis answers again/)).toBe(1);
    expect(recorded.count('info', /reachable again/)).toBe(1);
    expect(recorded.count('warn', /unavailable|unreachable/)).toBe(3);
  });

  it('single-use markers fail closed while Redis is away: 503, at once', async () => {
    const store = redisOnceStore(redis, `once:${randomUUID()}:`);
    expect(await store.claim('nonce-1', 60)).toBe(true);
    expect(await store.claim('nonce-1', 60)).toBe(false);
    await server.stop();
    await until('the client to lose Redis', () => redis.status !== 'ready', 10);
    // Redis stays down until restarted below: a claim that waited for it would not be answered.
    const err = await store.claim('nonce-2', 60).then(() => undefined, (e: unknown) => e);
    expect(err).toMatchObject({ code: 'UNAVAILABLE', status: 503 });
    await server.restart();
    await until('the client to reconnect to Redis', () => redis.status === 'ready', 10);
    expect(await store.claim('nonce-2', 60)).toBe(true);
  });
});

describe('Redis stalls (connection open, no answers)', () => {
  it('a request waits for the command timeout once, then memory answers without asking Redis', async () => {
    await until('the client to reconnect to Redis', () => redis.status === 'ready', 10);
    const writes = createWriteLimiter({ redis, namespace: `stall:${randomUUID()}`, log, redisRetryMs: 60_000 });
    await writes.consume(who('bob'));
    // Every command the client sends, counted (ioredis sends each one through sendCommand).
    let sent = 0;
    const sendCommand = redis.sendCommand.bind(redis);
    redis.sendCommand = ((...args: Parameters<Redis['sendCommand']>) => {
      sent++;
      return sendCommand(...args);
    }) as Redis['sendCommand'];
    server.pause();
    try {
      // The stalled server never answers: the first consume is answered only because the command times out.
      await writes.consume(who('bob'));
      expect(sent).toBeGreaterThan(0);
      const before = sent;
      await writes.consume(who('bob'));
      expect(sent).toBe(before);
    } finally {
      redis.sendCommand = sendCommand;
      server.resume();
    }
  });
});

describe('a started pds while Redis is away', () => {
  it('keeps answering health checks, reads and writes at once, limits enforced per process', async () => {
    await until('the client to reconnect to Redis', () => redis.status === 'ready', 10);
    const pds = await startTestServer({ REDIS_URL: server.url, PDS_ADMINS: 'root' });
    try {
      const headers = { authorization: `Bearer ${await pds.token('root')}` };
      expect((await send(`${pds.url}/api/v1/operations`, { from: '127.0.0.2', headers })).headers['ratelimit-remaining']).toBe('299');
      await server.stop();
      // Redis stays down until the end: an answer that waited for it would never come (the test's timeout says so).
      for (const path of ['/healthz', '/readyz']) expect((await send(`${pds.url}${path}`)).status).toBe(200);
      const read = await send(`${pds.url}/api/v1/operations`, { from: '127.0.0.2', headers });
      expect(read.status).toBe(200);
      // Per-process memory now: a fresh bucket, the same limit.
      expect(read.headers['ratelimit-limit']).toBe('300');
      const write = await send(`${pds.url}/api/v1/operations/create-tenant/execute`, { method: 'POST', headers, body: { team_name: `outage${Date.now() % 100000}` } });
      expect(write.status).toBe(200);
    } finally {
      await pds.stop();
      await server.restart();
    }
  });
});
