/**
 * `GET /icon.svg`: the pds icon that MCP clients show beside the server (`serverInfo.icons`, MCP spec 2025-11-25
 * "Icons"). Public, cacheable for a day, and an SVG without scripts or external references, as the spec asks of icons.
 */
import type Router from '@koa/router';
import { FRAME_ANCESTORS } from './frame-guard.js';
import { createRouter } from './router.js';
import { ICON_PATH } from '../tools/mcp-edge.js';

/** A rounded square with an upward arrow: "ship it". 48×48 user units, scales to any size. */
export const ICON_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 48 48">' +
  '<rect width="48" height="48" rx="10" fill="#1f6feb"/>' +
  '<path d="M24 10 36 24h-8v14h-8V24h-8z" fill="#fff"/>' +
  '</svg>';

/** A router serving {@link ICON_SVG} at {@link ICON_PATH}. */
export function iconRouter(): Router {
  const router = createRouter();
  router.get(ICON_PATH, (ctx) => {
    ctx.type = 'image/svg+xml';
    ctx.set('Cache-Control', 'public, max-age=86400');
    ctx.set('Content-Security-Policy', `default-src 'none'; style-src 'unsafe-inline'; ${FRAME_ANCESTORS}`);
    ctx.body = ICON_SVG;
  });
  return router;
}
