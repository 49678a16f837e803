/**
 * `GET /` for a browser (issue 19 item 7): a small front door saying what this server is, where its API docs,
 * OpenAPI document and MCP endpoint are, how to sign in, and its version. A request whose `Accept` does not name
 * `text/html` (every API client, `curl` with its `*\/*`) falls through to the JSON 404 as before. The page has no
 * script, its one style block is allowed by hash in a Content-Security-Policy that also forbids framing, and
 * `X-Frame-Options: DENY` says the same to older browsers. The web console will replace it.
 */
import { createHash } from 'node:crypto';
import type Router from '@koa/router';
import { SERVER_INFO } from '../tools/mcp-edge.js';
import { createRouter } from './router.js';

const STYLE =
  'body{font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:3rem auto;padding:0 1rem;color:#1f2328}' +
  'h1{display:flex;align-items:center;gap:.6rem;font-size:1.6rem}img{width:2rem;height:2rem}' +
  'code{background:#f6f8fa;padding:.1rem .3rem;border-radius:4px}dt{font-weight:600;margin-top:.8rem}dd{margin:0}';

/** The CSP of the page: nothing but its own style block and the icon; never framed, no base or form targets. */
export const HOME_CSP =
  `default-src 'none'; style-src 'sha256-${createHash('sha256').update(STYLE).digest('base64')}'; img-src 'self'; ` +
  "frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

/** `&`, `<`, `>`, `"` and `'` as HTML entities. */
function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/** The page for a pds at `baseUrl` (`PDS_BASE_URL`, e.g. `https://pds.example.com`). */
export function homePage(baseUrl: string, version: string = SERVER_INFO.version): string {
  const base = escapeHtml(baseUrl);
  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>pds — Platform Deployment Service</title>
  <link rel="icon" href="/icon.svg">
  <style>${STYLE}</style>
</head>
<body>
  <h1><img src="/icon.svg" alt="">pds — Platform Deployment Service</h1>
  <p>Tenants, services and deployments for teams, driven by agents over MCP, by people with the <code>pds</code>
  command, and by scripts over the REST API.</p>
  <dl>
    <dt>API documentation</dt><dd><a href="/docs">/docs</a></dd>
    <dt>OpenAPI document</dt><dd><a href="/openapi.yaml">/openapi.yaml</a></dd>
    <dt>MCP endpoint (Streamable HTTP; give this URL to your agent)</dt><dd><code>${base}/mcp</code></dd>
    <dt>Sign in</dt><dd><code>pds login --server ${base}</code>, then <code>pds whoami</code></dd>
    <dt>Version</dt><dd>${escapeHtml(version)}</dd>
  </dl>
</body>
</html>
`;
}

/**
 * True when `accept` names `text/html` with a non-zero quality. A wildcard (`*\/*`, `text/*`) does not count: API
 * clients send it and expect the JSON answer.
 */
export function acceptsHtml(accept: string | undefined): boolean {
  return (accept ?? '').split(',').some((range) => {
    const [type, ...params] = range.split(';').map((part) => part.trim().toLowerCase());
    const q = params.find((p) => p.startsWith('q='));
    return type === 'text/html' && (q === undefined || Number(q.slice(2)) > 0);
  });
}

/** A router serving {@link homePage} at `/` to browsers. */
export function homeRouter(baseUrl: string): Router {
  const page = homePage(baseUrl);
  const router = createRouter();
  router.get('/', (ctx) => {
    ctx.vary('Accept');
    if (!acceptsHtml(ctx.get('accept'))) return; // falls through to the JSON 404
    ctx.type = 'text/html; charset=utf-8';
    ctx.set({ 'Content-Security-Policy': HOME_CSP, 'X-Frame-Options': 'DENY', 'X-Content-Type-Options': 'nosniff', 'Referrer-Policy': 'no-referrer' });
    ctx.body = page;
  });
  return router;
}
