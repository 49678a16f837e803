/**
 * Per-user limits (`docs/api.md#limits`, DESIGN.md "Identity and limits"), shared by every pds replica through Redis when
 * `REDIS_URL` is set, per process otherwise.
 *
 * - {@link createRouteLimit}: 300 requests per minute per user on every authenticated route, `POST /mcp` included.
 *   A request whose TCP peer is exactly `127.0.0.1`, `::1` or `::ffff:127.0.0.1` is exempt and consumes nothing; every
 *   other address (the rest of 127.0.0.0/8 too) counts.
 * - {@link createWriteLimiter}: 20 write calls per minute per user, loopback not exempt; `tools/invoke.ts` consumes it
 *   for every tool of kind `write`, over REST and MCP alike.
 *
 * Both count with koa-ratelimit's drivers: async-ratelimiter's sliding window on Redis (its own Lua script, with the
 * counts of one event-loop turn sent in one call: `adapters/redis/sliding-window.ts`), koa-ratelimit's memory window
 * otherwise.
 *
 * **When Redis goes away** (stopped, unreachable, or slower than the 500 ms command timeout): limits **fail open to
 * per-process memory**. Each replica keeps enforcing the same numbers on its own in-memory buckets, so a user can get
 * at most N × the budget across N replicas, but nobody is refused because Redis is down and no request waits on it:
 * a disconnected client fails at once (ioredis' offline queue is off; see `adapters/redis/connect.ts`), and after a
 * failure (e.g. a stalled Redis timing out) the limiter does not try Redis again for {@link REDIS_RETRY_MS}, so at most
 * one request per interval pays the timeout. The switch is logged once (warn) when it happens and once (info) when
 * Redis answers again and the shared buckets take over again. Health checks never touch Redis.
 */
import { createRequire } from 'node:module';
import type { Redis } from 'ioredis';
import type { Context, Middleware, Next } from 'koa';
import { RateLimited } from '../core/errors.js';
import { silentLogger, type Logger } from '../core/logger.js';
import { SlidingWindow, type LimiterCount } from '../adapters/redis/sliding-window.js';
import type { Identity } from '../auth/identity.js';
import type { WriteLimiter } from '../tools/define.js';
import type { LimitDecision, LimitStore } from './metrics.js';
import { setHeader } from './headers.js';

/** Peer addresses exempt from the route limit: exactly these, not all of 127.0.0.0/8 (`docs/api.md#limits`). */
const LOOPBACK = new Set(['127.0.0.1', '::1', '::ffff:127.0.0.1']);

/** After a Redis failure, how long the limiters use memory before trying Redis again, milliseconds. */
export const REDIS_RETRY_MS = 5_000;

const HEADERS = { total: 'RateLimit-Limit', remaining: 'RateLimit-Remaining', reset: 'RateLimit-Reset' };

/** Common options of both limits. */
export interface LimitOptions {
  /** Shared buckets; omitted means per-process memory. */
  redis?: Redis;
  /** Requests allowed per window. */
  max?: number;
  /** Window length, milliseconds (default 60 000). */
  durationMs?: number;
  /** Redis key prefix (default `pds:limit:route` / `pds:limit:write`); two processes with the same one share budgets. */
  namespace?: string;
  /** Where the Redis fallback is reported (default: nowhere). */
  log?: Logger;
  /** After a failed Redis command, use memory this long before trying Redis again (default {@link REDIS_RETRY_MS}). */
  redisRetryMs?: number;
  /**
   * Told every decision (metrics: `rest/metrics.ts`): the limit's short name (the last part of its namespace, e.g.
   * `route`, `write`), the decision and where it was counted.
   */
  onDecision?: (limit: string, decision: LimitDecision, store: LimitStore) => void;
}

export interface RouteLimitOptions extends LimitOptions {
  /** `PDS_TRUST_PROXY`: take the client address from `X-Forwarded-For` instead of the TCP peer. */
  trustProxy: boolean;
}

/**
 * The client address: the TCP peer, or with `trustProxy` the **last** `X-Forwarded-For` entry — the one the trusted
 * proxy appended itself. Earlier entries come from the client and could claim to be 127.0.0.1.
 */
export function clientAddress(ctx: Pick<Context, 'get' | 'req'>, trustProxy: boolean): string {
  if (trustProxy) {
    // The last non-empty entry, read from the end: this runs twice per authenticated request (authentication, limit).
    const forwarded = ctx.get('X-Forwarded-For');
    for (let end = forwarded.length; end > 0; ) {
      const comma = forwarded.lastIndexOf(',', end - 1);
      const entry = forwarded.slice(comma + 1, end).trim();
      if (entry) return entry;
      end = comma;
    }
  }
  return ctx.req.socket.remoteAddress ?? '';
}

/** True for exactly 127.0.0.1, ::1 and ::ffff:127.0.0.1. */
export function isExemptLoopback(address: string): boolean {
  return LOOPBACK.has(address);
}

/**
 * The 300/min route limit as Koa middleware. Mount it **after** authentication: it reads `ctx.state.identity.userId`
 * (requests without an identity pass untouched). Sets `RateLimit-Limit`, `RateLimit-Remaining` and `RateLimit-Reset`
 * (seconds until the window frees a request) on counted requests.
 * @throws RateLimited (429, `Retry-After` and the `RateLimit-*` headers) `rate limit exceeded: 300 requests per minute
 *   per user; retry in N s` for a request over the budget; the error edge renders it as `{ "error": … }`.
 * @example
 * app.use(authenticate).use(createRouteLimit({ redis, trustProxy: config.trustProxy })).use(router.routes());
 */
export function createRouteLimit(options: RouteLimitOptions): Middleware {
  const max = options.max ?? 300;
  const duration = options.durationMs ?? 60_000;
  const namespace = options.namespace ?? 'pds:limit:route';
  const breaker = redisBreaker(options.redis, options, `route limit (${max}/min)`);
  // One window for every user (its `count` takes the id), whose counts of one event-loop turn go to Redis in one
  // script call: koa-ratelimit's middleware made a limiter and copied its options per request, then set the headers
  // twice (BENCHMARKS.md, issue 23 item 2).
  const shared = options.redis ? new SlidingWindow(options.redis, { max, durationMs: duration, namespace }) : undefined;
  const memory = new Map();
  const limitName = namespace.split(':').at(-1)!;
  const decided = (decision: LimitDecision, store: LimitStore) => {
    options.onDecision?.(limitName, decision, store);
    return decision;
  };

  return async function routeLimit(ctx: Context, next: Next) {
    const identity = ctx.state.identity as Identity | undefined;
    if (!identity) return next();
    if (isExemptLoopback(clientAddress(ctx, options.trustProxy))) {
      ctx.state.limit = decided('exempt', 'none');
      return next();
    }
    const id = identity.userId;
    let count: LimiterCount | undefined;
    let store: LimitStore = 'memory';
    if (shared && breaker.usable()) {
      try {
        count = await shared.count(id);
        store = 'redis';
        breaker.succeeded();
      } catch (err) {
        breaker.failed(err);
      }
    }
    count ??= await new MemoryLimiter({ id, db: memory, max, duration, namespace }).get();
    if (count.remaining <= 0) {
      ctx.state.limit = decided('refused', store);
      throw budgetSpent(`rate limit exceeded: ${max} requests per minute per user`, max, count, duration);
    }
    setHeader(ctx, HEADERS.total, String(count.total));
    setHeader(ctx, HEADERS.remaining, String(count.remaining - 1));
    setHeader(ctx, HEADERS.reset, String(secondsUntil(count.reset, duration)));
    ctx.state.limit = decided('allowed', store);
    return next();
  };
}

/**
 * Whole seconds from now until `resetEpochSeconds`, between 1 and the window length. The limiters' clocks (hrtime
 * based) and `Date.now()` may disagree by a few milliseconds, which must not turn a 60 s window into "retry in 61 s".
 */
function secondsUntil(resetEpochSeconds: number, durationMs: number): number {
  const max = Math.ceil(durationMs / 1000);
  if (!Number.isFinite(resetEpochSeconds)) return max;
  return Math.min(max, Math.max(1, Math.ceil(resetEpochSeconds - Date.now() / 1000)));
}

/** koa-ratelimit's memory limiter: a window per `id` in the `db` map it is given. */
interface MemoryLimiterClass {
  new (options: { id: string; db: Map<unknown, unknown>; max: number; duration: number; namespace: string }): {
    get(): Promise<LimiterCount>;
  };
}
const require = createRequire(import.meta.url);
const MemoryLimiter = require('koa-ratelimit/limiter/memory.js') as MemoryLimiterClass;

/** One counted event in a window: `remaining` before it (admitted when > 0) and the reset, epoch seconds. */
export interface WindowCount {
  remaining: number;
  reset: number;
}

/**
 * A sliding-window counter per id with the write limit's machinery: async-ratelimiter on Redis when given and
 * reachable, koa-ratelimit's memory window otherwise (the fail-open policy at the top of this file).
 * @param what how the limit is named in the Redis fallback log lines, e.g. `write limit (20/min)`.
 * @example
 * const count = createWindowCounter({ redis, max: 30, namespace: 'pds:limit:authfail' }, 'failed authentications');
 * if ((await count('203.0.113.9')).remaining <= 0) // over the budget
 */
export function createWindowCounter(options: LimitOptions & { max: number; namespace: string }, what: string): (id: string) => Promise<WindowCount> {
  const { max, namespace, redis } = options;
  const duration = options.durationMs ?? 60_000;
  const db = new Map();
  const window = redis ? new SlidingWindow(redis, { max, durationMs: duration, namespace }) : undefined;
  const breaker = redisBreaker(redis, options, what);
  const limitName = namespace.split(':').at(-1)!;
  const decided = (count: WindowCount, store: LimitStore) => {
    options.onDecision?.(limitName, count.remaining > 0 ? 'allowed' : 'refused', store);
    return count;
  };
  return async (id) => {
    if (window && breaker.usable()) {
      try {
        const count = await window.count(id);
        breaker.succeeded();
        return decided(count, 'redis');
      } catch (err) {
        breaker.failed(err);
      }
    }
    return decided(await new MemoryLimiter({ id, db, max, duration, namespace }).get(), 'memory');
  };
}

/** The 429 for a spent budget, with `Retry-After` and the `RateLimit-*` headers; `message` gets "; retry in N s". */
export function budgetSpent(message: string, max: number, count: WindowCount, durationMs = 60_000): RateLimited {
  const retry = secondsUntil(count.reset, durationMs);
  return new RateLimited(`${message}; retry in ${retry} s`, retry, {
    [HEADERS.total]: String(max),
    [HEADERS.remaining]: '0',
    [HEADERS.reset]: String(retry),
  });
}

/**
 * The 20/min write limit for `tools/invoke.ts` (loopback is not exempt).
 * @example
 * const writeLimiter = createWriteLimiter({ redis });
 * await writeLimiter.consume(identity); // RateLimited on the 21st write within a minute
 */
export function createWriteLimiter(options: LimitOptions = {}): WriteLimiter {
  const max = options.max ?? 20;
  const duration = options.durationMs ?? 60_000;
  const count = createWindowCounter({ ...options, max, namespace: options.namespace ?? 'pds:limit:write' }, `write limit (${max}/min)`);
  return {
    async consume(identity) {
      const limit = await count(identity.userId);
      if (limit.remaining > 0) return;
      throw budgetSpent(`write limit exceeded: ${max} write calls per minute per user`, max, limit, duration);
    },
  };
}

/**
 * Whether to ask Redis now: it is connected and has not failed in the last {@link REDIS_RETRY_MS}. Logs the switch
 * to memory once per outage (warn) and the switch back once (info).
 */
function redisBreaker(redis: Redis | undefined, options: Pick<LimitOptions, 'log' | 'redisRetryMs'>, what: string) {
  const log = options.log ?? silentLogger;
  const retryMs = options.redisRetryMs ?? REDIS_RETRY_MS;
  let degraded = false;
  let retryAt = 0;
  const degrade = (reason: string) => {
    if (degraded) return;
    degraded = true;
    log.warn(`${what}: redis unavailable (${reason}); enforcing per-process memory limits until it returns`);
  };
  return {
    usable(): boolean {
      if (!redis) return false;
      // Disconnected: known without asking, and usable again as soon as ioredis has reconnected.
      if (redis.status !== 'ready') {
        degrade(`connection ${redis.status}`);
        return false;
      }
      return Date.now() >= retryAt;
    },
    /** A command failed (timeout, connection lost mid-call): skip Redis for a while so requests do not each wait. */
    failed(err: unknown) {
      retryAt = Date.now() + retryMs;
      degrade((err as Error).message);
    },
    succeeded() {
      if (!degraded) return;
      degraded = false;
      log.info(`${what}: redis answers again; limits are shared across replicas again`);
    },
  };
}
