/**
 * The baseline: a bare Koa 3 server on 127.0.0.1, in its own process like pds. Reports its URL over IPC; answers `cpu`
 * with its CPU time and `rss` with its memory usage.
 *
 * - `GET /` answers "hello".
 * - `GET /json?bytes=N` answers a JSON document of N bytes, serialised per request as Koa does for an object body (to
 *   separate the cost of moving pds's response bodies from pds's own work).
 * - `GET /bytes?bytes=N` answers the same document as bytes encoded once, as pds sends a frozen read's answer.
 * - `GET /gated?bytes=N` answers those bytes behind the gates a pds read passes, each at its simplest on the library pds
 *   uses for it: the `Authorization` header's `tokenHash` (`auth/token-cache.ts`) looked up in a `Map`, the 300/min
 *   per-user limit counted in Redis by koa-ratelimit's Redis limiter (async-ratelimiter), one call per request, on a
 *   `connectRedis` client (`adapters/redis/connect.ts`, `REDIS_URL`; pds sends one turn's counts in one call of the
 *   same script, `adapters/redis/sliding-window.ts`), one pino line per
 *   request to stdout, and a prom-client counter and histogram. It is the floor of what pds's gates cost on Koa
 *   (BENCHMARKS.md, "Request path").
 */
import { once } from 'node:events';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import Koa, { type Context } from 'koa';
import { tokenHash } from '../auth/token-cache.js';
import { connectRedis } from '../adapters/redis/connect.js';

const documents = new Map<number, { filler: string }>();
const encoded = new Map<number, Buffer>();
const documentOf = (ctx: Context) => {
  const bytes = Number(ctx.query.bytes ?? 0);
  let doc = documents.get(bytes);
  if (!doc) documents.set(bytes, (doc = { filler: 'x'.repeat(Math.max(0, bytes - 13)) }));
  return { bytes, doc };
};
const bytesOf = (ctx: Context) => {
  const { bytes, doc } = documentOf(ctx);
  let body = encoded.get(bytes);
  if (!body) encoded.set(bytes, (body = Buffer.from(JSON.stringify(doc))));
  return body;
};

/** The gates at their simplest, made at the first `/gated` request (the other routes never load Redis or pino). */
type Gate = (ctx: Context) => Promise<void>;
let gate: Promise<Gate> | undefined;
async function makeGate(): Promise<Gate> {
  const require = createRequire(import.meta.url);
  const { pino } = await import('pino');
  const { Counter, Histogram, Registry } = await import('prom-client');
  const Limiter = require('koa-ratelimit/limiter/redis.js') as new (options: object) => {
    get(options: { id: string }): Promise<{ remaining: number; reset: number; total: number }>;
  };
  // pds's connection settings (auto-pipelining, timeouts) and pds's token hash: only the gates' own logic is left out.
  const redis = await connectRedis(process.env.REDIS_URL!);
  const limiter = new Limiter({ id: 'floor', db: redis, max: 300, duration: 60_000, namespace: 'bench:floor' });
  const log = pino();
  const registers = [new Registry()];
  const requests = new Counter({ name: 'requests_total', help: 'requests', labelNames: ['method', 'route', 'status'], registers });
  const seconds = new Histogram({ name: 'request_seconds', help: 'seconds', labelNames: ['method', 'route'], registers });
  const users = new Map<string, string>();
  return async (ctx) => {
    const started = performance.now();
    const hash = tokenHash(ctx.get('authorization'));
    let user = users.get(hash);
    if (!user) users.set(hash, (user = `user-${users.size}`));
    const count = await limiter.get({ id: user });
    if (count.remaining <= 0) ctx.throw(429);
    ctx.set('RateLimit-Remaining', String(count.remaining - 1));
    ctx.res.once('close', () => {
      const elapsed = (performance.now() - started) / 1000;
      requests.inc({ method: ctx.method, route: '/gated', status: ctx.res.statusCode });
      seconds.observe({ method: ctx.method, route: '/gated' }, elapsed);
      log.info({ method: ctx.method, route: '/gated', status: ctx.res.statusCode, ms: elapsed * 1000, user }, 'request');
    });
  };
}

const app = new Koa();
app.use(async (ctx) => {
  if (ctx.path === '/json') {
    ctx.body = documentOf(ctx).doc; // serialised per request, as Koa does for an object body
  } else if (ctx.path === '/bytes') {
    ctx.type = 'application/json';
    ctx.body = bytesOf(ctx);
  } else if (ctx.path === '/gated') {
    await (await (gate ??= makeGate()))(ctx);
    ctx.type = 'application/json';
    ctx.body = bytesOf(ctx);
  } else {
    ctx.body = 'hello';
  }
});
const server = app.listen(0, '127.0.0.1');
await once(server, 'listening');
process.send!({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` });
process.on('message', (msg: { type: string }) => {
  if (msg.type === 'stop') server.close(() => process.exit(0));
  if (msg.type === 'cpu') process.send!(process.cpuUsage());
  if (msg.type === 'rss') process.send!(process.memoryUsage());
});
