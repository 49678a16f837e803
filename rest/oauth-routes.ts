/**
 * The HTTP side of pds's OAuth authorization server (issue 12; `auth/oauth/provider.ts` is the server itself):
 *
 * - **Protocol endpoints** — RFC 8414 metadata (`/.well-known/oauth-authorization-server`, and the OpenID form),
 *   `/oauth/authorize` (GET), `/oauth/token`, `/oauth/register` (RFC 7591), `/oauth/revoke`, `/oauth/jwks`, the device flow
 *   (`/oauth/device/auth`, `/oauth/device`) — each an exact route of pds's strict router that hands the request to
 *   oidc-provider, so no other spelling reaches it.
 * - **Sign-in and consent** — `/oauth/interaction/{uid}`: sends the person to the upstream (or offers the choice),
 *   then shows the consent page naming the client and the scopes; `/oauth/callback/{dex|github}` takes the upstream's
 *   answer to `/oauth/interaction/{uid}/callback/{upstream}`, which completes the upstream leg only in the browser that
 *   holds that interaction's cookie (issue 17: a sign-in link sent to someone else completes nothing).
 *
 * None of these routes takes a bearer token; they are listed as public in `test/rest/path-spelling.test.ts`.
 */
import type Router from '@koa/router';
import type { Context, Middleware } from 'koa';
import coBody from 'co-body';
import { isPlatformError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import { OAUTH_ROUTES, ACCOUNT_KIND, accountKey, REFRESH_TOKEN_TTL, INTERACTION_TTL, interactionPath, type AuthorizationServer } from '../auth/oauth/provider.js';
import type { SignInProvider, SignInAttempt } from '../auth/oauth/upstream.js';
import { SCOPE_DESCRIPTIONS, isScope } from '../auth/scopes.js';
import { consentPage, messagePage, signInPage } from './oauth-pages.js';
import { createRouter } from './router.js';

/** Record kind of an upstream sign-in in flight, keyed by its `state`. */
const UPSTREAM_ATTEMPT_KIND = 'UpstreamAttempt';

/** What the routes need. */
export interface OAuthRouteOptions {
  server: AuthorizationServer;
  /** The configured upstream sign-ins, in the order the sign-in page offers them. */
  upstreams: readonly SignInProvider[];
  baseUrl: string;
  log: Logger;
  /** Runs before each route (the per-address OAuth limit, `createOAuthLimit` in `rest/auth-limit.ts`). */
  gate?: Middleware;
}

/** A strict router whose routes run `gate` first; @koa/router runs `use` middleware only for a request a route matches. */
function gatedRouter(gate: Middleware | undefined): Router {
  const router = createRouter();
  if (gate) router.use(gate);
  return router;
}

/** Hand the request to oidc-provider as it came (it reads its own bodies and writes its own answer). */
function delegate(server: AuthorizationServer) {
  const handle = server.provider.callback();
  return async (ctx: Context) => {
    ctx.respond = false;
    await handle(ctx.req, ctx.res);
  };
}

/**
 * The protocol endpoints, one exact route each, each behind `gate` when given.
 * @example app.use(oauthProtocolRouter(server, createOAuthLimit({ redis, trustProxy })).routes());
 */
export function oauthProtocolRouter(server: AuthorizationServer, gate?: Middleware): Router {
  const router = gatedRouter(gate);
  const toProvider = delegate(server);
  router.get('/.well-known/oauth-authorization-server', toProvider);
  router.get('/.well-known/openid-configuration', toProvider);
  router.get(OAUTH_ROUTES.authorization, toProvider);
  router.get(`${OAUTH_ROUTES.authorization}/:uid`, toProvider);
  router.post(OAUTH_ROUTES.token, toProvider);
  router.post(OAUTH_ROUTES.registration, toProvider);
  router.post(OAUTH_ROUTES.revocation, toProvider);
  router.get(OAUTH_ROUTES.jwks, toProvider);
  router.post(OAUTH_ROUTES.device_authorization, toProvider);
  router.get(OAUTH_ROUTES.code_verification, toProvider);
  router.post(OAUTH_ROUTES.code_verification, toProvider);
  router.get(`${OAUTH_ROUTES.code_verification}/:uid`, toProvider);
  // CORS preflights of browser-based clients, where oidc-provider answers them (not registration: it takes no
  // cross-origin calls). It answers only a real preflight; anything else gets the methods here, not its bodiless 404.
  for (const path of ['/.well-known/oauth-authorization-server', OAUTH_ROUTES.token, OAUTH_ROUTES.revocation, OAUTH_ROUTES.device_authorization]) {
    router.options(path, async (ctx) => {
      if (ctx.get('origin') && ctx.get('access-control-request-method')) return toProvider(ctx);
      ctx.status = 204;
      ctx.set('Allow', path.startsWith('/.well-known') ? 'GET, HEAD, OPTIONS' : 'POST, OPTIONS');
    });
  }
  return router;
}

/**
 * Sign-in, consent and the upstream callbacks.
 * @example app.use(oauthInteractionRouter({ server, upstreams, baseUrl, log }).routes());
 */
export function oauthInteractionRouter(options: OAuthRouteOptions): Router {
  const { server, upstreams, baseUrl, log } = options;
  const { provider, store } = server;
  const router = gatedRouter(options.gate);
  const html = (ctx: Context, status: number, body: string) => {
    ctx.status = status;
    ctx.set('Cache-Control', 'no-store');
    ctx.type = 'html';
    ctx.body = body;
  };
  /** A refusal: the page for a browser, `{ "error": "…" }` for anything that does not ask for HTML first. */
  const refuse = (ctx: Context, status: number, page: string, message: string) => {
    if (ctx.accepts('json', 'html') === 'html') return html(ctx, status, page);
    ctx.status = status;
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { error: message };
  };
  const details = async (ctx: Context) => {
    try {
      return await provider.interactionDetails(ctx.req, ctx.res);
    } catch {
      return undefined;
    }
  };
  const expired = (ctx: Context) => {
    const why = 'This sign-in is no longer open (it lasts 10 minutes, and only in the browser that started it).';
    refuse(ctx, 400, messagePage('Sign-in expired', [why, 'Start again from your client.']), `sign-in expired or unknown: ${why} Start again from your client.`);
  };
  const clientName = async (clientId: string) => (await provider.Client.find(clientId))?.clientName ?? clientId;

  router.get('/oauth/interaction/:uid', async (ctx) => {
    const interaction = await details(ctx);
    if (!interaction || interaction.uid !== ctx.params.uid) return expired(ctx);
    const clientId = String(interaction.params.client_id);
    const abort = `${interactionPath(interaction.uid)}/abort`;
    if (interaction.prompt.name === 'login') {
      if (upstreams.length === 1) return ctx.redirect(`${interactionPath(interaction.uid)}/sign-in/${upstreams[0]!.name}`);
      const links = upstreams.map((u) => ({ title: u.title, href: `${interactionPath(interaction.uid)}/sign-in/${u.name}` }));
      const page = signInPage({ client: await clientName(clientId), upstreams: links, abort });
      if (upstreams.length) return html(ctx, 200, page);
      return refuse(ctx, 503, page, 'no sign-in method is configured on this pds (PDS_OIDC_CLIENT_SECRET with PDS_AUTH_URL, or PDS_GITHUB_OAUTH_CLIENT_ID and _SECRET)');
    }
    const requested = String(interaction.params.scope ?? '').split(' ').filter(isScope);
    return html(
      ctx,
      200,
      consentPage({
        client: await clientName(clientId),
        clientId,
        user: String(interaction.session?.accountId ?? ''),
        redirect: String(interaction.params.redirect_uri ?? ''),
        scopes: requested.map((name) => ({ name, description: SCOPE_DESCRIPTIONS[name] })),
        approve: `${interactionPath(interaction.uid)}/consent`,
        abort,
      }),
    );
  });

  router.get('/oauth/interaction/:uid/sign-in/:upstream', async (ctx) => {
    const interaction = await details(ctx);
    const upstream = upstreams.find((u) => u.name === ctx.params.upstream);
    if (!interaction || interaction.uid !== ctx.params.uid || interaction.prompt.name !== 'login') return expired(ctx);
    if (!upstream) {
      const choices = `sign in with one of: ${upstreams.map((u) => u.name).join(', ') || 'none is configured'}`;
      return refuse(ctx, 404, messagePage('No such sign-in', [choices]), `no such sign-in "${ctx.params.upstream}": ${choices}`);
    }
    try {
      const { url, attempt } = await upstream.start(callbackUrl(baseUrl, upstream));
      await store.upsert(UPSTREAM_ATTEMPT_KIND, attempt.state, { ...attempt, uid: interaction.uid, upstream: upstream.name }, INTERACTION_TTL);
      ctx.redirect(url.href);
    } catch (err) {
      if (!isPlatformError(err)) throw err;
      log.warn({ err, upstream: upstream.name }, 'upstream sign-in could not start');
      refuse(ctx, err.status, messagePage('Sign-in is not available', [err.message]), err.message);
    }
  });

  // The upstream sends the browser back to one fixed redirect URI, where the interaction's cookie (scoped by
  // oidc-provider to the interaction's own path) is not sent. So this leg only finds which interaction the `state`
  // names and sends the browser on to that interaction's path; nothing is read, consumed or completed here.
  router.get('/oauth/callback/:upstream', async (ctx) => {
    const upstream = upstreams.find((u) => u.name === ctx.params.upstream);
    const state = typeof ctx.query.state === 'string' ? ctx.query.state : '';
    const saved = upstream && state ? await store.find(UPSTREAM_ATTEMPT_KIND, state) : undefined;
    if (!upstream || !saved || saved.upstream !== upstream.name || typeof saved.uid !== 'string') return expired(ctx);
    ctx.status = 303;
    ctx.redirect(`${interactionPath(saved.uid)}/callback/${upstream.name}${ctx.querystring ? `?${ctx.querystring}` : ''}`);
  });

  // Issue 17 item 1: the sign-in is bound to the browser that started it. The interaction resumed is the one whose
  // cookie this browser holds, and the upstream attempt must have been started for that same interaction. A browser
  // without the cookie (a victim sent an attacker's upstream link) gets the expired page; the attempt is left as it
  // was, so such a call neither completes the attacker's sign-in nor lets a third party cancel the owner's.
  router.get('/oauth/interaction/:uid/callback/:upstream', async (ctx) => {
    const interaction = await details(ctx);
    const upstream = upstreams.find((u) => u.name === ctx.params.upstream);
    const state = typeof ctx.query.state === 'string' ? ctx.query.state : '';
    if (!interaction || interaction.uid !== ctx.params.uid || interaction.prompt.name !== 'login' || !upstream || !state) return expired(ctx);
    const saved = await store.find(UPSTREAM_ATTEMPT_KIND, state);
    if (!saved || saved.upstream !== upstream.name || saved.uid !== interaction.uid) return expired(ctx);
    // Single use: a callback URL replayed (or reloaded) finds nothing.
    await store.destroy(UPSTREAM_ATTEMPT_KIND, state);
    let result: Record<string, unknown>;
    try {
      // The upstream's answer as it came to the registered redirect URI (its path is the redirect_uri sent upstream).
      const answer = new URL(`${callbackUrl(baseUrl, upstream)}?${ctx.querystring}`);
      const person = await upstream.finish(answer, saved as unknown as SignInAttempt);
      await store.upsert(ACCOUNT_KIND, accountKey(person.userId), { groups: person.groups }, REFRESH_TOKEN_TTL);
      result = { login: { accountId: person.userId } };
    } catch (err) {
      if (!isPlatformError(err)) throw err;
      log.info({ err, upstream: upstream.name }, 'upstream sign-in refused');
      result = { error: err.code === 'UNAVAILABLE' ? 'temporarily_unavailable' : 'access_denied', error_description: err.message };
    }
    ctx.respond = false;
    await provider.interactionFinished(ctx.req, ctx.res, result, { mergeWithLastSubmission: false });
  });

  router.post('/oauth/interaction/:uid/consent', async (ctx) => {
    const interaction = await details(ctx);
    if (!interaction || interaction.uid !== ctx.params.uid || interaction.prompt.name !== 'consent') return expired(ctx);
    await coBody.form(ctx, { limit: '8kb' }).catch(() => ({}));
    const { prompt, grantId, session, params } = interaction;
    const grant = grantId
      ? await provider.Grant.find(grantId)
      : new provider.Grant({ accountId: session!.accountId, clientId: String(params.client_id) });
    if (!grant) return expired(ctx);
    const missing = prompt.details as { missingOIDCScope?: string[]; missingResourceScopes?: Record<string, string[]> };
    if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
    for (const [indicator, scopes] of Object.entries(missing.missingResourceScopes ?? {})) grant.addResourceScope(indicator, scopes.join(' '));
    ctx.respond = false;
    await provider.interactionFinished(ctx.req, ctx.res, { consent: { grantId: await grant.save() } }, { mergeWithLastSubmission: true });
  });

  router.post('/oauth/interaction/:uid/abort', async (ctx) => {
    const interaction = await details(ctx);
    if (!interaction || interaction.uid !== ctx.params.uid) return expired(ctx);
    await coBody.form(ctx, { limit: '8kb' }).catch(() => ({}));
    ctx.respond = false;
    await provider.interactionFinished(ctx.req, ctx.res, { error: 'access_denied', error_description: 'the person declined' }, { mergeWithLastSubmission: false });
  });
  return router;
}

/** The redirect URI pds registers with an upstream: `{base}/oauth/callback/{name}`. */
export function callbackUrl(baseUrl: string, upstream: Pick<SignInProvider, 'name'>): string {
  return `${baseUrl}/oauth/callback/${upstream.name}`;
}
