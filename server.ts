/**
 * The composition root: builds the platform for the configured backend, the authenticator, the limits and the Koa
 * app, and listens. `bin/commands/serve.ts` and the end-to-end tests both start pds through {@link startServer}.
 */
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { Script } from 'node:vm';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type Koa from 'koa';
import type { Middleware } from 'koa';
import type Router from '@koa/router';
import { createLogger, silentLogger, type Logger } from './core/logger.js';
import type { Platform } from './core/ports.js';
import { createSandboxPlatform } from './adapters/sandbox/index.js';
import { connectRedis, redisReady } from './adapters/redis/connect.js';
import { createAuthenticator, type Authenticator } from './auth/authenticate.js';
import { loadOrCreateSecret } from './auth/self-issued.js';
import type { Config } from './config.js';
import { createRestApp } from './rest/app.js';
import { createAuthLimits, createOAuthLimit, type AuthLimits } from './rest/auth-limit.js';
import { answerClientError, refuseConnect } from './rest/client-error.js';
import { createRouteLimit, createWriteLimiter } from './rest/ratelimit.js';
import { wellKnownRouter } from './rest/well-known.js';
import { createGitHubUserLookup } from './adapters/github/users.js';
import { createOutboundFetch } from './adapters/outbound/fetch.js';
import { prometheusErrorRate } from './adapters/prometheus/error-rate.js';
import { lazyAuthorizationServer } from './auth/oauth/provider.js';
import { createGitHubActionsVerifier } from './auth/github-actions.js';
import { createMetrics, serveMetrics, type Metrics } from './rest/metrics.js';
import type { SignInProvider } from './auth/oauth/upstream.js';
import { providerPages } from './rest/oauth-pages.js';
import { oauthInteractionRouter, oauthProtocolRouter } from './rest/oauth-routes.js';
import { InflightResponses } from './rest/inflight.js';
import type { WriteLimiter } from './tools/define.js';
import { checkedTools } from './tools/registry.js';

/** A listening pds. */

/** How long closing waits for requests in flight (waits answering at shutdown) before cutting connections, ms. */
const CLOSE_GRACE_MS = 2000;
export interface RunningServer {
  /** `http://<host>:<port>` actually bound (port 0 resolved). */
  url: string;
  port: number;
  config: Config;
  platform: Platform;
  /** The Koa app being served (its routers give the mounted routes: `rest/mounted-routes.ts`). */
  app: Koa;
  /** The process logger pds writes to. */
  log: Logger;
  /** The server's metrics (`/metrics`). */
  metrics: Metrics;
  /** Stop listening, end open connections at once, stop background work and flush state. */
  close(): Promise<void>;
  /**
   * Graceful shutdown (what SIGTERM does; issue 13 §3): `/readyz` answers 503, the listener stops accepting, idle
   * keep-alive connections close and every answer from now on says `Connection: close`; requests in flight finish,
   * for at most `graceMs` (default `PDS_SHUTDOWN_S`), after which their connections are closed. Then the platform
   * stops background work (running workflows stay recorded as running and are resumed by the next pds: the sandbox
   * continues them, the cluster tracks them again) and Redis and the record store are closed.
   * @returns how many requests were still in flight when the grace period ended (0 for a clean drain).
   */
  shutdown(graceMs?: number): Promise<{ unfinished: number }>;
}

/** Pieces a caller (tests, issue 3 wiring) may supply instead of the defaults. */
export interface ServerOverrides {
  platform?: Platform;
  authenticator?: Authenticator;
  routeLimit?: Middleware;
  authLimits?: AuthLimits;
  writeLimiter?: WriteLimiter;
  publicRoutes?: Router[];
  /** The process logger (default: JSON lines on stdout at `PDS_LOG_LEVEL`). */
  log?: Logger;
  /**
   * fetch for what the OAuth authorization server asks of the outside world: upstream sign-in (Dex, GitHub), and in
   * place of the outbound rule's fetch (`adapters/outbound/fetch.ts`) for Client ID Metadata Documents and
   * `jwks_uri` (default: the global fetch for upstreams, the outbound rule for the rest).
   */
  oauthFetch?: typeof fetch;
  /** Milliseconds between heartbeats of idle event streams (default `HEARTBEAT_MS` of `rest/routes.ts`). */
  heartbeatMs?: number;
  /** Where the built web console is (default `dist/console/`; tests build their own). */
  consoleDir?: string;
}

/**
 * The upstream sign-ins `config.signIn` configures, Dex first. Each upstream's module (and openid-client with it) is
 * imported only when that upstream is configured.
 */
export async function buildUpstreams(config: Config, fetchImpl?: typeof fetch): Promise<SignInProvider[]> {
  const upstreams: SignInProvider[] = [];
  const { dex, github } = config.signIn;
  if (dex && config.authUrl) {
    const { dexUpstream } = await import('./auth/oauth/upstream-dex.js');
    upstreams.push(dexUpstream({ ...dex, authUrl: config.authUrl, userClaim: config.oidcUserClaim, fetch: fetchImpl }));
  }
  if (github) {
    const { githubUpstream } = await import('./auth/oauth/upstream-github.js');
    const lookup = createGitHubUserLookup({ baseUrl: config.githubApiUrl, fetch: fetchImpl });
    upstreams.push(githubUpstream({ ...github, lookup, fetch: fetchImpl }));
  }
  return upstreams;
}

/**
 * Log the process's memory (`process.memoryUsage()`, MiB) at the end of one start-up phase, at debug level: where the
 * resident set of an idle pds comes from (issue 23; BENCHMARKS.md "Memory").
 */
function logMemory(log: Logger, phase: 'modules' | 'platform' | 'app' | 'listen'): void {
  if (!log.isLevelEnabled('debug')) return;
  const mib = (bytes: number) => Math.round((bytes / 2 ** 20) * 10) / 10;
  const { rss, heapTotal, heapUsed, external, arrayBuffers } = process.memoryUsage();
  log.debug(
    { phase, rssMiB: mib(rss), heapTotalMiB: mib(heapTotal), heapUsedMiB: mib(heapUsed), externalMiB: mib(external), arrayBuffersMiB: mib(arrayBuffers) },
    `memory after start-up phase ${phase}: RSS ${mib(rss)} MiB, V8 heap ${mib(heapUsed)} MiB used`,
  );
}

/** How often {@link keepMemoryReducerAwake} compiles its empty script, seconds (under the ~110 s it lasts). */
const MEMORY_REDUCER_TICK_SECONDS = 30;

/**
 * Keep V8's memory reducer able to give memory back after a load, on Node 24 and later (issue 23; BENCHMARKS.md
 * "Seventh pass: the memory reducer on Node 24"). Returns a function that stops it.
 *
 * The reducer wakes 8 s after a full collection and starts a memory-reducing one (which also frees the young
 * generation's pooled pages) only when the young generation, the old generation and the embedder heap (cppgc) all
 * allocate slowly. Since V8 13.1 ("[gc] Use exponential decay for allocation speed",
 * https://chromium-review.googlesource.com/c/v8/v8/+/5935313) an embedder rate that never saw an allocation is exactly
 * 0, and `ComputeMutatorUtilizationImpl` in https://github.com/nodejs/node/blob/v24.21.0/deps/v8/src/heap/heap.cc
 * reads a rate of 0 as the highest: `--trace-mutator-utilization` prints `Embedder mutator utilization = 0.000
 * (mutator_speed=0, …)` and `--trace-memory-reducer` `high alloc` on every tick, so a pds on Node 24 kept what a load
 * had grown until V8's 100 s watchdog, or for good while ordinary collections kept resetting that. Node allocates on
 * cppgc only for `node:vm` (its `ContextifyScript`), so one empty `vm.Script` every
 * {@link MEMORY_REDUCER_TICK_SECONDS} s keeps the rate above 0: it decays with a 100 ms half-life and reaches 0 again
 * only after about 110 s. Costs one compile of an empty script per period. Node 20's V8 (11) kept a floor of
 * 1 byte/ms under that rate, so there it changes nothing. `test/artifact/image.test.ts` runs the image's `CMD` with
 * `--trace-memory-reducer` and waits for the reducer's collection after a load.
 */
function keepMemoryReducerAwake(): () => void {
  const tick = () => {
    new Script('', { filename: 'pds-memory-reducer-tick' });
  };
  tick();
  const timer = setInterval(tick, MEMORY_REDUCER_TICK_SECONDS * 1000);
  timer.unref();
  return () => clearInterval(timer);
}

/**
 * The platform for `config.backend`.
 * @param shutdown aborted when pds begins shutting down; the platform's `shutdown` signal follows it.
 * @param secret the server secret, which seals webhook signing secrets at rest (absent: a random key per process).
 * @throws Error for `kubernetes` without `PDS_DATABASE_URL`, without a cluster, or when its caches cannot be filled.
 */
export async function buildPlatform(config: Config, log: Logger = silentLogger, shutdown?: AbortSignal, secret?: Uint8Array): Promise<Platform> {
  const webhooks = { ...(secret ? { secret } : {}), allowPrivate: config.outboundAllowPrivate, backoffMs: config.webhookBackoffMs };
  if (config.backend === 'sandbox') {
    return createSandboxPlatform({
      log,
      shutdown,
      dataDir: config.dataDir,
      ...(config.databaseUrl ? { databaseUrl: config.databaseUrl } : {}),
      domain: config.domain,
      stepMs: config.sandboxStepMs,
      busyTimeoutMs: config.sqliteBusyTimeoutMs,
      rollout: {
        pauseScale: config.sandboxPauseScale,
        unhealthyTags: config.sandboxUnhealthyTags,
        ...(config.prometheusUrl && {
          errorRate: prometheusErrorRate({
            url: config.prometheusUrl,
            fetch: createOutboundFetch({ allowPrivate: config.outboundAllowPrivate }) as (url: string) => Promise<Response>,
          }),
        }),
      },
      githubAppSlug: config.githubAppSlug,
      webhooks,
    });
  }
  // Loaded here, not at the top: the cluster client (@kubernetes/client-node) and Octokit (GitHub App) are a third of
  // the modules pds could load, and the sandbox uses neither (issue 23 item 1; test/ops/lazy-modules.test.ts).
  const { createKubernetesPlatform } = await import('./adapters/kubernetes/index.js');
  const privateKey = config.githubApp && (await import('./adapters/github/app.js')).readPrivateKey(config.githubApp.privateKey, config.githubApp.privateKeyFile);
  return createKubernetesPlatform({
    log,
    shutdown,
    dataDir: config.dataDir,
    databaseUrl: config.databaseUrl,
    workflowNamespace: config.workflowNamespace,
    argocdNamespace: config.argocdNamespace,
    kubeTimeoutMs: config.kubeTimeoutMs,
    registry: config.registry,
    domain: config.domain,
    lokiUrl: config.lokiUrl,
    githubAppSlug: config.githubAppSlug,
    webhooks,
    ...(config.githubApp &&
      privateKey && { githubApp: { appId: config.githubApp.appId, privateKey, slug: config.githubAppSlug, apiUrl: config.githubApiUrl } }),
  });
}

/**
 * Start pds on `config.host:config.port` (port 0 picks a free one; the returned `url` says which). Tokens and
 * OpenAPI use `config.baseUrl`, so set it to the address callers use.
 */
export async function startServer(config: Config, overrides: ServerOverrides = {}): Promise<RunningServer> {
  const log = overrides.log ?? createLogger({ level: config.logLevel });
  // Phases: `modules` (configuration read, the server's modules imported), `platform` (record store opened, platform
  // built, its caches filled), `app` (authorization server, limits, routes), `listen`.
  logMemory(log, 'modules');
  const draining = new AbortController();
  // The secret first: refusing a bad one must not leave a platform (and its data-directory lock) behind.
  const secret = await loadOrCreateSecret(config.jwtSecret, config.dataDir);
  const platform = overrides.platform ?? (await buildPlatform(config, log, draining.signal, secret));
  logMemory(log, 'platform');
  // Shared limits and PAT cache when REDIS_URL is set; never waits on an unreachable Redis (rest/ratelimit.ts policy).
  const redis = config.redisUrl ? await connectRedis(config.redisUrl, { log }) : undefined;
  const metrics = createMetrics({ platform, redis });
  const onDecision = metrics.limitDecision.bind(metrics);
  // Settle audit entries as workflows finish; idempotent for engines that settle them themselves.
  platform.workflows.onSettled((run) => {
    const seconds = run.finishedAt ? Math.max(0, (Date.parse(run.finishedAt) - Date.parse(run.startedAt)) / 1000) : 0;
    metrics.workflowSettled(run.operation, run.phase, seconds);
    log.info({ workflow: run.name, operation: run.operation, phase: run.phase, seconds, message: run.message }, `workflow ${run.name} ${run.phase}`);
    void platform.audit.settle(run.name, run.phase, run.message).catch((err: unknown) => log.error({ err, workflow: run.name }, 'could not settle an audit entry'));
  });
  // Client ID Metadata Documents and jwks_uri are URLs a caller chooses: they go through the outbound rule.
  const outbound = overrides.oauthFetch ?? (createOutboundFetch({ allowPrivate: config.outboundAllowPrivate }) as typeof fetch);
  const oauth = lazyAuthorizationServer({
    baseUrl: config.baseUrl,
    secret,
    store: platform.oauth,
    trustProxy: config.trustProxy,
    pages: providerPages,
    fetch: outbound,
    log,
    // The issuer's key set too: the issuer is configuration, but the rule costs nothing and covers a mistyped one.
    githubActions: createGitHubActionsVerifier({ issuer: config.githubOidcIssuer, audience: config.baseUrl, fetch: outbound }),
  });
  const upstreams = await buildUpstreams(config, overrides.oauthFetch);
  // With sign-in configured the authorization server will be used: build it now, so a fault shows at start-up. Without,
  // it is built at the first OAuth request (registration, metadata, a refresh), and oidc-provider is not loaded before.
  if (upstreams.length) await oauth();
  const oauthLimit = createOAuthLimit({ redis, trustProxy: config.trustProxy, log });
  // The console calls the token endpoint on this listener; its port is known once it listens (port 0 in tests).
  let localUrl = '';
  const app = createRestApp({
    tools: checkedTools(),
    config,
    heartbeatMs: overrides.heartbeatMs,
    invokeDeps: {
      platform,
      // Only what invoke() reads: handlers never hold the secrets of the configuration.
      config: {
        readOnly: config.readOnly,
        baseUrl: config.baseUrl,
        domain: config.domain,
        workflowNamespace: config.workflowNamespace,
        argocdNamespace: config.argocdNamespace,
      },
      confirmSecret: secret,
      writeLimiter: overrides.writeLimiter ?? createWriteLimiter({ redis, log, onDecision }),
    },
    authenticator: overrides.authenticator ?? createAuthenticator(config, secret, {
        lookupGitHubUser: createGitHubUserLookup({ baseUrl: config.githubApiUrl }),
        redis: () => (redisReady(redis) ? redis : undefined),
        onCacheLookup: metrics.tokenCache.bind(metrics),
      }),
    routeLimit: overrides.routeLimit ?? createRouteLimit({ redis, trustProxy: config.trustProxy, log, onDecision }),
    authLimits: overrides.authLimits ?? createAuthLimits({ redis, log, onDecision }),
    publicRoutes: [
      wellKnownRouter(config),
      oauthProtocolRouter(oauth, oauthLimit),
      oauthInteractionRouter({ server: oauth, upstreams, baseUrl: config.baseUrl, log, gate: oauthLimit }),
      ...(overrides.publicRoutes ?? []),
    ],
    log,
    metrics,
    metricsToken: config.metricsToken,
    draining: draining.signal,
    console: { localUrl: () => localUrl, dir: overrides.consoleDir },
  });
  logMemory(log, 'app');
  const http = app.listen(config.port, config.host);
  http.on('clientError', answerClientError);
  http.on('connect', refuseConnect);
  await once(http, 'listening');
  const metricsServer = config.metricsPort ? await serveMetrics(metrics, config.metricsPort, config.host) : undefined;
  logMemory(log, 'listen');
  const stopMemoryReducerTick = keepMemoryReducerAwake();
  // Requests in flight, for the drain; once draining, every answer closes its connection after itself.
  const inflight = new InflightResponses();
  http.on('request', (_req: IncomingMessage, res: ServerResponse) => {
    inflight.add(res);
    if (draining.signal.aborted) res.setHeader('Connection', 'close');
  });
  let closed: Promise<void> | undefined;
  const release = () =>
    (closed ??= (async () => {
      stopMemoryReducerTick();
      metricsServer?.close();
      metricsServer?.closeAllConnections();
      await platform.close();
      await redis?.quit().catch(() => redis.disconnect());
    })());
  /**
   * Stop accepting, abort `Platform.shutdown` (waiting calls answer at once), let requests in flight finish within
   * `graceMs` (milliseconds), then cut what is left and release the platform and Redis.
   * @returns how many requests were still unanswered when the grace period ended.
   */
  const drain = async (graceMs: number): Promise<{ unfinished: number }> => {
    draining.abort();
    for (const res of inflight) if (!res.headersSent) res.setHeader('Connection', 'close');
    const stopped = new Promise<void>((resolve) => http.close(() => resolve()));
    http.closeIdleConnections();
    const allAnswered = inflight.emptied();
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), graceMs)));
    const outcome = await Promise.race([allAnswered.then(() => 'drained' as const), late]);
    clearTimeout(timer);
    const unfinished = outcome === 'late' ? inflight.size : 0;
    if (unfinished) log.warn({ unfinished, graceMs }, 'shutdown: requests still running at the end of the grace period; closing their connections');
    http.closeAllConnections();
    await stopped;
    await release();
    return { unfinished };
  };
  const port = (http.address() as AddressInfo).port;
  const host = config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host;
  localUrl = `http://${config.host === '0.0.0.0' ? '127.0.0.1' : config.host === '::' ? '[::1]' : host.includes(':') ? `[${host}]` : host}:${port}`;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    port,
    config,
    platform,
    app,
    log,
    metrics,
    async close() {
      // A quick stop (tests, error paths): the drain of shutdown() with a short grace, so calls waiting on a workflow
      // (wait_seconds) still answer with its current state before connections are cut.
      await drain(CLOSE_GRACE_MS);
    },
    async shutdown(graceMs = config.shutdownSeconds * 1000) {
      return drain(graceMs);
    },
  };
}
