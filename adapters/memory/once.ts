/**
 * {@link OnceStore} in process memory: a `Map` from key to expiry time. For one replica without Redis, and for tests.
 * Claims do not survive a restart; use the sandbox's persisted store or Redis where that matters.
 */
import type { OnceStore } from '../../core/ports.js';

/** Expired keys are swept at most this often (in claims), so the map stays bounded by what is live. */
const SWEEP_EVERY = 256;

/**
 * @param now clock in milliseconds since the epoch (default `Date.now`), injectable for tests.
 * @throws RangeError from `claim` when `ttlSeconds` is not a positive integer (same contract as the Redis store).
 * @example
 * const once = memoryOnceStore();
 * await once.claim('confirm:abc', 600); // true
 * await once.claim('confirm:abc', 600); // false until 600 s have passed
 */
export function memoryOnceStore(now: () => number = Date.now): OnceStore & { readonly size: number } {
  const expiries = new Map<string, number>();
  let claims = 0;

  function sweep(at: number): void {
    for (const [key, expiresAt] of expiries) if (expiresAt <= at) expiries.delete(key);
  }

  return {
    get size() {
      return expiries.size;
    },
    async claim(key, ttlSeconds) {
      if (!Number.isInteger(ttlSeconds) || ttlSeconds < 1) throw new RangeError('ttlSeconds must be a positive integer');
      const at = now();
      if (++claims % SWEEP_EVERY === 0) sweep(at);
      const expiresAt = expiries.get(key);
      if (expiresAt !== undefined && expiresAt > at) return false;
      expiries.set(key, at + ttlSeconds * 1000);
      return true;
    },
  };
}
