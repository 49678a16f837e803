/**
 * The shared Redis connection (ioredis 5) behind the per-user limits, the PAT cache and single-use markers, so that
 * several pds replicas agree (DESIGN.md "Ports": `RateLimitStore`).
 *
 * Configured so that **nothing waits on Redis**: the offline queue is off (a command issued while disconnected fails
 * at once instead of queueing), each command has a timeout, and a request is retried at most once. Callers treat a
 * failed command as "Redis is away" and apply their documented fallback (see `rest/ratelimit.ts`). The client keeps
 * reconnecting in the background; the outage is logged once when it starts and once when it ends, never per request.
 */
import type { Redis } from 'ioredis';
import { silentLogger, type Logger } from '../../core/logger.js';
import { SLIDING_WINDOW_COMMAND } from './sliding-window.js';

/** Tuning for {@link connectRedis}; the defaults suit a Redis on the same network. */
export interface RedisConnectOptions {
  /** TCP connect timeout, milliseconds (default 2000). */
  connectTimeoutMs?: number;
  /** Per-command timeout, milliseconds (default 500): a stalled Redis fails commands instead of holding requests. */
  commandTimeoutMs?: number;
  /** How long {@link connectRedis} waits for the first connection before returning anyway (default 2000). */
  waitMs?: number;
  log?: Logger;
}

/**
 * Connect to Redis. Resolves once connected, or after `waitMs` when Redis cannot be reached (logged; the client keeps
 * retrying and callers fall back meanwhile). Never rejects for an unreachable Redis: pds starts and serves without it.
 * @param url `redis://[:password@]host:port[/db]` or `rediss://…` (`REDIS_URL`).
 * @example
 * const redis = await connectRedis(config.redisUrl);
 * const limit = createRouteLimit({ redis, trustProxy: config.trustProxy });
 */
export async function connectRedis(url: string, options: RedisConnectOptions = {}): Promise<Redis> {
  const log = options.log ?? silentLogger;
  const where = redactUrl(url);
  // Imported here: without REDIS_URL pds never loads ioredis (issue 23 item 1).
  const { Redis } = await import('ioredis');
  const client = new Redis(url, {
    connectTimeout: options.connectTimeoutMs ?? 2000,
    commandTimeout: options.commandTimeoutMs ?? 500,
    maxRetriesPerRequest: 1,
    enableOfflineQueue: false,
    // Reconnect forever, backing off to one attempt every 2 s.
    retryStrategy: (times) => Math.min(times * 200, 2000),
    lazyConnect: true,
    // Commands issued in the same event-loop turn go out in one socket write. Not the limits' counts: they are
    // already one script call per turn (`sliding-window.ts`), which a pipeline around it would only delay and copy.
    enableAutoPipelining: true,
    autoPipeliningIgnoredCommands: [SLIDING_WINDOW_COMMAND],
  });
  let down = false;
  const wentDown = (reason: string) => {
    if (down) return;
    down = true;
    log.warn(`redis ${where} unreachable (${reason}); shared limits fall back to per-process memory until it returns`);
  };
  // An 'error' listener is required: without one ioredis prints every failed reconnect attempt.
  client.on('error', (err: Error) => wentDown(err.message));
  // A deliberate disconnect() ends in status 'end' right after 'close': not an outage.
  client.on('close', () => setImmediate(() => client.status !== 'end' && wentDown('connection closed')));
  client.on('ready', () => {
    if (!down) return;
    down = false;
    log.info(`redis ${where} reachable again; limits are shared across replicas again`);
  });
  await Promise.race([
    client.connect().catch(() => undefined),
    new Promise((resolve) => setTimeout(resolve, options.waitMs ?? 2000).unref()),
  ]);
  return client;
}

/** True when commands can be sent now; false while (re)connecting or closed. */
export function redisReady(client: Redis | undefined): client is Redis {
  return client !== undefined && client.status === 'ready';
}

/** The URL without its password, for logs. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return 'redis';
  }
}
