/**
 * The web console at `/` (issue 21): its built pages (`console/`, built by `npm run build` into `dist/console/`),
 * sign-in and sign-out, and `/console/api/*`, where the session cookie stands in for a bearer token.
 *
 * - **Pages**: `GET /` for a browser (`Accept` naming `text/html`; API clients still get the JSON 404) and
 *   `GET /console/{page}` answer the console's one HTML document; `GET /console/assets/{file}` its scripts and styles.
 *   Every page carries a CSP without inline scripts or styles and with `frame-ancestors 'none'`, and
 *   `Referrer-Policy: no-referrer` (a sign-in URL's code must not leak into a Referer).
 * - **Sign-in**: `GET /console/sign-in/oauth` starts the OAuth flow with pds's own authorization server,
 *   `GET /console/callback` finishes it; `POST /console/api/session/code` exchanges a sandbox's one-time code
 *   (`pds console --user alice`, once, within 10 minutes). `GET /console/api/session` says who is signed in and gives
 *   the CSRF token; `POST /console/api/session/sign-out` revokes and forgets the session.
 * - **The API through the session**: `/console/api/{path}` is `/api/v1/{path}` with the session's bearer token added
 *   here, on the server; a state-changing request must carry the session's CSRF token in `X-CSRF-Token` and, when the
 *   browser says where it comes from, this origin. The cookie is scoped to `/console/api` and read nowhere else:
 *   `/api/v1/*` and `/mcp` never see a session, only bearer tokens, so they stay immune to CSRF.
 */
import { existsSync } from 'node:fs';
import { readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Context } from 'koa';
import type Router from '@koa/router';
import coBody from 'co-body';
import { Forbidden, InvalidParams, NotFound, Unauthenticated } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import type { OAuthStore, OnceStore } from '../core/ports.js';
import { CONSOLE_CODE_TTL, verifyConsoleCode } from '../auth/console-code.js';
import { DOOR_HEADER } from '../tools/door.js';
import { ConsoleSessions, sameText, type ConsoleSession } from './console-session.js';
import { acceptsHtml } from './home.js';
import { createRouter } from './router.js';

/** The CSP of the console's pages: its own scripts, styles and images only; never framed. */
export const CONSOLE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "manifest-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

/** The header a page sends its CSRF token in. */
export const CSRF_HEADER = 'x-csrf-token';

const SAFE_METHODS = new Set(['GET', 'HEAD']);

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.json': 'application/json',
  '.woff2': 'font/woff2',
};

/** What the console's routes need. */
export interface ConsoleOptions {
  baseUrl: string;
  /** The backend: one-time sign-in codes are accepted on the sandbox only. */
  backend: 'sandbox' | 'kubernetes';
  secret: Uint8Array;
  /** Where sessions and OAuth sign-ins in flight are kept (shared by replicas). */
  store: OAuthStore;
  /** The claim store: a one-time code is accepted once. */
  once: OnceStore;
  /** The server's own listener, e.g. `http://127.0.0.1:8080` (known once it listens). */
  localUrl: () => string;
  /** The built console (default: {@link defaultConsoleDir}). */
  dir?: string;
  log: Logger;
}

/**
 * Where `npm run build` puts the console: `dist/console/` of the checkout or image, found from this module whether it
 * runs compiled (`dist/rest/console.js`) or from source (`rest/console.ts`, tests and `npm run dev`).
 */
export function defaultConsoleDir(): string {
  const parent = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
  return path.basename(parent) === 'dist' ? path.join(parent, 'console') : path.join(parent, 'dist', 'console');
}

interface Asset {
  body: Buffer;
  type: string;
}

/**
 * The built files, read once at the first request: `index.html` and `assets/` (a few small files with hashed names, so
 * they never change under us). Nothing else under the directory is read or served.
 */
function builtFiles(dir: string): () => Promise<Map<string, Asset> | undefined> {
  let files: Promise<Map<string, Asset> | undefined> | undefined;
  return () =>
    (files ??= (async () => {
      if (!existsSync(path.join(dir, 'index.html'))) return undefined;
      const out = new Map<string, Asset>([['index.html', { body: await readFile(path.join(dir, 'index.html')), type: CONTENT_TYPES['.html']! }]]);
      const assets = path.join(dir, 'assets');
      for (const entry of existsSync(assets) ? await readdir(assets, { withFileTypes: true }) : []) {
        const type = CONTENT_TYPES[path.extname(entry.name)];
        if (entry.isFile() && type) out.set(`assets/${entry.name}`, { body: await readFile(path.join(assets, entry.name)), type });
      }
      return out;
    })());
}

/** The console's routes; mount before the API's router (its `/console/api/*` route hands the request on to it). */
export function consoleRouter(options: ConsoleOptions): Router {
  const dir = options.dir ?? defaultConsoleDir();
  const files = builtFiles(dir);
  const sessions = new ConsoleSessions(options);
  const origin = new URL(options.baseUrl).origin;
  const router = createRouter();

  const page = async (ctx: Context): Promise<boolean> => {
    const index = (await files())?.get('index.html');
    if (!index) return false;
    ctx.set({
      'Content-Security-Policy': CONSOLE_CSP,
      'X-Content-Type-Options': 'nosniff',
      'Referrer-Policy': 'no-referrer',
      'Cache-Control': 'no-store',
    });
    ctx.type = index.type;
    ctx.body = index.body;
    return true;
  };
  const notBuilt = () => new NotFound('the web console is not built: run "npm run build" (it builds console/ into dist/console/)');

  router.get('/', async (ctx, next) => {
    ctx.vary('Accept');
    if (!acceptsHtml(ctx.get('accept')) || !(await page(ctx))) return next(); // the front page, else the JSON 404
  });
  const pages = async (ctx: Context) => {
    if (!(await page(ctx))) throw notBuilt();
  };
  router.get('/console', pages);
  router.get('/console/assets/:file', async (ctx) => {
    const asset = (await files())?.get(`assets/${ctx.params.file}`);
    if (!asset) throw new NotFound(`no such console file: ${ctx.path}`);
    ctx.set({ 'Cache-Control': 'public, max-age=31536000, immutable', 'X-Content-Type-Options': 'nosniff' });
    ctx.type = asset.type;
    ctx.body = asset.body;
  });

  /** A state-changing request must come from this origin (when the browser says) and carry the session's CSRF token. */
  const requireSameOrigin = (ctx: Context) => {
    const from = ctx.get('origin');
    const site = ctx.get('sec-fetch-site');
    if ((from && from !== origin) || (site && site !== 'same-origin')) {
      throw new Forbidden(`cross-site request refused: the console's API takes state-changing requests from ${origin} only`);
    }
  };
  const requireCsrf = (ctx: Context, session: ConsoleSession) => {
    requireSameOrigin(ctx);
    const sent = ctx.get(CSRF_HEADER);
    if (!sent || !sameText(sent, session.csrf)) {
      throw new Forbidden(`missing or wrong ${CSRF_HEADER} header: send the csrfToken of GET /console/api/session with every state-changing request`);
    }
  };
  const signedIn = async (ctx: Context): Promise<ConsoleSession> => {
    const session = await sessions.find(ctx);
    if (!session) throw new Unauthenticated('not signed in to the console: sign in at /console/sign-in', { challenge: 'Cookie realm="pds console"' });
    return session;
  };
  const noStore = (ctx: Context) => ctx.set('Cache-Control', 'no-store');

  router.get('/console/api/session', async (ctx) => {
    const session = await signedIn(ctx);
    noStore(ctx);
    ctx.body = { userId: session.userId, via: session.via, csrfToken: session.csrf };
  });

  router.post('/console/api/session/code', async (ctx) => {
    noStore(ctx);
    requireSameOrigin(ctx);
    if (options.backend !== 'sandbox') {
      throw new Forbidden('one-time sign-in codes are accepted on the sandbox backend only: sign in with your identity provider');
    }
    const body = (await coBody.json(ctx, { limit: '4kb' }).catch(() => undefined)) as { code?: unknown } | undefined;
    if (typeof body?.code !== 'string' || !body.code) throw new InvalidParams('body: expected {"code": "<the code of the sign-in URL>"}');
    const code = await verifyConsoleCode(options.secret, options.baseUrl, body.code);
    if (!(await options.once.claim(`console-code:${code.jti}`, CONSOLE_CODE_TTL))) {
      throw new Unauthenticated('this sign-in code was used already: ask for a new one with "npx pds console --user <you>"');
    }
    const session = await sessions.create(ctx, code.sub, 'code');
    ctx.body = { userId: session.userId, via: session.via, csrfToken: session.csrf };
  });

  router.post('/console/api/session/sign-out', async (ctx) => {
    noStore(ctx);
    const session = await signedIn(ctx);
    requireCsrf(ctx, session);
    await sessions.end(ctx, session);
    ctx.body = { signedOut: true };
  });

  router.get('/console/sign-in/oauth', async (ctx) => {
    noStore(ctx);
    const to = typeof ctx.query.return_to === 'string' && /^\/(?!\/)[\w\-./]*$/.test(ctx.query.return_to) ? ctx.query.return_to : '/';
    ctx.redirect(await sessions.beginSignIn(ctx, to));
  });

  router.get('/console/callback', async (ctx) => {
    noStore(ctx);
    ctx.set('Referrer-Policy', 'no-referrer');
    try {
      ctx.redirect(await sessions.finishSignIn(ctx));
    } catch (err) {
      // A browser goes back to the sign-in page, which shows why (in the fragment: never sent to a server or logged).
      if (!(err instanceof InvalidParams) || !acceptsHtml(ctx.get('accept'))) throw err;
      ctx.redirect(`/console/sign-in#error=${encodeURIComponent(err.message)}`);
    }
  });

  // Every other /console/api path is the API's, with the session's token added here. The raw path is used (the
  // parameter would be percent-decoded), and any dot segment or encoded slash or dot is refused before anything else.
  router.all('/console/api/*path', async (ctx, next) => {
    const rest = ctx.path.slice('/console/api/'.length);
    if (rest.split('/').some((segment) => segment === '' || segment === '.' || segment === '..') || /%2[ef]/i.test(rest)) {
      throw new NotFound(`no such endpoint: ${ctx.method} ${ctx.path}`);
    }
    const session = await signedIn(ctx);
    if (!SAFE_METHODS.has(ctx.method)) requireCsrf(ctx, session);
    const token = await sessions.token(session);
    noStore(ctx);
    ctx.state.consoleApi = true;
    ctx.path = `/api/v1/${rest}`;
    const headers = ctx.req.headers;
    headers.authorization = `Bearer ${token}`;
    delete headers.cookie;
    delete headers[DOOR_HEADER];
    return next();
  });

  // The console's own client-side pages (after the routes above, which take precedence by being more specific).
  router.get('/console/*page', async (ctx, next) => {
    // Handed on by the /console/api route above (its path now the API's), or the assets' own 404.
    if (ctx.state.consoleApi || ctx.path.startsWith('/console/api/') || ctx.path.startsWith('/console/assets/')) return next();
    await pages(ctx);
  });
  return router;
}
