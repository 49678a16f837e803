/**
 * The Koa application: health, OpenAPI, docs, the REST routes of every tool and the MCP endpoint, all thin adapters
 * over invoke() (DESIGN.md). Middleware order: errors → body (REST's parser, or for `/mcp` its own, which notes a
 * bad body for a JSON-RPC answer; `rest/mcp.ts`) → public routes → (for `/api/v1` and `/mcp`) authentication →
 * per-user route limit → tool routes or MCP → JSON 404.
 */
import Koa, { type Middleware } from 'koa';
import Router from '@koa/router';
import { bodyParser } from '@koa/bodyparser';
import { NotFound, RateLimited } from '../core/errors.js';
import type { Authenticator } from '../auth/authenticate.js';
import type { Logger } from '../core/logger.js';
import type { Identity } from '../auth/identity.js';
import type { CallInteraction } from '../tools/interaction.js';
import type { AnyTool } from '../tools/define.js';
import { invoke, type InvokeDeps } from '../tools/invoke.js';
import { refusedToolCall } from '../tools/mcp.js';
import { docsRouter } from './docs.js';
import { errorMiddleware } from './errors.js';
import { iconRouter } from './icon.js';
import { mcpRouter, readMcpBody } from './mcp.js';
import { openApiYaml } from './openapi.js';
import { toolRouter } from './routes.js';

/** Everything the app needs; built by the composition root (`server.ts`). */
export interface RestAppOptions {
  /** The tools to serve. In read-only mode invoke() refuses write tools (403) and MCP does not list them. */
  tools: readonly AnyTool[];
  invokeDeps: InvokeDeps;
  authenticator: Authenticator;
  /** The 300/min per-user limit; mounted after authentication on `/api/v1/*` and `/mcp` (issue 3). */
  routeLimit?: Middleware;
  /** Unauthenticated routes mounted beside `/healthz` (e.g. `/.well-known/oauth-protected-resource`). */
  publicRoutes?: Router[];
  /** Where unexpected errors go (default: nowhere). */
  log?: Logger;
}

/** Paths that require a bearer token. */
function isProtected(path: string): boolean {
  return path === '/api/v1' || path.startsWith('/api/v1/') || path === '/mcp';
}

/**
 * Build the Koa app. It does not listen; see `server.ts`.
 * @returns a Koa app whose every error body is `{ "error": "…" }`.
 */
export function createRestApp(options: RestAppOptions): Koa {
  const { tools, invokeDeps, authenticator } = options;
  const app = new Koa({ proxy: invokeDeps.config.trustProxy });
  app.silent = true; // errors are rendered and logged by errorMiddleware, never printed twice

  const health = new Router();
  health.get('/healthz', (ctx) => {
    ctx.body = { status: 'ok' };
  });
  health.get('/readyz', async (ctx) => {
    if (await invokeDeps.platform.ready()) {
      ctx.body = { status: 'ready', backend: invokeDeps.platform.kind };
    } else {
      ctx.status = 503;
      ctx.body = { error: 'not ready: the platform backend is still starting or unreachable' };
    }
  });
  health.get('/openapi.yaml', (ctx) => {
    ctx.type = 'application/yaml; charset=utf-8';
    ctx.body = openApiYaml(tools, invokeDeps.config.baseUrl);
  });

  const authenticate: Middleware = async (ctx, next) => {
    if (!isProtected(ctx.path)) return next();
    ctx.state.identity = await authenticator.authenticate(ctx.get('authorization') || undefined);
    return next();
  };

  const runTool = (tool: AnyTool, input: unknown, identity: Identity, interaction?: CallInteraction) =>
    invoke(tool, input, identity, invokeDeps, interaction);
  const api = toolRouter(tools, runTool);
  const mcp = mcpRouter({ tools, config: invokeDeps.config, run: runTool, stateSecret: invokeDeps.confirmSecret, log: options.log });

  app.use(errorMiddleware(options.log));
  // Runs after everything below: a request nothing answered (not even allowedMethods' 405) gets a JSON 404.
  app.use(async (ctx, next) => {
    await next();
    if (ctx.status === 404 && ctx.body == null && ctx.respond !== false) {
      throw new NotFound(
        isProtected(ctx.path)
          ? `no such endpoint: ${ctx.method} ${ctx.path}; see /openapi.yaml for the API`
          : `not found: ${ctx.path}`,
      );
    }
  });
  const parseBody = bodyParser({ enableTypes: ['json'], jsonLimit: '1mb', encoding: 'utf-8' });
  const mcpBody = readMcpBody();
  // Only POST carries a body here; /mcp reads its own, so that a bad one is answered in JSON-RPC.
  app.use((ctx, next) => (ctx.method !== 'POST' ? next() : ctx.path === '/mcp' ? mcpBody(ctx, next) : parseBody(ctx, next)));
  app.use(health.routes());
  app.use(docsRouter().routes());
  app.use(iconRouter().routes());
  for (const router of options.publicRoutes ?? []) app.use(router.routes());
  app.use(authenticate);
  if (options.routeLimit) {
    const limit = options.routeLimit;
    app.use(async (ctx, next) => {
      if (!isProtected(ctx.path)) return next();
      try {
        await limit(ctx, next);
      } catch (err) {
        // On /mcp only the limit can throw RateLimited (the MCP handler renders tool errors as results itself), so a
        // refused tools/call becomes an isError tool result the agent can read.
        const answer = ctx.path === '/mcp' && err instanceof RateLimited ? refusedToolCall(ctx.request.body, err) : undefined;
        if (!answer) throw err;
        ctx.status = 200; // a JSON-RPC answer; the limiter had set 429
        ctx.set((err as RateLimited).headers);
        ctx.body = answer;
      }
    });
  }
  app.use(mcp.routes());
  app.use(api.routes());
  app.use(api.allowedMethods({ throw: true }));
  return app;
}
