/**
 * One log line and one metrics observation per HTTP request (issue 13 §1–2), and the request id.
 *
 * The request id is the caller's `X-Request-Id` when it is a plain token (at most 128 of `A–Z a–z 0–9 . _ : -`; a
 * proxy's id keeps one id across hops), else a fresh UUID; it is answered in `X-Request-Id` on every response,
 * errors included, and is `reqId` on the request's line and on every line pds writes about that request's errors.
 *
 * The line is written when the response has been sent (or the connection dropped), so it holds the real status even
 * for `/mcp`, whose answer the MCP SDK writes itself:
 *
 * ```json
 * {"level":30,"msg":"GET /api/v1/status/:team/:app 200","reqId":"…","method":"GET","route":"/api/v1/status/:team/:app",
 *  "status":200,"ms":1.8,"user":"octocat","tool":"platform_get_status","outcome":"ok","limit":"allowed"}
 * ```
 *
 * Fields: `route` is the matched route template (never the raw URL: query strings carry OAuth codes and states);
 * `user` the authenticated caller; `tool`/`outcome` the tool called over REST or MCP (`outcome` is `ok` or the error
 * code, e.g. `RATE_LIMITED`); `mcp` the JSON-RPC method of an `/mcp` request (method and tool
 * names through {@link loggableName}: capped, control characters replaced); `limit` the per-user route limit's
 * decision (`allowed`, `refused`, `exempt` for loopback; absent where no limit applies); `workflow` the workflow an
 * operation tool submitted; `code` and `error` of an error answer (the code and message; for a confirmation request
 * the plan, never the confirm value); `err` (with stack and `cause`) for 5xx. Level:
 * `error` for 500, `warn` for other 5xx (an upstream failed), `info` otherwise.
 */
import { randomUUID } from 'node:crypto';
import type { Context, Middleware } from 'koa';
import { ConfirmationRequired, isPlatformError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import type { Identity } from '../auth/identity.js';
import type { Metrics } from './metrics.js';
import { setHeader } from './headers.js';

/** The response header (and accepted request header) carrying the request id. */
export const REQUEST_ID_HEADER = 'X-Request-Id';

const ACCEPTABLE_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** What the request's handlers tell the request line, kept in `ctx.state`. */
export interface RequestNotes {
  requestId: string;
  identity?: Identity;
  /** The tool the request called. */
  tool?: string;
  /** `ok` or the error code of the tool call. */
  outcome?: string;
  /** The route limit's decision. */
  limit?: 'allowed' | 'refused' | 'exempt';
  /** The workflow an operation tool submitted. */
  workflow?: string;
  /** The error answered (an Error, or a JSON-RPC error message). */
  error?: unknown;
}

/** The request id of `ctx` (set by {@link requestLog}), for log lines written elsewhere about the request. */
export function requestIdOf(ctx: Pick<Context, 'state'>): string | undefined {
  return (ctx.state as Partial<RequestNotes>).requestId;
}

/**
 * Koa middleware: assigns the request id, answers it in `X-Request-Id`, and writes the request's line and metrics
 * once the response is done. Mount it first, before the error middleware.
 */
export function requestLog(options: { log: Logger; metrics?: Metrics }): Middleware {
  const { log, metrics } = options;
  // A request line holds only the fields finish() sets (never a header, body or parameter), so it skips the redaction
  // pass: pino's path redaction (wildcards over every key) was a tenth of pds's CPU on a cached REST read
  // (BENCHMARKS.md). A line that carries an error object (5xx) goes through the redacting logger.
  const plain = log.child({}, { redact: [] });
  return async function requestLogger(ctx, next) {
    const started = performance.now();
    const offered = ctx.get(REQUEST_ID_HEADER);
    const requestId = offered && ACCEPTABLE_ID.test(offered) ? offered : randomUUID();
    ctx.state.requestId = requestId;
    setHeader(ctx, REQUEST_ID_HEADER, requestId);
    // 'close' follows 'finish' for an answered request and also comes for a dropped connection: one listener serves both.
    ctx.res.once('close', () => finish(ctx, log, plain, metrics, (performance.now() - started) / 1000));
    await next();
  };
}

/** Longest method or tool name a request line keeps, characters; real ones are under 40. */
export const LOGGED_NAME_MAX = 64;

/**
 * A name the caller sent (the JSON-RPC method, a tool name), fit for one log line: control and format characters
 * (C0, C1, DEL, line and paragraph separators, bidi overrides) become `?`, and past {@link LOGGED_NAME_MAX}
 * characters it is cut and says how long it was — one request once wrote 900 KB of method into the log.
 * @example loggableName('tools/call') // 'tools/call'
 * @example loggableName('a\nb') // 'a?b'
 */
export function loggableName(name: string): string {
  const head = name.length > LOGGED_NAME_MAX ? name.slice(0, LOGGED_NAME_MAX) : name;
  const clean = head.replace(/[\p{Cc}\p{Cf}\u2028\u2029]/gu, '?');
  return name.length > LOGGED_NAME_MAX ? `${clean}…(${name.length} characters)` : clean;
}

function finish(ctx: Context, log: Logger, plain: Logger, metrics: Metrics | undefined, seconds: number): void {
  const notes = ctx.state as RequestNotes;
  const status = ctx.res.headersSent ? ctx.res.statusCode : 499; // 499: the client went away before an answer
  const route = (ctx as Context & { _matchedRoute?: string })._matchedRoute ?? 'unmatched';
  metrics?.httpRequest(ctx.method, route, status, seconds);
  if (!log.isLevelEnabled('info') && status < 500) return;
  const line: Record<string, unknown> = {
    reqId: notes.requestId,
    method: ctx.method,
    route: route === 'unmatched' ? ctx.path : route,
    status,
    ms: Math.round(seconds * 10_000) / 10,
  };
  if (notes.identity) line.user = notes.identity.userId;
  if (notes.tool) line.tool = loggableName(notes.tool);
  if (notes.outcome) line.outcome = notes.outcome;
  if (route === '/mcp') {
    const body = ctx.request.body as { method?: unknown } | undefined;
    if (body && typeof body.method === 'string') line.mcp = loggableName(body.method);
  }
  if (notes.limit) line.limit = notes.limit;
  if (notes.workflow) line.workflow = notes.workflow;
  const error = notes.error;
  if (error !== undefined) {
    if (isPlatformError(error)) line.code = error.code;
    if (status >= 500 || (error instanceof Error && !isPlatformError(error))) line.err = error;
    // A confirmation request's message holds the confirm value: the line keeps what it asks to confirm.
    else if (error instanceof ConfirmationRequired) line.error = `confirmation required: ${error.plan}`;
    else line.error = error instanceof Error ? error.message : String(error);
  }
  const level = status === 500 ? 'error' : status >= 500 ? 'warn' : 'info';
  (line.err === undefined ? plain : log)[level](line, `${ctx.method} ${line.route as string} ${status}`);
}

/**
 * Run one tool call of the request and note it for the request line and the metrics: `tool`, `outcome` (`ok` or the
 * error's code; `INTERNAL` for anything not a PlatformError), the workflow an operation submitted, and the error.
 * @param door the transport the call came by (`rest` or `mcp`), a metrics label.
 * @returns what `call` returns; rethrows what it throws.
 */
export async function observeToolCall<T>(ctx: Context, door: 'rest' | 'mcp', tool: string, call: () => Promise<T>): Promise<T> {
  const notes = ctx.state as RequestNotes;
  notes.tool = tool;
  const started = performance.now();
  const metrics = (ctx as Context & { metrics?: Metrics }).metrics;
  try {
    const output = await call();
    notes.outcome = 'ok';
    const workflow = (output as { workflowName?: unknown } | null)?.workflowName;
    if (typeof workflow === 'string') notes.workflow = workflow;
    metrics?.toolCall(tool, door, 'ok', (performance.now() - started) / 1000);
    return output;
  } catch (err) {
    const outcome = isPlatformError(err) ? err.code : 'INTERNAL';
    notes.outcome = outcome;
    notes.error = err;
    metrics?.toolCall(tool, door, outcome, (performance.now() - started) / 1000);
    throw err;
  }
}
