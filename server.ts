/**
 * The composition root: builds the platform for the configured backend, the authenticator, the limits and the Koa
 * app, and listens. `bin/commands/serve.ts` and the end-to-end tests both start pds through {@link startServer}.
 */
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import type Koa from 'koa';
import type { Middleware } from 'koa';
import type Router from '@koa/router';
import { createLogger, silentLogger, type Logger } from './core/logger.js';
import type { Platform } from './core/ports.js';
import { createSandboxPlatform } from './adapters/sandbox/index.js';
import { connectRedis } from './adapters/redis/connect.js';
import { createAuthenticator, type Authenticator } from './auth/authenticate.js';
import { loadOrCreateSecret } from './auth/self-issued.js';
import type { Config } from './config.js';
import { createRestApp } from './rest/app.js';
import { createAuthLimits, type AuthLimits } from './rest/auth-limit.js';
import { answerClientError, refuseConnect } from './rest/client-error.js';
import { createRouteLimit, createWriteLimiter } from './rest/ratelimit.js';
import { wellKnownRouter } from './rest/well-known.js';
import { createGitHubUserLookup } from './adapters/github/users.js';
import { createAuthorizationServer } from './auth/oauth/provider.js';
import { dexUpstream } from './auth/oauth/upstream-dex.js';
import { githubUpstream } from './auth/oauth/upstream-github.js';
import type { Upstream } from './auth/oauth/upstream.js';
import { providerPages } from './rest/oauth-pages.js';
import { oauthInteractionRouter, oauthProtocolRouter } from './rest/oauth-routes.js';
import type { WriteLimiter } from './tools/define.js';
import { checkedTools } from './tools/registry.js';

/** A listening pds. */
export interface RunningServer {
  /** `http://<host>:<port>` actually bound (port 0 resolved). */
  url: string;
  port: number;
  config: Config;
  platform: Platform;
  /** The Koa app being served (its routers give the mounted routes: `rest/mounted-routes.ts`). */
  app: Koa;
  /** Stop listening, end open connections, stop background work and flush state. */
  close(): Promise<void>;
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
   * fetch for what the OAuth authorization server asks of the outside world: upstream sign-in (Dex, GitHub) and Client
   * ID Metadata Documents (default: the global fetch, which for the latter refuses non-public addresses).
   */
  oauthFetch?: typeof fetch;
}

/** The upstream sign-ins `config.signIn` configures, Dex first. */
export function buildUpstreams(config: Config, fetchImpl?: typeof fetch): Upstream[] {
  const upstreams: Upstream[] = [];
  const { dex, github } = config.signIn;
  if (dex && config.authUrl) upstreams.push(dexUpstream({ ...dex, authUrl: config.authUrl, userClaim: config.oidcUserClaim, fetch: fetchImpl }));
  if (github) {
    const lookup = createGitHubUserLookup({ baseUrl: config.githubApiUrl, fetch: fetchImpl });
    upstreams.push(githubUpstream({ ...github, lookup, fetch: fetchImpl }));
  }
  return upstreams;
}

/**
 * The platform for `config.backend`.
 * @throws Error for `kubernetes` until the cluster adapters land.
 */
export async function buildPlatform(config: Config, log: Logger = silentLogger): Promise<Platform> {
  if (config.backend === 'sandbox') {
    return createSandboxPlatform({
      log,
      dataDir: config.dataDir,
      ...(config.databaseUrl ? { databaseUrl: config.databaseUrl } : {}),
      domain: config.domain,
      stepMs: config.sandboxStepMs,
      busyTimeoutMs: config.sqliteBusyTimeoutMs,
      githubAppSlug: config.githubAppSlug,
    });
  }
  throw new Error('PDS_BACKEND=kubernetes is not available in this build yet; use PDS_BACKEND=sandbox');
}

/**
 * Start pds on `config.host:config.port` (port 0 picks a free one; the returned `url` says which). Tokens and
 * OpenAPI use `config.baseUrl`, so set it to the address callers use.
 */
export async function startServer(config: Config, overrides: ServerOverrides = {}): Promise<RunningServer> {
  const log = overrides.log ?? createLogger({ level: config.logLevel });
  // The secret first: refusing a bad one must not leave a platform (and its data-directory lock) behind.
  const secret = await loadOrCreateSecret(config.jwtSecret, config.dataDir);
  const platform = overrides.platform ?? (await buildPlatform(config, log));
  // Settle audit entries as workflows finish; idempotent for engines that settle them themselves.
  platform.workflows.onSettled((run) => {
    void platform.audit.settle(run.name, run.phase, run.message).catch((err: unknown) => log.error({ err, workflow: run.name }, 'could not settle an audit entry'));
  });
  // Shared limits and PAT cache when REDIS_URL is set; never waits on an unreachable Redis (rest/ratelimit.ts policy).
  const redis = config.redisUrl ? await connectRedis(config.redisUrl, { log }) : undefined;
  const oauth = await createAuthorizationServer({
    baseUrl: config.baseUrl,
    secret,
    store: platform.oauth,
    trustProxy: config.trustProxy,
    pages: providerPages,
    fetch: overrides.oauthFetch,
    log,
  });
  const upstreams = buildUpstreams(config, overrides.oauthFetch);
  const app = createRestApp({
    tools: checkedTools(),
    invokeDeps: {
      platform,
      config,
      confirmSecret: secret,
      writeLimiter: overrides.writeLimiter ?? createWriteLimiter({ redis, log }),
    },
    authenticator: overrides.authenticator ?? createAuthenticator(config, secret, { redis }),
    routeLimit: overrides.routeLimit ?? createRouteLimit({ redis, trustProxy: config.trustProxy, log }),
    authLimits: overrides.authLimits ?? createAuthLimits({ redis, log }),
    publicRoutes: [
      wellKnownRouter(config),
      oauthProtocolRouter(oauth),
      oauthInteractionRouter({ server: oauth, upstreams, baseUrl: config.baseUrl, log }),
      ...(overrides.publicRoutes ?? []),
    ],
    log,
  });
  const http = app.listen(config.port, config.host);
  http.on('clientError', answerClientError);
  http.on('connect', refuseConnect);
  await once(http, 'listening');
  const port = (http.address() as AddressInfo).port;
  const host = config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    port,
    config,
    platform,
    app,
    async close() {
      await new Promise<void>((resolve) => {
        http.close(() => resolve());
        http.closeAllConnections();
      });
      await platform.close();
      redis?.disconnect();
    },
  };
}
