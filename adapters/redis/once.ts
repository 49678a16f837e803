/**
 * {@link OnceStore} on Redis: `SET key 1 NX EX ttl`, so a value claimed on one replica is claimed for all.
 *
 * Unlike the limits, this store **fails closed**: while Redis is away `claim` throws `Unavailable` (503) rather than
 * guessing, because answering "first time" twice would let one confirmation run an operation twice.
 */
import type { Redis } from 'ioredis';
import { Unavailable } from '../../core/errors.js';
import type { OnceStore } from '../../core/ports.js';

/**
 * @param redis a client from `connectRedis`.
 * @param prefix key prefix (default `pds:once:`).
 * @example
 * const once = redisOnceStore(redis);
 * if (!(await once.claim(`confirm:${nonce}`, 600))) throw new Conflict('confirmation already used');
 */
export function redisOnceStore(redis: Redis, prefix = 'pds:once:'): OnceStore {
  return {
    async claim(key, ttlSeconds) {
      if (!Number.isInteger(ttlSeconds) || ttlSeconds < 1) throw new RangeError('ttlSeconds must be a positive integer');
      try {
        return (await redis.set(prefix + key, '1', 'EX', ttlSeconds, 'NX')) === 'OK';
      } catch (cause) {
        throw new Unavailable('the shared store (Redis) could not be reached to record a single-use value; retry shortly', { cause });
      }
    },
  };
}
