/**
 * `adapters/redis/sliding-window.ts` on a real redis-server: the counts of one event-loop turn go out as one script
 * call (watched with Redis's own `MONITOR`), and each count answers what async-ratelimiter's own limiter answers.
 */
import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { connectRedis } from '../../adapters/redis/connect.js';
import { MAX_BATCH, SlidingWindow } from '../../adapters/redis/sliding-window.js';
import { startRedisServer } from '../fixtures/redis-server.js';
import { until } from '../helpers/until.js';

interface LibraryLimiter {
  get(options: { id: string }): Promise<{ remaining: number; reset: number; total: number }>;
}
const require = createRequire(import.meta.url);
const Limiter = require('async-ratelimiter') as new (options: object) => LibraryLimiter;

let redis: Redis;
let monitor: Redis & { on(event: 'monitor', listener: (time: string, args: string[]) => void): Redis };
/** Every command Redis received while the tests ran, as its arguments, in the order Redis ran them. */
const received: string[][] = [];

beforeAll(async () => {
  redis = await connectRedis(inject('redisUrl'));
  monitor = (await redis.monitor()) as typeof monitor;
  monitor.on('monitor', (_time, args) => received.push(args));
});
afterAll(() => {
  monitor.disconnect();
  redis.disconnect();
});

/**
 * The script calls (`EVALSHA`, or `EVAL` after a `NOSCRIPT`) that carried a key of `namespace`, all of them: a marker
 * command is sent after the counts were answered, and Redis's monitor feed, in the order Redis ran its commands, is
 * read up to that marker.
 */
async function scriptCallsFor(namespace: string): Promise<string[][]> {
  const marker = `${namespace}:marker`;
  await redis.exists(marker);
  await until(`the monitor to show ${marker}`, () => received.some((args) => args[1] === marker), 5);
  return received.filter((args) => /^eval(sha)?$/i.test(args[0] ?? '') && args.some((a) => a.startsWith(`${namespace}:`)));
}

describe('SlidingWindow', () => {
  it('sends the counts of one turn in one script call, each count with its own entry', async () => {
    const namespace = `sw:${randomUUID()}`;
    const window = new SlidingWindow(redis, { max: 10, durationMs: 60_000, namespace });
    const ids = ['alice', 'bob', 'alice', 'carol', 'alice', 'bob'];
    const counts = await Promise.all(ids.map((id) => window.count(id)));

    // Two counts of one user in one turn are two entries: alice 10, 9, 8 before hers; bob 10, 9; carol 10.
    expect(counts.map((c) => c.remaining)).toEqual([10, 10, 9, 10, 8, 9]);
    expect(counts.every((c) => c.total === 10)).toBe(true);
    expect(await redis.zcard(`${namespace}:alice`)).toBe(3);
    // One EVALSHA (or EVAL after a NOSCRIPT) for the six: the command, the script, the key count, then six keys.
    const calls = await scriptCallsFor(namespace);
    expect(calls).toHaveLength(1);
    expect(calls[0]!.slice(2, 3 + ids.length)).toEqual([String(ids.length), ...ids.map((id) => `${namespace}:${id}`)]);
  });

  it(`splits a turn of more than ${MAX_BATCH} counts into calls of at most ${MAX_BATCH}`, async () => {
    const namespace = `sw:${randomUUID()}`;
    const window = new SlidingWindow(redis, { max: 300, durationMs: 60_000, namespace });
    const counts = await Promise.all(Array.from({ length: MAX_BATCH + 6 }, (_, n) => window.count(`u${n}`)));
    expect(counts.every((c) => c.remaining === 300)).toBe(true);
    const calls = await scriptCallsFor(namespace);
    expect(calls.map((args) => Number(args[2]))).toEqual([MAX_BATCH, 6]);
  });

  it('answers as async-ratelimiter does, within and past the budget', async () => {
    const ours = `sw:${randomUUID()}`;
    const theirs = `sw:${randomUUID()}`;
    const window = new SlidingWindow(redis, { max: 3, durationMs: 60_000, namespace: ours });
    const library = new Limiter({ id: 'x', db: redis, max: 3, duration: 60_000, namespace: theirs });
    for (let n = 0; n < 5; n++) {
      const [a, b] = await Promise.all([window.count('dana'), library.get({ id: 'dana' })]);
      expect(a.remaining).toBe(b.remaining);
      expect(a.total).toBe(b.total);
      expect(Math.abs(a.reset - b.reset)).toBeLessThanOrEqual(1);
    }
    // Refused counts add no entry, as the library's.
    expect(await redis.zcard(`${ours}:dana`)).toBe(await redis.zcard(`${theirs}:dana`));
    expect(await redis.pttl(`${ours}:dana`)).toBeGreaterThan(59_000);
  });

  it('counts on after Redis forgot the script (NOSCRIPT: ioredis sends the script itself)', async () => {
    // A server of its own: SCRIPT FLUSH would reach the other suites' clients too.
    const server = await startRedisServer();
    const client = await connectRedis(server.url);
    try {
      const window = new SlidingWindow(client, { max: 5, durationMs: 60_000, namespace: 'sw' });
      expect((await window.count('erin')).remaining).toBe(5);
      await client.script('FLUSH');
      expect((await window.count('erin')).remaining).toBe(4);
    } finally {
      client.disconnect();
      await server.stop();
    }
  });

  it('rejects every count of a call that fails, with its error', async () => {
    const client = await connectRedis(inject('redisUrl'));
    const window = new SlidingWindow(client, { max: 5, durationMs: 60_000, namespace: `sw:${randomUUID()}` });
    client.disconnect();
    const outcomes = await Promise.allSettled([window.count('frank'), window.count('gina')]);
    expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'rejected']);
    expect(String((outcomes[0] as PromiseRejectedResult).reason)).toMatch(/writeable|closed|connection/i);
  });
});
