/**
 * The Koa application: health, OpenAPI, docs, the REST routes of every tool and the MCP endpoint, all thin adapters
 * over invoke() (DESIGN.md). Middleware order: errors → JSON 404/405 → public routers → protected routers.
 *
 * Routing and the gates are one decision (issue 7 item 1): every router is strict and case-sensitive
 * (`rest/router.ts`), and the protected routers (the tool routes and `/mcp`) run authentication → body → per-user
 * route limit as router middleware, which @koa/router runs only for a request that matched one of their routes. No
 * path comparison stands between a spelling and a handler: a spelling either is a protected route, and passes the
 * gates, or is no route, and gets the JSON 404. A `GET` to a fixed-path tool route is found by one look-up ahead of
 * the routers (`rest/pre-route.ts`) and runs the same gates and handler. Bodies are read after authentication: REST's
 * by `rest/body.ts`, `/mcp`'s by `rest/mcp.ts`, which answers a bad one in JSON-RPC.
 */
import { METHODS } from 'node:http';
import Koa, { type Middleware } from 'koa';
import Router from '@koa/router';
import { ERROR_CODE_HEADER, RateLimited, isPlatformError } from '../core/errors.js';
import type { Authenticator } from '../auth/authenticate.js';
import { silentLogger, type Logger } from '../core/logger.js';
import type { Identity } from '../auth/identity.js';
import type { CallInteraction } from '../tools/interaction.js';
import type { AnyStream, AnyTool } from '../tools/define.js';
import { doorsFor } from '../tools/door.js';
import { invoke, invokeStream, type InvokeDeps } from '../tools/invoke.js';
import { allStreams } from '../tools/registry.js';
import type { Config } from '../config.js';
import { refusedToolCall } from '../tools/mcp-edge.js';
import type { AuthLimits } from './auth-limit.js';
import { readJsonBody } from './body.js';
import { docsRouter } from './docs.js';
import { errorMiddleware, statusWithoutBody } from './errors.js';
import { consoleRouter } from './console.js';
import { homeRouter } from './home.js';
import { iconRouter } from './icon.js';
import { mcpRouter, readMcpBody } from './mcp.js';
import { metricsRouter, type Metrics } from './metrics.js';
import { requestLog } from './request-log.js';
import { openApiYaml } from './openapi.js';
import { clientAddress } from './ratelimit.js';
import { cachedProbe } from './readiness.js';
import { createRouter } from './router.js';
import { toolRouter } from './routes.js';
import { preRoute } from './pre-route.js';
import { frameGuard } from './frame-guard.js';

/** Everything the app needs; built by the composition root (`server.ts`). */
export interface RestAppOptions {
  /** The tools to serve. In read-only mode invoke() refuses write tools (403) and MCP does not list them. */
  tools: readonly AnyTool[];
  invokeDeps: InvokeDeps;
  /** The configuration the HTTP edge reads (proxy trust, base URL, origins, toolsets). */
  config: Config;
  authenticator: Authenticator;
  /** The 300/min per-user limit; mounted after authentication on `/api/v1/*` and `/mcp` (issue 3). */
  routeLimit?: Middleware;
  /** Limits on failed authentications and GitHub look-ups per client address (`rest/auth-limit.ts`); none when absent. */
  authLimits?: AuthLimits;
  /** Unauthenticated routes mounted beside `/healthz` (e.g. `/.well-known/oauth-protected-resource`). */
  publicRoutes?: Router[];
  /** Where the request lines and unexpected errors go (default: nowhere). */
  log?: Logger;
  /** Counted per request, tool call and limit decision; `/metrics` serves them (`rest/metrics.ts`). */
  metrics?: Metrics;
  /** `PDS_METRICS_TOKEN`: the bearer token `GET /metrics` on this port asks for; without it there is no such route. */
  metricsToken?: string;
  /** The event streams to serve (default: all of `tools/registry.ts`); they pass the same gates as the tools. */
  streams?: readonly AnyStream[];
  /** Milliseconds between heartbeat comments of an idle event stream (default `HEARTBEAT_MS` of `rest/routes.ts`). */
  heartbeatMs?: number;
  /** Aborted when pds begins shutting down: `/readyz` then answers 503 so load balancers stop sending traffic. */
  draining?: AbortSignal;
  /**
   * The web console (`rest/console.ts`): the server's own listener for its token calls (default: the configured
   * host and port), and where its built files are (default: `dist/console/`).
   */
  console?: { localUrl?: () => string; dir?: string };
}

/**
 * Build the Koa app. It does not listen; see `server.ts`.
 * @returns a Koa app whose every error body is `{ "error": "…" }` (JSON-RPC errors on `/mcp`).
 */
export function createRestApp(options: RestAppOptions): Koa {
  const { tools, invokeDeps, authenticator, config } = options;
  const app = new Koa({ proxy: config.trustProxy });
  app.silent = true; // errors are rendered and logged by errorMiddleware, never printed twice

  const health = createRouter();
  const ready = cachedProbe(() => invokeDeps.platform.ready());
  health.get('/healthz', (ctx) => {
    ctx.body = { status: 'ok' };
  });
  health.get('/readyz', async (ctx) => {
    if (options.draining?.aborted) {
      ctx.status = 503;
      ctx.set(ERROR_CODE_HEADER, 'UNAVAILABLE');
      ctx.body = { error: 'not ready: pds is shutting down' };
    } else if (await ready()) {
      ctx.body = { status: 'ready', backend: invokeDeps.platform.kind };
    } else {
      ctx.status = 503;
      ctx.set(ERROR_CODE_HEADER, 'UNAVAILABLE');
      ctx.body = { error: 'not ready: the platform backend is still starting, unreachable, or cannot write its records' };
    }
  });
  health.get('/openapi.yaml', (ctx) => {
    ctx.type = 'application/yaml; charset=utf-8';
    ctx.body = openApiYaml(tools, config.baseUrl, options.streams ?? allStreams);
  });

  const { authLimits } = options;
  /** @param resourcePath the protected resource the routes are (`/mcp`), for the 401's `resource_metadata`. */
  const authenticateFor = (resourcePath?: string): Middleware => async (ctx, next) => {
    const address = clientAddress(ctx, config.trustProxy);
    try {
      const attempt = { ...authLimits?.attempt(address), ...(resourcePath && { resourcePath }) };
      ctx.state.identity = await authenticator.authenticate(ctx.get('authorization') || undefined, attempt);
    } catch (err) {
      // Over the address's budget of failures, the answer is 429 (thrown by failed()) instead of this 401.
      if (authLimits && isPlatformError(err) && err.code === 'UNAUTHENTICATED') await authLimits.failed(address);
      throw err;
    }
    return next();
  };
  const authenticate = authenticateFor();
  const passThrough: Middleware = (_ctx, next) => next();
  const limit = options.routeLimit ?? passThrough;
  // On /mcp only the limit can throw RateLimited (the MCP handler renders tool errors as results itself), so a
  // refused tools/call becomes an isError tool result the agent can read.
  const mcpLimit: Middleware = async (ctx, next) => {
    try {
      await limit(ctx, next);
    } catch (err) {
      const answer = err instanceof RateLimited ? refusedToolCall(ctx.request.body, err) : undefined;
      if (!answer) throw err;
      ctx.status = 200; // a JSON-RPC answer; the limiter had set 429
      ctx.set((err as RateLimited).headers);
      ctx.body = answer;
    }
  };

  const doors = doorsFor(tools);
  const api = toolRouter(tools, (tool, input, identity, door, interaction) => invoke(tool, input, identity, invokeDeps, { door, interaction }), doors, [
    authenticate,
    readJsonBody(),
    limit,
  ], {
    streams: options.streams ?? allStreams,
    run: (stream, input, identity, door, signal) => invokeStream(stream, input, identity, invokeDeps, { door, signal }),
    heartbeatMs: options.heartbeatMs,
  });
  const mcp = mcpRouter({
    tools,
    config,
    run: (tool: AnyTool, input: unknown, identity: Identity, interaction: CallInteraction) =>
      invoke(tool, input, identity, invokeDeps, { door: doors.mcp, interaction }),
    stateSecret: invokeDeps.confirmSecret,
    log: options.log,
    gates: [authenticateFor('/mcp'), readMcpBody(), mcpLimit],
  });
  // Any method Node accepts on a known path is a 405 with `Allow`, never a 501 (the router's default for methods it
  // does not implement); ctx.matched gathers the path matches of every router, so one allowedMethods serves them all.
  const methods = new Router({ methods: METHODS });

  if (options.metrics) app.context.metrics = options.metrics;
  app.use(requestLog({ log: options.log ?? silentLogger, metrics: options.metrics }));
  app.use(errorMiddleware(options.log));
  app.use(frameGuard());
  // Runs after everything below: a request nothing answered gets a JSON 404, and allowedMethods' 405 a JSON body.
  app.use(statusWithoutBody());
  app.use(methods.allowedMethods());
  const routers: Router[] = [
    health,
    consoleRouter({
      baseUrl: config.baseUrl,
      backend: invokeDeps.platform.kind,
      secret: invokeDeps.confirmSecret,
      store: invokeDeps.platform.oauth,
      once: invokeDeps.platform.once,
      localUrl: options.console?.localUrl ?? (() => `http://127.0.0.1:${config.port}`),
      dir: options.console?.dir,
      log: options.log ?? silentLogger,
    }),
    homeRouter(invokeDeps.config.baseUrl),
    docsRouter(),
    iconRouter(),
    ...(options.metrics && options.metricsToken ? [metricsRouter(options.metrics, options.metricsToken)] : []),
    ...(options.publicRoutes ?? []),
    mcp,
  ];
  // Fixed-path reads and `POST /mcp` skip the routers, not the gates (rest/pre-route.ts).
  app.use(preRoute(api, routers).middleware);
  app.use(preRoute(mcp, routers.slice(0, routers.indexOf(mcp)), 'POST').middleware);
  for (const router of [...routers, api]) app.use(router.routes());
  return app;
}
