/**
 * The MCP endpoint, `POST /mcp` (`docs/api.md#mcp`; MCP spec "Streamable HTTP"), as Koa middleware and routes around
 * `tools/mcp-http.ts`. What this edge decides before the SDK sees a request:
 *
 * - **Origin** (MCP "Security": DNS rebinding): a request whose `Origin` is present and is neither the origin of
 *   `PDS_BASE_URL` nor one of `PDS_ALLOWED_ORIGINS` gets 403. No `Origin` (every non-browser client) passes.
 * - **Body**: read here, not by the REST body parser, so every failure is a JSON-RPC error body — not JSON → 400
 *   `-32700`; too large → 413, unknown `Content-Encoding` → 415, nested deeper than {@link MAX_JSON_DEPTH} → 400
 *   (`-32600`) — and so a `__proto__` key in tool arguments is answered with an `isError` result naming it (the SDK's
 *   parsing would drop it silently).
 * - **Batches**: a JSON array gets 400 `-32600` (JSON-RPC batching left MCP in 2025-06-18), so one POST is at most
 *   one call and the 300/min limit counts calls.
 * - **Toolsets**: `?toolsets=a,b` or `X-PDS-Toolsets: a,b`, within `PDS_TOOLSETS`; a bad selection gets 400 `-32602`.
 * - **Scopes**: a `tools/call` the token's OAuth scopes do not cover gets HTTP 403 with
 *   `WWW-Authenticate: Bearer error="insufficient_scope", scope="…"`, so the client can ask for them (MCP step-up).
 */
import type Router from '@koa/router';
import coBody from 'co-body';
import type { Context, Middleware } from 'koa';
import type { Identity } from '../auth/identity.js';
import { isPlatformError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import type { Config } from '../config.js';
import type { AnyTool } from '../tools/define.js';
import type { CallInteraction } from '../tools/interaction.js';
import type { ToolCaller } from '../tools/mcp.js';
import { insufficientScopeForCall, protoKeyToolCall } from '../tools/mcp-edge.js';
import type { McpHttpHandler } from '../tools/mcp-http.js';
import { protectedResourceMetadataUrl } from '../core/names.js';
import { selectToolsets, toolsIn, type Toolset } from '../tools/toolsets.js';
import { withClientGone } from './client-gone.js';
import { observeToolCall } from './request-log.js';
import { createRouter } from './router.js';

/** How a client of `POST /mcp` selects toolsets, as a refusal names it. */
const HTTP_SELECTION = (sets: string) => `?toolsets=${sets} on the MCP URL (or the header X-PDS-Toolsets: ${sets})`;

/** Largest MCP request body, after decompression (1 MiB, as for REST). */
const BODY_LIMIT = '1mb';

/**
 * Deepest nesting of arrays and objects an MCP request may have. The SDK validates a message by recursion and a
 * `_meta` nested 30,000 deep overflowed its stack (500); no tool's arguments come near this depth.
 */
export const MAX_JSON_DEPTH = 64;

/**
 * Whether `value` nests arrays and objects more than `limit` deep (a scalar is depth 0, `{}` and `[]` depth 1).
 * Walks with an explicit stack, never recursion, and stops at the first container past the limit.
 * @example nestedDeeperThan({ a: [{}] }, 2) // true
 */
export function nestedDeeperThan(value: unknown, limit: number): boolean {
  const pending: Array<[unknown, number]> = [[value, 0]];
  while (pending.length) {
    const [item, depth] = pending.pop()!;
    if (item === null || typeof item !== 'object') continue;
    if (depth + 1 > limit) return true;
    for (const child of Array.isArray(item) ? item : Object.values(item)) {
      if (child !== null && typeof child === 'object') pending.push([child, depth + 1]);
    }
  }
  return false;
}

/** JSON-RPC error codes this edge answers with (JSON-RPC 2.0 §5.1). */
const PARSE_ERROR = -32700;
const INVALID_REQUEST = -32600;
const INVALID_PARAMS = -32602;

/** Why the body of an MCP request could not be read, for the route to answer. */
interface BodyFailure {
  status: number;
  code: number;
  message: string;
}

const BODY_FAILURE = 'mcpBodyFailure';

/** Answer with a JSON-RPC error response (HTTP `status`), echoing the request id when there is one. */
function answerError(ctx: Context, status: number, code: number, message: string): void {
  const body = ctx.request.body as { id?: unknown } | undefined;
  const id = body && typeof body === 'object' && !Array.isArray(body) && (typeof body.id === 'string' || typeof body.id === 'number') ? body.id : null;
  ctx.status = status;
  ctx.state.error = message;
  ctx.body = { jsonrpc: '2.0', id, error: { code, message } };
}

/**
 * Koa middleware that reads the JSON body of an MCP POST into `ctx.request.body` (gzip, deflate and br decoded;
 * `__proto__` kept as an ordinary key). It never throws: a body that cannot be read is noted for the route, which
 * answers it as a JSON-RPC error after authentication.
 */
export function readMcpBody(): Middleware {
  return async (ctx, next) => {
    if (ctx.method !== 'POST') return next();
    try {
      const body: unknown = await coBody.json(ctx, { limit: BODY_LIMIT, strict: false, onProtoPoisoning: 'ignore' } as coBody.Options);
      if (body === '') throw new SyntaxError('the body is empty');
      if (nestedDeeperThan(body, MAX_JSON_DEPTH)) {
        ctx.state[BODY_FAILURE] = {
          status: 400,
          code: INVALID_REQUEST,
          message: `Invalid Request: the message nests objects and arrays more than ${MAX_JSON_DEPTH} deep`,
        } satisfies BodyFailure;
        return next();
      }
      ctx.request.body = body;
    } catch (err) {
      const e = err as { status?: number; message?: string };
      const failure: BodyFailure =
        e.status === 413
          ? { status: 413, code: INVALID_REQUEST, message: `request body too large: at most ${BODY_LIMIT} of JSON` }
          : e.status === 415
            ? { status: 415, code: INVALID_REQUEST, message: `unsupported Content-Encoding "${ctx.get('content-encoding')}": send gzip, deflate, br or none` }
            : { status: 400, code: PARSE_ERROR, message: `Parse error: the body is not JSON (${e.message ?? 'unreadable'})` };
      ctx.state[BODY_FAILURE] = failure;
    }
    return next();
  };
}

/** Whether `origin` (the `Origin` header) may call `/mcp`: absent, the base URL's own, or listed by the operator. */
export function originAllowed(origin: string | undefined, config: Pick<Config, 'baseUrl' | 'allowedOrigins'>): boolean {
  if (origin === undefined) return true;
  const own = new URL(config.baseUrl).origin;
  return origin === own || config.allowedOrigins.includes(origin);
}

/** What the MCP routes need; see `rest/app.ts`. */
export interface McpRouteOptions {
  /** Every tool; each request gets the ones in its toolsets. */
  tools: readonly AnyTool[];
  config: Config;
  /** Runs one tool for the request's caller (invoke() with the app's dependencies). */
  run: (tool: AnyTool, args: unknown, identity: Identity, interaction: CallInteraction) => Promise<unknown>;
  /** Key that seals `requestState` of `input_required` answers (the confirm secret: the same on every replica). */
  stateSecret: Uint8Array;
  log?: Logger;
  /**
   * Middleware every `/mcp` route runs first, and only when one matched (authentication, {@link readMcpBody}, the
   * route limit; `rest/app.ts`). They must set `ctx.state.identity`.
   */
  gates?: Middleware[];
}

/** The MCP SDK's side of pds: the per-request server and the Streamable HTTP handler. */
interface McpServing {
  serve: McpHttpHandler;
  createMcpServer: typeof import('../tools/mcp.js').createMcpServer;
}

/**
 * `POST /mcp` and a 405 for other methods, each behind `gates`. The MCP SDK (`tools/mcp.ts`, `tools/mcp-http.ts`) is
 * imported at the first `POST /mcp` that passes the edge's checks, not at start-up: a pds only CI and people call over
 * REST never loads it (issue 23 item 1, `test/ops/lazy-modules.test.ts`). Concurrent first requests share the import.
 */
export function mcpRouter(options: McpRouteOptions): Router {
  const { tools, config } = options;
  let serving: Promise<McpServing> | undefined;
  const load = (): Promise<McpServing> =>
    (serving ??= Promise.all([import('../tools/mcp-http.js'), import('../tools/mcp.js')]).then(([http, mcp]) => ({
      serve: http.createMcpHttpHandler(options.log),
      createMcpServer: mcp.createMcpServer,
    })));
  const router = createRouter();
  // On each route rather than `router.use`, so a request a gate answers is still named `/mcp` in its line and metrics.
  const gates = options.gates ?? [];
  router.post('/mcp', ...gates, async (ctx) => {
    if (!originAllowed(ctx.get('origin') || undefined, config)) {
      ctx.status = 403;
      ctx.body = { jsonrpc: '2.0', id: null, error: { code: INVALID_REQUEST, message: `Origin ${ctx.get('origin')} is not allowed to call this MCP endpoint (PDS_ALLOWED_ORIGINS)` } };
      return;
    }
    const failure = ctx.state[BODY_FAILURE] as BodyFailure | undefined;
    if (failure) return answerError(ctx, failure.status, failure.code, failure.message);
    if (Array.isArray(ctx.request.body)) {
      return answerError(ctx, 400, INVALID_REQUEST, 'Invalid Request: JSON-RPC batches are not supported (removed from MCP in 2025-06-18); send one message per POST');
    }
    const refused = protoKeyToolCall(ctx.request.body);
    if (refused) {
      ctx.body = refused;
      return;
    }
    let selected: AnyTool[];
    let sets: Toolset[];
    try {
      const requested = typeof ctx.query.toolsets === 'string' ? ctx.query.toolsets : ctx.get('x-pds-toolsets') || undefined;
      sets = selectToolsets(config.toolsets, requested);
      selected = toolsIn(tools, sets);
    } catch (err) {
      if (!isPlatformError(err)) throw err;
      return answerError(ctx, 400, INVALID_PARAMS, err.message);
    }
    const identity = ctx.state.identity as Identity;
    const scopeRefusal = insufficientScopeForCall(selected, ctx.request.body, identity, protectedResourceMetadataUrl(config.baseUrl, '/mcp'));
    if (scopeRefusal) {
      ctx.set(scopeRefusal.headers);
      return answerError(ctx, 403, INVALID_REQUEST, scopeRefusal.message);
    }
    // The SDK aborts a call whose connection closed as well; this makes ending an abandoned wait pds's own promise.
    const call: ToolCaller = (tool, args, interaction) =>
      observeToolCall(ctx, 'mcp', tool.name, () => options.run(tool, args, identity, withClientGone(ctx, interaction)));
    const { serve, createMcpServer } = await load();
    const build = () =>
      createMcpServer(selected, call, {
        readOnly: config.readOnly,
        log: options.log,
        baseUrl: config.baseUrl,
        caller: identity.userId,
        stateSecret: options.stateSecret,
        toolsets: { inventory: tools, selected: sets, allowed: config.toolsets, howToSelect: HTTP_SELECTION },
      });
    ctx.respond = false;
    await serve(ctx.req, ctx.res, ctx.request.body, build);
  });
  router.all('/mcp', ...gates, (ctx) => {
    ctx.status = 405;
    ctx.set('Allow', 'POST');
    ctx.body = { error: 'this MCP endpoint is stateless (no sessions, no SSE stream): send JSON-RPC with POST' };
  });
  return router;
}
