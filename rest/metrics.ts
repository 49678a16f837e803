/**
 * Prometheus metrics (issue 13 §2) with prom-client, in a registry of pds's own (one per server, so several servers in
 * one process do not share counts). Served at `GET /metrics` in the Prometheus text exposition format 0.0.4: on the
 * main port behind `PDS_METRICS_TOKEN` (a bearer token the scraper sends), or without a token on
 * `PDS_METRICS_PORT`, a port of its own that only the cluster's network reaches.
 *
 * | metric | type | labels |
 * |---|---|---|
 * | `pds_http_requests_total` | counter | `method`, `route` (template, or `unmatched`), `status` |
 * | `pds_http_request_duration_seconds` | histogram | `method`, `route` |
 * | `pds_tool_calls_total` | counter | `tool`, `door` (`rest`, `mcp`), `outcome` (`ok` or the error code) |
 * | `pds_tool_call_duration_seconds` | histogram | `tool`, `door` |
 * | `pds_workflows_total` | counter | `operation`, `outcome` (`succeeded`, `failed`), counted as workflows settle |
 * | `pds_workflow_duration_seconds` | histogram | `operation`, `outcome` (submission to settlement) |
 * | `pds_limit_decisions_total` | counter | `limit` (`route`, `write`, `authfail`, `patlookup`), `decision` (`allowed`, `refused`, `exempt`), `store` (`redis`, `memory`, `none`) |
 * | `pds_token_cache_lookups_total` | counter | `cache` (`pat`, `jwt`), `result` (`memory`, `redis`, `shared`, `miss`) |
 * | `pds_dependency_up` | gauge | `dependency` (`redis`; `records` on the sandbox backend, `cluster` on kubernetes: `Platform.ready()`) |
 * | Node's default metrics | | `process_*`, `nodejs_*` (prom-client's `collectDefaultMetrics`) |
 */
import { timingSafeEqual } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { once } from 'node:events';
import type { Redis } from 'ioredis';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type Router from '@koa/router';
import { Unauthenticated } from '../core/errors.js';
import type { Platform } from '../core/ports.js';
import { createRouter } from './router.js';

/** A limiter's decision for one request or call. */
export type LimitDecision = 'allowed' | 'refused' | 'exempt';
/** Where a limiter counted it (`none` when it did not count: exempt). */
export type LimitStore = 'redis' | 'memory' | 'none';
/** Where a token verdict came from: this process's memory, Redis (another replica verified it), a verification already running, or none. */
export type TokenCacheResult = 'memory' | 'redis' | 'shared' | 'miss';

/** What pds counts; each method is cheap enough for the request path (a label look-up and an add). */
export interface Metrics {
  readonly registry: Registry;
  httpRequest(method: string, route: string, status: number, seconds: number): void;
  toolCall(tool: string, door: 'rest' | 'mcp', outcome: string, seconds: number): void;
  workflowSettled(operation: string, outcome: string, seconds: number): void;
  limitDecision(limit: string, decision: LimitDecision, store: LimitStore): void;
  tokenCache(cache: 'pat' | 'jwt', result: TokenCacheResult): void;
}

/** What the health gauges read at scrape time. */
export interface MetricsSources {
  platform: Pick<Platform, 'kind' | 'ready'>;
  /** Present when `REDIS_URL` is set. */
  redis?: Pick<Redis, 'status'>;
}

/** Longest a scrape waits on `Platform.ready()` before reporting the dependency down, milliseconds. */
const READY_TIMEOUT_MS = 2_000;

/**
 * The metrics of one pds.
 * @example
 * const metrics = createMetrics({ platform, redis });
 * metrics.httpRequest('GET', '/api/v1/tenants', 200, 0.002);
 * const text = await metrics.registry.metrics();
 */
export function createMetrics(sources: MetricsSources): Metrics {
  const registry = new Registry();
  const registers = [registry];
  collectDefaultMetrics({ register: registry });

  const httpRequests = new Counter({ name: 'pds_http_requests_total', help: 'HTTP requests answered, by method, route template and status.', labelNames: ['method', 'route', 'status'], registers });
  const httpDuration = new Histogram({
    name: 'pds_http_request_duration_seconds',
    help: 'Time from receiving a request to sending the last byte of its answer, seconds.',
    labelNames: ['method', 'route'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers,
  });
  const toolCalls = new Counter({ name: 'pds_tool_calls_total', help: 'Tool calls, by tool, door (rest, mcp) and outcome (ok or the error code).', labelNames: ['tool', 'door', 'outcome'], registers });
  const toolDuration = new Histogram({
    name: 'pds_tool_call_duration_seconds',
    help: 'Time a tool call took inside pds (validation, access, limits, handler), seconds.',
    labelNames: ['tool', 'door'],
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5, 30],
    registers,
  });
  const workflows = new Counter({ name: 'pds_workflows_total', help: 'Workflows settled, by operation and outcome (succeeded, failed).', labelNames: ['operation', 'outcome'], registers });
  const workflowDuration = new Histogram({
    name: 'pds_workflow_duration_seconds',
    help: 'Time from a workflow being submitted to settling, seconds.',
    labelNames: ['operation', 'outcome'],
    buckets: [0.1, 0.5, 1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600],
    registers,
  });
  const limits = new Counter({
    name: 'pds_limit_decisions_total',
    help: 'Limiter decisions, by limit (route, write, authfail, patlookup), decision (allowed, refused, exempt) and store (redis, memory, none).',
    labelNames: ['limit', 'decision', 'store'],
    registers,
  });
  const tokenCache = new Counter({
    name: 'pds_token_cache_lookups_total',
    help: 'Token verification cache look-ups, by cache (pat, jwt) and result (memory, redis, shared: hits; miss: verified upstream).',
    labelNames: ['cache', 'result'],
    registers,
  });
  const { platform, redis } = sources;
  new Gauge({
    name: 'pds_dependency_up',
    help: 'Whether a dependency answers (1) or not (0): redis; records (sandbox) or cluster (kubernetes), as Platform.ready() reports.',
    labelNames: ['dependency'],
    registers,
    async collect() {
      if (redis) this.set({ dependency: 'redis' }, redis.status === 'ready' ? 1 : 0);
      this.set({ dependency: platform.kind === 'sandbox' ? 'records' : 'cluster' }, (await readyWithin(platform, READY_TIMEOUT_MS)) ? 1 : 0);
    },
  });

  return {
    registry,
    httpRequest(method, route, status, seconds) {
      httpRequests.inc({ method, route, status });
      httpDuration.observe({ method, route }, seconds);
    },
    toolCall(tool, door, outcome, seconds) {
      toolCalls.inc({ tool, door, outcome });
      toolDuration.observe({ tool, door }, seconds);
    },
    workflowSettled(operation, outcome, seconds) {
      workflows.inc({ operation, outcome });
      workflowDuration.observe({ operation, outcome }, seconds);
    },
    limitDecision(limit, decision, store) {
      limits.inc({ limit, decision, store });
    },
    tokenCache(cache, result) {
      tokenCache.inc({ cache, result });
    },
  };
}

async function readyWithin(platform: Pick<Platform, 'ready'>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([platform.ready().catch(() => false), late]);
  } finally {
    clearTimeout(timer);
  }
}

function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * `GET /metrics` on the main port, for a scraper sending `Authorization: Bearer <token>` (`PDS_METRICS_TOKEN`); 401
 * otherwise. Mounted only when the token is set: without it the main port has no `/metrics` (404).
 */
export function metricsRouter(metrics: Metrics, token: string): Router {
  const router = createRouter();
  router.get('/metrics', async (ctx) => {
    const match = /^Bearer +(\S+) *$/i.exec(ctx.get('authorization'));
    if (!match || !sameSecret(match[1]!, token)) {
      throw new Unauthenticated('metrics need "Authorization: Bearer <PDS_METRICS_TOKEN>"', { challenge: 'Bearer realm="pds-metrics"' });
    }
    ctx.type = metrics.registry.contentType;
    ctx.body = await metrics.registry.metrics();
  });
  return router;
}

/**
 * A plain HTTP server answering `GET /metrics` (and 404 for anything else) on `PDS_METRICS_PORT`, without a token.
 * @returns the listening server; close it on shutdown.
 */
export async function serveMetrics(metrics: Metrics, port: number, host: string): Promise<Server> {
  const server = createServer((req, res) => {
    if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics') {
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: `no such endpoint: ${req.method} ${req.url}; this port serves GET /metrics` }));
      return;
    }
    metrics.registry.metrics().then(
      (text) => res.writeHead(200, { 'content-type': metrics.registry.contentType }).end(text),
      () => res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'internal error' })),
    );
  });
  server.listen(port, host);
  await once(server, 'listening');
  return server;
}
