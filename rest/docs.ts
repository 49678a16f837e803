/**
 * `GET /docs`: interactive API documentation (Swagger UI) served from the `swagger-ui-dist` package on this machine
 * — no CDN — reading `/openapi.yaml`.
 */
import { createReadStream } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type Router from '@koa/router';
import { createRouter } from './router.js';

/** The only asset files served, with their content types (a Map: `constructor` is not an asset). */
const ASSETS = new Map<string, string>([
  ['swagger-ui.css', 'text/css; charset=utf-8'],
  ['swagger-ui-bundle.js', 'application/javascript; charset=utf-8'],
  ['swagger-ui-standalone-preset.js', 'application/javascript; charset=utf-8'],
  ['favicon-32x32.png', 'image/png'],
]);

const PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>pds API</title>
  <link rel="stylesheet" href="/docs/assets/swagger-ui.css">
  <link rel="icon" type="image/png" href="/docs/assets/favicon-32x32.png">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="/docs/assets/swagger-ui-bundle.js"></script>
  <script src="/docs/assets/swagger-ui-standalone-preset.js"></script>
  <script src="/docs/init.js"></script>
</body>
</html>
`;

const INIT = `window.ui = SwaggerUIBundle({
  url: '/openapi.yaml',
  dom_id: '#swagger-ui',
  presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
  layout: 'StandaloneLayout',
  persistAuthorization: true,
});
`;

/** Routes for `/docs`, `/docs/init.js` and `/docs/assets/<file>`; `/docs/` redirects (301) to `/docs`. */
export function docsRouter(): Router {
  // Found at the first asset asked for, not at start-up; the assets are streamed from disk, never held in memory.
  let dir: string | undefined;
  const router = createRouter();
  router.get('/docs', (ctx) => {
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = PAGE;
  });
  // The router is strict about a trailing slash (rest/router.ts); people type one.
  router.get('/docs/', (ctx) => {
    ctx.status = 301;
    ctx.redirect('/docs');
  });
  router.get('/docs/init.js', (ctx) => {
    ctx.type = 'application/javascript; charset=utf-8';
    ctx.body = INIT;
  });
  router.get('/docs/assets/:file', (ctx) => {
    const type = ASSETS.get(ctx.params.file!);
    if (!type) return; // falls through to the 404
    ctx.type = type;
    ctx.set('Cache-Control', 'public, max-age=86400');
    dir ??= path.dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
    ctx.body = createReadStream(path.join(dir, ctx.params.file!));
  });
  return router;
}
