/**
 * The generic tool → REST route adapter (DESIGN.md "REST and MCP as thin adapters"). For each tool with a
 * {@link RestBinding}: path parameters, then (GET) query parameters or (POST) the JSON body — or, with `bodyField`,
 * the body as that one field — become the tool input, and invoke() does the rest. Tools that share a path
 * (`pathValues`, e.g. each operation on `/api/v1/operations/{name}/execute`) get one route that picks the tool by the
 * pinned values. No tool logic lives here.
 */
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import type Router from '@koa/router';
import type { Context, Middleware, ParameterizedContext } from 'koa';
import { InvalidParams, NotFound, isPlatformError } from '../core/errors.js';
import type { Door } from '../core/operations/index.js';
import { fillPath, pathParams, type AnyStream, type AnyTool, type StreamEvent } from '../tools/define.js';
import { DOOR_HEADER, type Doors } from '../tools/door.js';
import { NO_INTERACTION, type CallInteraction } from '../tools/interaction.js';
import { outputJson } from '../tools/invoke.js';
import type { Identity } from '../auth/identity.js';
import { jsonObjectBody, queryParameters } from './body.js';
import { clientGone, withClientGone } from './client-gone.js';
import { observeToolCall } from './request-log.js';
import { createRouter } from './router.js';
import { setHeader } from './headers.js';

/** `/api/v1/status/{team}/{app}` → `/api/v1/status/:team/:app`. */
export function koaPath(openApiPath: string): string {
  return fillPath(openApiPath, (name) => `:${name}`);
}

/**
 * Runs a tool for the request's caller; supplied by the app (it closes over invoke() and its deps). `door` words the
 * messages: REST, or MCP when the request sent `X-PDS-Door: mcp` (`pds mcp` forwarding an agent's call).
 */
export type RouteInvoker = (tool: AnyTool, input: Record<string, unknown>, identity: Identity, door: Door, interaction: CallInteraction) => Promise<unknown>;

/**
 * Starts a stream for the request's caller (the app closes over `invokeStream()`); resolves once the stream's checks
 * passed, before its first event.
 */
export type StreamInvoker = (
  stream: AnyStream,
  input: Record<string, unknown>,
  identity: Identity,
  door: Door,
  signal: AbortSignal,
) => Promise<AsyncIterable<StreamEvent>>;

/** Streams served beside the tools, how to start one, and the heartbeat interval. */
export interface StreamRoutes {
  streams: readonly AnyStream[];
  run: StreamInvoker;
  /** Milliseconds between heartbeat comments while no event comes (default {@link HEARTBEAT_MS}). */
  heartbeatMs?: number;
}

/** Heartbeat interval of event streams: well inside the 60 s idle timeout common to proxies and load balancers. */
export const HEARTBEAT_MS = 15_000;

/**
 * The raw tool input of one request, a null-prototype object (so no name reaches `Object.prototype`). Path parameters
 * pinned by `pathValues` are not input.
 * @throws HttpError 415 for a POST body that is not JSON; InvalidParams for a body that is not an object or holds a
 *   `__proto__`/`constructor`/`prototype` key (`rest/body.ts`).
 */
export function requestInput(tool: Pick<AnyTool, 'rest'>, ctx: Context): Record<string, unknown> {
  const binding = tool.rest!;
  let input: Record<string, unknown>;
  if (binding.method === 'GET') {
    input = queryParameters(ctx);
  } else if (binding.bodyField) {
    input = Object.create(null);
    input[binding.bodyField] = jsonObjectBody(ctx);
  } else {
    input = jsonObjectBody(ctx);
  }
  if (binding.method !== 'GET' && binding.query?.length) {
    const query = queryParameters(ctx);
    for (const name of binding.query) {
      if (Object.hasOwn(input, name)) {
        throw new InvalidParams(`${name}: not a body field; pass it in the URL, e.g. ?${name}=30`);
      }
      if (query[name] !== undefined) input[name] = query[name];
    }
  }
  // Path parameters win over anything in the query or body.
  for (const name of paramsOf(binding.path)) {
    if (binding.pathValues && Object.hasOwn(binding.pathValues, name)) delete input[name];
    else input[name] = ctx.params[name];
  }
  return input;
}

/** Path parameter names by OpenAPI path, read once per path rather than per request. */
const paramNames = new Map<string, readonly string[]>();
function paramsOf(path: string): readonly string[] {
  let names = paramNames.get(path);
  if (!names) paramNames.set(path, (names = Object.freeze(pathParams(path))));
  return names;
}

/** The tools bound to each `METHOD path`, in inventory order. */
export function routeTable(tools: readonly AnyTool[]): Map<string, AnyTool[]> {
  const table = new Map<string, AnyTool[]>();
  for (const tool of tools) {
    if (!tool.rest) continue;
    const key = `${tool.rest.method} ${tool.rest.path}`;
    table.set(key, [...(table.get(key) ?? []), tool]);
  }
  return table;
}

/** True when the request's path parameters equal every value the tool pins. */
function pinnedMatch(tool: AnyTool, params: Record<string, string | undefined>): boolean {
  const pinned = tool.rest!.pathValues ?? {};
  return Object.entries(pinned).every(([name, value]) => params[name] === value);
}

/**
 * A router with one route per REST path. `gates` (authentication, body, limit) run before every route it matches, and
 * only then; they must set `ctx.state.identity`.
 * @throws NotFound on a shared path whose pinned values match no tool, listing the values that exist.
 */
export function toolRouter(tools: readonly AnyTool[], run: RouteInvoker, doors: Doors, gates: Middleware[] = [], streams?: StreamRoutes): Router {
  const router = createRouter();
  // The gates sit on each route, not on `router.use`: a use-layer would name the request's route by its own pattern
  // in the request line and the metrics whenever a gate answers (a 401, a 429), instead of by the route.
  for (const stream of streams?.streams ?? []) {
    router.get(koaPath(stream.rest.path), ...gates, async (ctx) => {
      const door = ctx.get(DOOR_HEADER).toLowerCase() === 'mcp' ? doors.mcp : doors.rest;
      const gone = clientGone(ctx);
      const events = await observeToolCall(ctx, 'rest', stream.name, () =>
        streams!.run(stream, requestInput(stream, ctx), ctx.state.identity as Identity, door, gone),
      );
      ctx.status = 200;
      ctx.type = 'text/event-stream';
      ctx.set({ 'Cache-Control': 'no-cache, no-transform', 'X-Accel-Buffering': 'no' });
      ctx.body = Readable.from(sseFrames(events, streams!.heartbeatMs ?? HEARTBEAT_MS, gone));
    });
  }
  for (const [key, bound] of routeTable(tools)) {
    const { method, path } = bound[0]!.rest!;
    const handler = async (ctx: ParameterizedContext) => {
      const tool = bound.length === 1 && !bound[0]!.rest!.pathValues ? bound[0]! : bound.find((t) => pinnedMatch(t, ctx.params));
      if (!tool) throw unmatched(key, bound, ctx.params);
      const door = ctx.get(DOOR_HEADER).toLowerCase() === 'mcp' ? doors.mcp : doors.rest;
      // No progress or questions over REST; the signal ends a wait (wait_seconds) whose caller went away.
      const interaction = withClientGone(ctx, NO_INTERACTION);
      const output = await observeToolCall(ctx, 'rest', tool.name, () => run(tool, requestInput(tool, ctx), ctx.state.identity as Identity, door, interaction));
      const body = outputJson(output);
      ctx.type = 'application/json';
      if (method === 'GET') {
        // Every gate ran (the tool was invoked for this caller); only the bytes are spared when nothing changed.
        const etag = etagOf(output, body);
        setHeader(ctx, 'ETag', etag);
        setHeader(ctx, 'Cache-Control', 'private, no-cache');
        ctx.vary('Authorization');
        if (matchesEtag(ctx.get('If-None-Match'), etag)) {
          ctx.status = 304;
          return;
        }
      }
      ctx.body = bodyBytes(output, body);
    };
    if (method === 'GET') router.get(koaPath(path), ...gates, handler);
    else if (method === 'PUT') router.put(koaPath(path), ...gates, handler);
    else router.post(koaPath(path), ...gates, handler);
  }
  return router;
}

/** ETags of frozen outputs (served again and again, e.g. the operation catalog), computed once. */
const frozenEtags = new WeakMap<object, string>();

/** UTF-8 bytes of frozen outputs' bodies, encoded once. */
const frozenBytes = new WeakMap<object, Buffer>();

/**
 * The body to send: for a frozen output its UTF-8 bytes, encoded once (the operation catalog holds non-ASCII text, so
 * each send of the string paid a UTF-8 encoding, 8 % of pds's CPU in the REST read's profile); otherwise the string.
 */
function bodyBytes(output: unknown, body: string): string | Buffer {
  if (output === null || typeof output !== 'object' || !Object.isFrozen(output)) return body;
  let bytes = frozenBytes.get(output);
  if (!bytes) frozenBytes.set(output, (bytes = Buffer.from(body, 'utf8')));
  return bytes;
}

/**
 * The ETag of a read's answer: a weak validator (RFC 9110 §8.8.3) from the SHA-256 of the JSON body the caller gets.
 * As the body is what this caller may see of the data now, a change of the data or of what the caller may see changes
 * it; two callers who may see the same get the same tag (the response varies on `Authorization`).
 * @example 'W/"sha256-6q1n0Xf3kQ7…"'
 */
export function etagOf(output: unknown, body: string): string {
  const frozen = output !== null && typeof output === 'object' && Object.isFrozen(output);
  const kept = frozen ? frozenEtags.get(output) : undefined;
  if (kept) return kept;
  const etag = `W/"sha256-${createHash('sha256').update(body).digest('base64url').slice(0, 32)}"`;
  if (frozen) frozenEtags.set(output, etag);
  return etag;
}

/**
 * True when `If-None-Match` names `etag` (weak comparison, RFC 9110 §13.1.2: `W/` ignored) or is `*`.
 */
export function matchesEtag(ifNoneMatch: string, etag: string): boolean {
  if (!ifNoneMatch) return false;
  if (ifNoneMatch.trim() === '*') return true;
  const opaque = (tag: string) => tag.trim().replace(/^W\//, '');
  const wanted = opaque(etag);
  return ifNoneMatch.split(',').some((tag) => opaque(tag) === wanted);
}

/**
 * The text/event-stream framing of `events` (WHATWG HTML "Server-sent events"): an opening comment (so headers go out
 * at once), `event:`/`data:` per event, a `: heartbeat` comment after `heartbeatMs` without one, and — when the
 * events fail after the stream started, too late for a status code — an `error` event with `{ "error" }` (the
 * message of a PlatformError, "internal error" for anything else).
 */
async function* sseFrames(events: AsyncIterable<StreamEvent>, heartbeatMs: number, gone: AbortSignal): AsyncGenerator<string> {
  yield ': pds event stream\n\n';
  const iterator = events[Symbol.asyncIterator]();
  let next = iterator.next();
  try {
    for (;;) {
      let timer: NodeJS.Timeout | undefined;
      const beat = new Promise<'beat'>((resolve) => (timer = setTimeout(resolve, heartbeatMs, 'beat')));
      const result = await Promise.race([next, beat]).finally(() => clearTimeout(timer));
      if (result === 'beat') {
        yield ': heartbeat\n\n';
        continue;
      }
      if (result.done) return;
      yield `event: ${result.value.event}\ndata: ${JSON.stringify(result.value.data)}\n\n`;
      next = iterator.next();
    }
  } catch (err) {
    if (gone.aborted) return;
    yield `event: error\ndata: ${JSON.stringify({ error: isPlatformError(err) ? err.message : 'internal error' })}\n\n`;
  } finally {
    // Let the events clean up (unsubscribe) when the caller left mid-stream; not awaited, as a read may be pending.
    void iterator.return?.(undefined)?.catch(() => undefined);
  }
}

function unmatched(route: string, bound: readonly AnyTool[], params: Record<string, string | undefined>): NotFound {
  const names = [...new Set(bound.flatMap((t) => Object.keys(t.rest!.pathValues ?? {})))];
  const wanted = names.map((name) => `${name} "${params[name] ?? ''}"`).join(', ');
  const known = names.map((name) => `${name} is one of ${bound.map((t) => t.rest!.pathValues![name]).join(', ')}`).join('; ');
  // On the execute path: operation not found: name "nope" (POST …); name is one of deploy-service, …
  const noun = bound.every((t) => t.operation) ? 'operation not found' : 'not found';
  return new NotFound(`${noun}: ${wanted} (${route}); ${known}`);
}
