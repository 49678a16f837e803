import { randomUUID } from 'node:crypto';
import { silentLogger } from '../../core/logger.js';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { RateLimited } from '../../core/errors.js';
import { connectRedis } from '../../adapters/redis/connect.js';
import type { Identity } from '../../auth/identity.js';
import { createWriteLimiter } from '../../rest/ratelimit.js';

const quiet = silentLogger;
let redis: Redis;
beforeAll(async () => {
  redis = await connectRedis(inject('redisUrl'), { log: quiet });
});
afterAll(() => redis.disconnect());

const who = (userId: string): Identity => ({ userId, groups: [], admin: false, tokenKind: 'pat' });

describe.each([
  ['redis', () => createWriteLimiter({ redis, namespace: `test:write:${randomUUID()}`, log: quiet })],
  ['memory', () => createWriteLimiter({ log: quiet })],
])('write limit (%s)', (_driver, make) => {
  it('allows 20 writes per minute per user and refuses the 21st with RATE_LIMITED naming the limit', async () => {
    const limiter = make();
    for (let i = 0; i < 20; i++) await limiter.consume(who('alice'));
    const err = await limiter.consume(who('alice')).then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(RateLimited);
    const limited = err as RateLimited;
    expect(limited.code).toBe('RATE_LIMITED');
    expect(limited.status).toBe(429);
    expect(limited.message).toMatch(/^write limit exceeded: 20 write calls per minute per user; retry in \d+ s$/);
    expect(limited.retryAfterSeconds).toBeGreaterThan(0);
    expect(limited.retryAfterSeconds).toBeLessThanOrEqual(60);
    expect(limited.headers).toMatchObject({ 'Retry-After': String(limited.retryAfterSeconds), 'RateLimit-Limit': '20', 'RateLimit-Remaining': '0' });
    // Other users keep their own budget.
    await limiter.consume(who('bob'));
  });

  it('keeps refusing while the window is full', async () => {
    const limiter = make();
    for (let i = 0; i < 20; i++) await limiter.consume(who('carol'));
    for (let i = 0; i < 5; i++) await expect(limiter.consume(who('carol'))).rejects.toMatchObject({ code: 'RATE_LIMITED' });
  });
});

it('frees writes again when the window has passed', async () => {
  const limiter = createWriteLimiter({ redis, namespace: `test:write:${randomUUID()}`, max: 2, durationMs: 300, log: quiet });
  await limiter.consume(who('dora'));
  await limiter.consume(who('dora'));
  await expect(limiter.consume(who('dora'))).rejects.toMatchObject({ code: 'RATE_LIMITED' });
  await new Promise((r) => setTimeout(r, 350));
  await limiter.consume(who('dora'));
});

it('two limiters on one Redis enforce one write budget per user', async () => {
  const namespace = `test:write:${randomUUID()}`;
  const a = createWriteLimiter({ redis, namespace, log: quiet });
  const b = createWriteLimiter({ redis, namespace, log: quiet });
  for (let i = 0; i < 10; i++) {
    await a.consume(who('erin'));
    await b.consume(who('erin'));
  }
  await expect(a.consume(who('erin'))).rejects.toMatchObject({ code: 'RATE_LIMITED' });
  await expect(b.consume(who('erin'))).rejects.toMatchObject({ code: 'RATE_LIMITED' });
});
