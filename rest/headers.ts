/**
 * Response headers on the request path (issue 23 item 2). Koa 3's `ctx.set(name, value)` builds four arrays per call
 * to normalise one header; pds sets eight on every authenticated read (request id, frame guard, the limit's three,
 * ETag, Cache-Control), and those calls were 11 % of the bytes a REST read allocated (BENCHMARKS.md).
 */
import type { Context } from 'koa';

/**
 * What `ctx.set(name, value)` does for one string value: set it unless the headers have been sent.
 * @example setHeader(ctx, 'X-Frame-Options', 'DENY');
 */
export function setHeader(ctx: Pick<Context, 'res' | 'headerSent'>, name: string, value: string): void {
  if (!ctx.headerSent) ctx.res.setHeader(name, value);
}
