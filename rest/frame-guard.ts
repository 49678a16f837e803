/**
 * No page of pds may be shown inside another site's frame (issue 17 item 10): a framed consent page could be
 * click-jacked into "Allow". Every response gets `Content-Security-Policy: frame-ancestors 'none'` (CSP Level 2) and
 * `X-Frame-Options: DENY` (RFC 7034, for browsers without CSP). Set on every response, not only on pages pds renders
 * itself, because oidc-provider writes its own pages (device flow, errors) straight to the response: the headers are
 * on it before any handler runs. A handler that sets a CSP of its own must keep `frame-ancestors 'none'` in it.
 */
import type { Middleware } from 'koa';
import { setHeader } from './headers.js';

/** The CSP directive every response carries. */
export const FRAME_ANCESTORS = "frame-ancestors 'none'";

/** @example app.use(frameGuard()); // before the routers */
export function frameGuard(): Middleware {
  return (ctx, next) => {
    setHeader(ctx, 'Content-Security-Policy', FRAME_ANCESTORS);
    setHeader(ctx, 'X-Frame-Options', 'DENY');
    return next();
  };
}
