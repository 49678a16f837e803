/**
 * A cache of token verification results, keyed by the SHA-256 of the token so that no token is ever kept (in memory
 * or in Redis) in clear. Memory first; Redis as a second level shared by replicas when a client is given.
 *
 * Concurrent look-ups of the same uncached token share one verification (single flight), so a CI burst of N requests
 * with one new PAT costs one GitHub call. Errors thrown by the loader (e.g. `Unavailable`) are not cached.
 */
import * as crypto from 'node:crypto';
import type { Redis } from 'ioredis';

/** A cached verdict: the value for a good token, the caller-facing reason for a bad one. */
export type Verdict<T> = { ok: true; value: T } | { ok: false; message: string };

/** A loader's answer and how long it may be reused, in milliseconds. */
export interface Timed<T> {
  verdict: Verdict<T>;
  ttlMs: number;
}

export interface TokenCacheOptions {
  /**
   * Second-level store shared by replicas: the client when it can take commands now, `undefined` while it is away
   * (the composition root decides, with `redisReady` of `adapters/redis/connect.ts`). Failures to reach it are
   * ignored (memory still answers).
   */
  redis?: () => Redis | undefined;
  /** Redis key prefix, e.g. `pds:auth:pat:`. */
  namespace: string;
  /** Most entries kept in memory (default 10 000); the oldest are dropped first. */
  maxEntries?: number;
  /** Clock in epoch milliseconds (tests). */
  now?: () => number;
  /** Told where each look-up was answered (metrics): see {@link CacheLookup}. */
  onLookup?: (result: CacheLookup) => void;
}

/**
 * Where a look-up was answered: `memory` (this process), `redis` (another replica's verdict), `shared` (a verification
 * of the same token already running), or `miss` (verified upstream now).
 */
export type CacheLookup = 'memory' | 'redis' | 'shared' | 'miss';

interface Entry<T> {
  verdict: Verdict<T>;
  expiresAt: number;
}

const oneShot = (crypto as Partial<typeof crypto>).hash;

/** SHA-256 of a token, base64url: the only form in which a token is used as a key. */
export function tokenHash(token: string): string {
  // The one-shot form (Node ≥ 20.12) makes no Hash object: this runs on every authenticated request.
  return oneShot ? oneShot('sha256', token, 'base64url') : crypto.createHash('sha256').update(token).digest('base64url');
}

/**
 * @example
 * const cache = new TokenCache<string>({ namespace: 'pds:auth:pat:', redis });
 * const verdict = await cache.resolve(token, async () => ({ verdict: { ok: true, value: 'octocat' }, ttlMs: 300_000 }));
 */
export class TokenCache<T> {
  readonly #memory = new Map<string, Entry<T>>();
  readonly #inflight = new Map<string, Promise<Verdict<T>>>();
  readonly #redis: () => Redis | undefined;
  readonly #namespace: string;
  readonly #maxEntries: number;
  readonly #now: () => number;
  readonly #onLookup?: (result: CacheLookup) => void;

  constructor(options: TokenCacheOptions) {
    this.#redis = options.redis ?? (() => undefined);
    this.#namespace = options.namespace;
    this.#maxEntries = options.maxEntries ?? 10_000;
    this.#now = options.now ?? Date.now;
    this.#onLookup = options.onLookup;
  }

  /** The cached verdict for `token` (memory, then Redis), else the loader's, stored for its `ttlMs`. */
  async resolve(token: string, load: () => Promise<Timed<T>>): Promise<Verdict<T>> {
    const key = tokenHash(token);
    const hit = this.#peekHash(key);
    if (hit) {
      this.#onLookup?.('memory');
      return hit;
    }
    const pending = this.#inflight.get(key);
    if (pending) {
      this.#onLookup?.('shared');
      return pending;
    }
    const work = (async () => {
      const shared = await this.#fromRedis(key);
      if (shared) {
        this.#onLookup?.('redis');
        return shared;
      }
      this.#onLookup?.('miss');
      const { verdict, ttlMs } = await load();
      this.#remember(key, verdict, ttlMs);
      await this.#toRedis(key, verdict, ttlMs);
      return verdict;
    })().finally(() => this.#inflight.delete(key));
    this.#inflight.set(key, work);
    return work;
  }

  /** The in-memory verdict for `token`, if fresh. Synchronous: the hot path of an already-seen token. */
  peek(token: string): Verdict<T> | undefined {
    const verdict = this.#peekHash(tokenHash(token));
    this.#onLookup?.(verdict ? 'memory' : 'miss');
    return verdict;
  }

  /** Store a verdict in memory only. */
  set(token: string, verdict: Verdict<T>, ttlMs: number): void {
    this.#remember(tokenHash(token), verdict, ttlMs);
  }

  #peekHash(key: string): Verdict<T> | undefined {
    const entry = this.#memory.get(key);
    if (!entry) return undefined;
    if (entry.expiresAt > this.#now()) return entry.verdict;
    this.#memory.delete(key);
    return undefined;
  }

  #remember(key: string, verdict: Verdict<T>, ttlMs: number): void {
    if (ttlMs <= 0) return;
    this.#memory.delete(key);
    this.#memory.set(key, { verdict, expiresAt: this.#now() + ttlMs });
    while (this.#memory.size > this.#maxEntries) this.#memory.delete(this.#memory.keys().next().value!);
  }

  async #fromRedis(key: string): Promise<Verdict<T> | undefined> {
    const redis = this.#redis();
    if (!redis) return undefined;
    try {
      const [[, raw], [, pttl]] = (await redis.multi().get(this.#namespace + key).pttl(this.#namespace + key).exec()) as [
        [Error | null, string | null],
        [Error | null, number],
      ];
      if (raw === null || pttl <= 0) return undefined;
      const verdict = JSON.parse(raw) as Verdict<T>;
      this.#remember(key, verdict, pttl);
      return verdict;
    } catch {
      return undefined; // Redis away: memory and the loader still answer (rest/ratelimit.ts logs the outage).
    }
  }

  async #toRedis(key: string, verdict: Verdict<T>, ttlMs: number): Promise<void> {
    const redis = this.#redis();
    if (!redis || ttlMs <= 0) return;
    try {
      await redis.set(this.#namespace + key, JSON.stringify(verdict), 'PX', Math.ceil(ttlMs));
    } catch {
      // Best effort: the next replica asks the upstream once more.
    }
  }
}
