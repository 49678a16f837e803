/**
 * The HTTP edge of the error tree (STYLE.md "One error tree, two edges"): a `PlatformError` becomes its status and
 * `{ "error": message }` with its headers; Koa/http-errors with `expose` (bad JSON, 405) keep their status and
 * message; anything else is logged and answered 500 `{ "error": "internal error" }`.
 */
import type { Middleware } from 'koa';
import { isPlatformError } from '../core/errors.js';
import { silentLogger, type Logger } from '../core/logger.js';

interface HttpishError {
  status?: number;
  statusCode?: number;
  expose?: boolean;
  message?: string;
  type?: string;
}

/** Koa middleware that renders every error as `{ "error": "…" }`. Mount it first. */
export function errorMiddleware(log: Logger = silentLogger): Middleware {
  return async (ctx, next) => {
    try {
      await next();
    } catch (err) {
      if (isPlatformError(err)) {
        ctx.status = err.status;
        ctx.set(err.headers);
        ctx.body = { error: err.message };
        return;
      }
      const e = err as HttpishError;
      const status = e.status ?? e.statusCode;
      if (status && status >= 400 && status < 500 && e.expose !== false) {
        ctx.status = status;
        ctx.body = { error: e.type === 'entity.parse.failed' ? `invalid JSON body: ${e.message}` : (e.message ?? 'bad request') };
        return;
      }
      log.error({ err, method: ctx.method, path: ctx.path }, 'unexpected error answering a request');
      ctx.status = 500;
      ctx.body = { error: 'internal error' };
    }
  };
}
