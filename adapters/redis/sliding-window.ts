/**
 * The per-user limits' sliding window in Redis, counted by **async-ratelimiter's own Lua script** (the Redis limiter
 * koa-ratelimit ships, `koa-ratelimit/limiter/redis.js`), with every count asked in one event-loop turn sent to Redis
 * as **one script call** (issue 23 item 2; BENCHMARKS.md "One script call per turn for the limits").
 *
 * Why: a pds read costs one limit count. Asked one by one, each count was an ioredis `Command` with its promise and
 * callbacks, gathered per turn into an auto-pipeline `Pipeline`, and those were what a read still promoted into V8's
 * old generation: 250 KB per scavenge on the REST read bench, against 65 KB with the counts sent as one script call
 * outside the auto-pipeline, with a third of the full collections. pds's CPU per read fell from 70–90 µs to
 * 62–67 µs (BENCHMARKS.md). Redis does the same work either way (the library's script, ~18 µs per count); only pds's
 * side of the call got cheaper.
 *
 * The window is exactly the library's: its script text is read from the library at start-up
 * (`require('async-ratelimiter').defineCommand.ratelimiter.lua`) and wrapped, unchanged, in a Lua function that the
 * batch calls once per count, in the order the counts were asked. Each count keeps its own timestamp (the library's
 * `microtime.now()`, taken when it was asked), so two counts of one user in the same turn are two entries, as two
 * separate calls were. Only the transport changed: N counts, one `EVALSHA` (ioredis falls back to `EVAL` on
 * `NOSCRIPT`), one reply of N `[remaining, reset, total]`.
 *
 * How the counts of a turn are gathered is {@link SlidingWindow}'s to say. A failed call (timeout, connection lost)
 * rejects every count it carried with its error; `rest/ratelimit.ts` then answers them from memory.
 *
 * Single Redis only, as `adapters/redis/connect.ts` connects: in a Redis Cluster the keys of one batch would span slots.
 */
import { createRequire } from 'node:module';
import DataLoader from 'dataloader';
import type { Redis } from 'ioredis';

/**
 * A limiter's count, as koa-ratelimit's limiters answer it: `remaining` before this one (admitted when > 0), `reset` in
 * epoch seconds, `total` the budget.
 */
export interface LimiterCount {
  remaining: number;
  reset: number;
  total: number;
}

/** Most counts sent in one script call; more in one turn go out in further calls of the same turn. */
export const MAX_BATCH = 64;

interface AsyncRatelimiterModule {
  defineCommand: { ratelimiter: { lua: string } };
}
const require = createRequire(import.meta.url);
const library = require('async-ratelimiter') as AsyncRatelimiterModule;
const microtime = require('async-ratelimiter/src/microtime.js') as { now(): number };

/**
 * The batch script. ARGV: the window in milliseconds, the budget, then one timestamp per key. The library's script reads
 * `KEYS[1]` and `ARGV[1..4]` (now, duration, max, peek) and ends in `return {…}`, so as a function body with `KEYS` and
 * `ARGV` as its parameters it runs unchanged.
 */
const BATCH_LUA = [
  'local function count(KEYS, ARGV)',
  library.defineCommand.ratelimiter.lua,
  'end',
  'local counts = {}',
  'for i = 1, #KEYS do',
  "  counts[i] = count({ KEYS[i] }, { ARGV[2 + i], ARGV[1], ARGV[2], '0' })",
  'end',
  'return counts',
].join('\n');

/**
 * The ioredis command {@link BATCH_LUA} is defined as, once per client. `connect.ts` leaves it out of auto-pipelining:
 * it is one call per turn already.
 */
export const SLIDING_WINDOW_COMMAND = 'pdsSlidingWindowBatch';

type BatchCommand = (numberOfKeys: number, ...args: (string | number)[]) => Promise<[number, number, number][]>;

/** One count as the batch sends it: its key, and the microsecond timestamp taken when it was asked. */
interface Count {
  key: string;
  now: number;
}

/**
 * One limit's window in Redis: `max` counts per `durationMs` per id, under keys `<namespace>:<id>` (the library's own
 * keys, so a budget is shared with any replica counting the same namespace, batched or not).
 *
 * The per-turn batching is DataLoader's (https://github.com/graphql/dataloader#batch-scheduling): `cache: false`, so
 * every `count()` is its own entry even for an id counted twice in a turn; `batchScheduleFn` sends a batch once the
 * turn's I/O callbacks have run (`setImmediate`, as ioredis's auto-pipelining does); `maxBatchSize` {@link MAX_BATCH},
 * more in one turn going out in further calls. DataLoader rejects every count of a batch whose call failed, or whose
 * reply does not hold one answer per count.
 * @example
 * const window = new SlidingWindow(redis, { max: 300, durationMs: 60_000, namespace: 'pds:limit:route' });
 * const { remaining } = await window.count('alice'); // admitted when remaining > 0
 */
export class SlidingWindow {
  readonly #prefix: string;
  readonly #loader: DataLoader<Count, LimiterCount>;

  /**
   * @param options `max` counts allowed per window, `durationMs` the window (milliseconds), `namespace` the key prefix.
   */
  constructor(redis: Redis, options: { max: number; durationMs: number; namespace: string }) {
    this.#prefix = `${options.namespace}:`;
    if (!(SLIDING_WINDOW_COMMAND in redis)) redis.defineCommand(SLIDING_WINDOW_COMMAND, { lua: BATCH_LUA });
    const call = (redis as unknown as Record<typeof SLIDING_WINDOW_COMMAND, BatchCommand>)[SLIDING_WINDOW_COMMAND].bind(redis);
    const { durationMs, max } = options;
    this.#loader = new DataLoader<Count, LimiterCount>(
      async (counts) => {
        const replies = await call(counts.length, ...counts.map((c) => c.key), durationMs, max, ...counts.map((c) => c.now));
        return replies.map(([remaining, reset, total]) => ({ remaining, reset: Math.floor(reset), total }));
      },
      { cache: false, maxBatchSize: MAX_BATCH, batchScheduleFn: (send) => setImmediate(send) },
    );
  }

  /**
   * Count one event for `id` and answer the window as it was before it (async-ratelimiter's `get()`).
   * @throws whatever ioredis rejected the script call with (command timeout, connection closed, a Redis error); a
   *   `TypeError` when the reply is not an array; DataLoader's `Error` when it is one of the wrong length.
   */
  count(id: string): Promise<LimiterCount> {
    return this.#loader.load({ key: this.#prefix + id, now: microtime.now() });
  }
}
