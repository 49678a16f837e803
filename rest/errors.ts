/**
 * The HTTP edge of the error tree (STYLE.md "One error tree, two edges"): a `PlatformError` becomes its status and
 * `{ "error": message }` with its headers and its code in `PDS-Error-Code` (`ERROR_CODE_HEADER`, which
 * `errorFromResponse` in `core/errors.ts` reads back); Koa/http-errors 4xx with `expose` (unreadable bodies from
 * `rest/body.ts`, `ctx.throw`) keep their status, message and headers, with the code `INVALID_PARAMS` (the request
 * itself was at fault); anything else is logged and answered 500 `{ "error": "internal error" }` without a code.
 */
import type { Middleware } from 'koa';
import { ERROR_CODE_HEADER, NotFound, isPlatformError } from '../core/errors.js';
import { silentLogger, type Logger } from '../core/logger.js';

interface HttpishError {
  status?: number;
  statusCode?: number;
  expose?: boolean;
  message?: string;
  headers?: Record<string, string>;
}

/**
 * Koa middleware that renders every error as `{ "error": "…" }`. Mount it right after `requestLog()` (`rest/request-log.ts`):
 * the error is left in `ctx.state.error` for the request's line, which carries it with the request id (the whole
 * error, stack and `cause`, for a 5xx). Without a request logger, unexpected errors are logged here.
 */
export function errorMiddleware(log: Logger = silentLogger): Middleware {
  return async (ctx, next) => {
    try {
      await next();
    } catch (err) {
      ctx.state.error = err;
      if (isPlatformError(err)) {
        ctx.status = err.status;
        ctx.set(err.headers);
        ctx.set(ERROR_CODE_HEADER, err.code);
        ctx.body = { error: err.message };
        return;
      }
      const e = err as HttpishError;
      const status = e.status ?? e.statusCode;
      if (status && status >= 400 && status < 500 && e.expose !== false) {
        ctx.status = status;
        if (e.headers) ctx.set(e.headers);
        ctx.set(ERROR_CODE_HEADER, 'INVALID_PARAMS');
        ctx.body = { error: e.message || 'bad request' };
        return;
      }
      if (ctx.state.requestId === undefined) log.error({ err, method: ctx.method, path: ctx.path }, 'unexpected error answering a request');
      ctx.status = 500;
      ctx.body = { error: 'internal error' };
    }
  };
}

/**
 * Koa middleware, mounted right after {@link errorMiddleware}: gives a JSON body to the answers the routers leave
 * bodiless — 404 `no such endpoint: GET /x; see /openapi.yaml for the API` when nothing matched, and for @koa/router's
 * 405 `method DELETE is not allowed on /api/v1/tenants; allowed: HEAD, GET` (its `Allow` header stays).
 */
export function statusWithoutBody(): Middleware {
  return async (ctx, next) => {
    await next();
    if (ctx.body != null || ctx.respond === false) return;
    if (ctx.status === 404) throw new NotFound(`no such endpoint: ${ctx.method} ${ctx.path}; see /openapi.yaml for the API`);
    if (ctx.status === 405) {
      ctx.body = { error: `method ${ctx.method} is not allowed on ${ctx.path}; allowed: ${ctx.response.get('Allow')}` };
    }
  };
}
