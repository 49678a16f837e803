/**
 * pds as an OAuth 2.1 authorization server for its own tokens (issue 12; MCP "Authorization" 2025-11-25), built on
 * oidc-provider (OpenID Certified; RFC 8414 metadata, RFC 7591 registration, RFC 8707 resource indicators, RFC 8628
 * device flow, Client ID Metadata Documents, refresh-token rotation). This file is the configuration — the glue:
 *
 * - **Codes**: authorization code with PKCE, `S256` only (oidc-provider accepts no other method), required of every
 *   client; codes live 60 s and are single-use (a replayed code revokes what it granted).
 * - **Access tokens**: the self-issued HS256 JWTs of `docs/api.md#authentication` — issuer `PDS_BASE_URL`, `aud` the RFC 8707 resource asked
 *   for (the base URL or `{base}/mcp`; any other resource is `invalid_target`), `scope`, `client_id`, 10 minutes —
 *   verified by `auth/self-issued.ts` like any pds token.
 * - **Refresh tokens**: issued to every client allowed the grant, rotated on each use; presenting a used one again
 *   revokes its whole family (the grant and every token of it).
 * - **Clients**: Client ID Metadata Documents (an `https` client_id pointing at the client's metadata), Dynamic Client
 *   Registration (open, no initial access token), and the built-in `pds-cli` native client of `pds login`. Redirect
 *   URIs match exactly, except that a native client's loopback redirect (`http://127.0.0.1/…`, `http://[::1]/…`)
 *   may use any port (RFC 8252 §7.3).
 * - **People** sign in upstream (`auth/oauth/upstream-*.ts`) and consent on pds's pages (`rest/oauth-routes.ts`).
 *
 * All state (codes, refresh tokens, grants, sessions, interactions, registered clients, device codes) is kept in the
 * {@link OAuthStore}; cookie keys and the ID-token key derive from the HS256 secret, so every replica agrees.
 */
import { createHmac, createPrivateKey, randomBytes } from 'node:crypto';
import type { KoaContextWithOIDC, default as ProviderType, Configuration, ClientMetadata } from 'oidc-provider';
import type { OAuthStore } from '../../core/ports.js';
import type { Logger } from '../../core/logger.js';
import { pdsResources } from '../self-issued.js';
import { SCOPES } from '../scopes.js';
import { storeAdapter } from './store-adapter.js';
import { parseUserId } from '../../core/identity.js';
import { CLIENT_IDLE_TTL, CLIENT_TOUCH_SLACK, registrationProblem } from './registration.js';
import type { GitHubActionsVerifier } from '../github-actions.js';
import { CI_CLIENT, registerTokenExchange } from './token-exchange.js';

/** Access-token lifetime, seconds. */
export const ACCESS_TOKEN_TTL = 600;
/** Authorization-code lifetime, seconds. */
export const AUTHORIZATION_CODE_TTL = 60;
/** Refresh-token (and grant) lifetime, seconds: 30 days. */
export const REFRESH_TOKEN_TTL = 30 * 86_400;
/** Lifetime of one sign-in attempt (interaction, device code), seconds. */
export const INTERACTION_TTL = 600;

/** The client id of `pds login`, a native public client with loopback redirects. */
export const CLI_CLIENT_ID = 'pds-cli';
/** The redirect `pds login` registers; any loopback port is accepted (RFC 8252 §7.3). */
export const CLI_REDIRECT_URI = 'http://127.0.0.1/callback';

/** Where each endpoint is, below the base URL (oidc-provider's `routes`; RFC 8414 metadata names them). */
export const OAUTH_ROUTES = {
  authorization: '/oauth/authorize',
  token: '/oauth/token',
  registration: '/oauth/register',
  revocation: '/oauth/revoke',
  jwks: '/oauth/jwks',
  device_authorization: '/oauth/device/auth',
  code_verification: '/oauth/device',
} as const;

/**
 * The client id of the web console's server side (issue 21 item 2: the console's backend-for-frontend), a confidential
 * web client whose secret derives from the HS256 secret ({@link consoleClientSecret}), so every replica knows it and
 * nothing needs registering.
 */
export const CONSOLE_CLIENT_ID = 'pds-console';
/** The console's one redirect URI: `{base}/console/callback` (`rest/console.ts`). */
export const consoleRedirectUri = (baseUrl: string): string => `${baseUrl}/console/callback`;
/** The console client's secret (client_secret_basic), derived from the HS256 secret; it never leaves the server. */
export function consoleClientSecret(secret: Uint8Array): string {
  return derive(secret, 'console client secret').toString('base64url');
}

/** Path of a sign-in interaction page. */
export const interactionPath = (uid: string): string => `/oauth/interaction/${uid}`;

/** Record kinds pds keeps beside oidc-provider's models in the same store. */
export const ACCOUNT_KIND = 'Account';

/**
 * The id of a person's Account record (the groups their upstream gave at sign-in): the user id under the origin its
 * grammar names (`core/identity.ts`: `github/alice`, `email/jane@example.com`, `oidc/oidc:jane`), so two origins can
 * never share one record even if their ids were ever spelled alike.
 * @throws TypeError for a text that is no user id (an upstream that bypassed the grammar: a bug).
 * @example accountKey('alice') // 'github/alice'
 */
export function accountKey(userId: string): string {
  const parsed = parseUserId(userId);
  if (!parsed) throw new TypeError(`not a user id: ${JSON.stringify(userId)}`);
  return `${parsed.kind}/${parsed.id}`;
}

/** What the authorization server needs. */
export interface AuthorizationServerOptions {
  /** `PDS_BASE_URL`: the issuer. */
  baseUrl: string;
  /** The HS256 secret of pds tokens. */
  secret: Uint8Array;
  store: OAuthStore;
  /** `PDS_TRUST_PROXY`: read the scheme and host from `X-Forwarded-*`. */
  trustProxy: boolean;
  /** Pages oidc-provider renders itself (device code, errors); see `rest/oauth-pages.ts`. */
  pages: ProviderPages;
  /**
   * fetch for every URL a client names: Client ID Metadata Documents, `jwks_uri`, `sector_identifier_uri`. The
   * composition root passes the outbound rule's fetch (`adapters/outbound/fetch.ts`: public addresses only, checked
   * before connecting; no redirects; deadline and size cap); `auth/` does not import adapters.
   */
  fetch: typeof fetch;
  log: Logger;
  /** Verifies GitHub Actions ID tokens for the token exchange grant; without one the grant is not offered. */
  githubActions?: GitHubActionsVerifier;
}

/** HTML oidc-provider asks for; each returns the page body. */
export interface ProviderPages {
  error(out: { error: string; error_description?: string }): string;
  deviceInput(form: string, error?: string): string;
  deviceConfirm(form: string, client: string, userCode: string): string;
  deviceSuccess(client: string): string;
}

/** The running authorization server. */
export interface AuthorizationServer {
  provider: ProviderType;
  store: OAuthStore;
}

/** A key derived from the HS256 secret for one purpose, so one secret serves every replica and every use differs. */
function derive(secret: Uint8Array, purpose: string): Buffer {
  return createHmac('sha256', secret).update(`pds oauth: ${purpose}`).digest();
}

/** An Ed25519 signing key (ID tokens, if a client asks for `openid`) derived from the secret: the PKCS#8 form of a seed. */
function idTokenKey(secret: Uint8Array) {
  const pkcs8 = Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), derive(secret, 'id token key')]);
  return { ...createPrivateKey({ key: pkcs8, format: 'der', type: 'pkcs8' }).export({ format: 'jwk' }), kid: 'pds-1', use: 'sig', alg: 'EdDSA' };
}

/**
 * oidc-provider, imported once. Version 9 warns at import that it is tested on Node 22; pds runs on Node 20 (the
 * team's pin) and its own suite (`test/oauth/`) is what vouches for that, so this one line is dropped
 * instead of showing in every start-up.
 */
let loaded: Promise<typeof import('oidc-provider')> | undefined;
function loadOidcProvider(log: Logger): Promise<typeof import('oidc-provider')> {
  return (loaded ??= (async () => {
    const warn = console.warn;
    console.warn = (...args: unknown[]) => {
      if (String(args[0]).includes('Unsupported runtime')) log.debug({ notice: String(args[0]) }, 'oidc-provider runtime notice');
      else warn(...args);
    };
    try {
      return await import('oidc-provider');
    } finally {
      console.warn = warn;
    }
  })());
}

/**
 * Build the authorization server; mount it with `rest/oauth-routes.ts`.
 * @example const as = await createAuthorizationServer({ baseUrl, secret, store: platform.oauth, trustProxy: false, pages, log });
 */
export async function createAuthorizationServer(options: AuthorizationServerOptions): Promise<AuthorizationServer> {
  const { Provider, errors } = await loadOidcProvider(options.log);
  const { baseUrl, store, pages } = options;
  const resources = pdsResources(baseUrl);
  const cli: ClientMetadata = {
    client_id: CLI_CLIENT_ID,
    client_name: 'pds command line (pds login)',
    application_type: 'native',
    token_endpoint_auth_method: 'none',
    redirect_uris: [CLI_REDIRECT_URI],
    grant_types: ['authorization_code', 'refresh_token', 'urn:ietf:params:oauth:grant-type:device_code'],
    response_types: ['code'],
  };
  const consoleClient: ClientMetadata = {
    client_id: CONSOLE_CLIENT_ID,
    client_secret: consoleClientSecret(options.secret),
    client_name: 'pds web console',
    application_type: 'web',
    token_endpoint_auth_method: 'client_secret_basic',
    redirect_uris: [consoleRedirectUri(baseUrl)],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
  };
  const html = (ctx: KoaContextWithOIDC, body: string) => {
    ctx.type = 'html';
    ctx.body = body;
  };
  const configuration: Configuration = {
    adapter: storeAdapter(store) as unknown as Configuration['adapter'],
    clients: options.githubActions ? [cli, consoleClient, CI_CLIENT] : [cli, consoleClient],
    clientDefaults: { grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], id_token_signed_response_alg: 'EdDSA' },
    enabledJWA: { idTokenSigningAlgValues: ['EdDSA'] },
    jwks: { keys: [idTokenKey(options.secret) as never] },
    cookies: { keys: [derive(options.secret, 'cookies')] },
    routes: OAUTH_ROUTES,
    scopes: ['openid', 'offline_access', ...SCOPES],
    claims: { openid: ['sub'] },
    responseTypes: ['code'],
    pkce: { required: () => true },
    rotateRefreshToken: true,
    issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    ttl: {
      AccessToken: ACCESS_TOKEN_TTL,
      AuthorizationCode: AUTHORIZATION_CODE_TTL,
      RefreshToken: REFRESH_TOKEN_TTL,
      Grant: REFRESH_TOKEN_TTL,
      Session: REFRESH_TOKEN_TTL,
      Interaction: INTERACTION_TTL,
      DeviceCode: INTERACTION_TTL,
      IdToken: ACCESS_TOKEN_TTL,
    },
    interactions: { url: (_ctx, interaction) => interactionPath(interaction.uid) },
    features: {
      devInteractions: { enabled: false },
      registration: {
        enabled: true,
        initialAccessToken: false,
        // Registration management is not routed, so a registration access token would be stored for nothing.
        issueRegistrationAccessToken: false,
        // The first hook oidc-provider calls with the parsed body, before it validates or stores anything: the place
        // for pds's own rules (size, redirect URIs), answered as RFC 7591 errors.
        idFactory: (ctx) => {
          const problem = registrationProblem((ctx as KoaContextWithOIDC).oidc.body);
          if (problem) throw new errors.InvalidClientMetadata(problem);
          return randomBytes(16).toString('base64url');
        },
      },
      revocation: { enabled: true },
      userinfo: { enabled: false },
      rpInitiatedLogout: { enabled: false },
      // pds verifies bearer tokens only: a DPoP-bound token would be accepted without its proof, so none is issued.
      dPoP: { enabled: false },
      pushedAuthorizationRequests: { enabled: false },
      clientIdMetadataDocument: { enabled: true, ack: 'draft-02' },
      deviceFlow: {
        enabled: true,
        userCodeInputSource: async (ctx, form, _out, err) =>
          html(ctx, pages.deviceInput(form, err ? ((err as { userCode?: unknown }).userCode || err.name === 'NoCodeError' ? 'That code is not right; try again.' : 'The sign-in could not continue; start again with pds login --device.') : undefined)),
        userCodeConfirmSource: async (ctx, form, client, _device, userCode) => html(ctx, pages.deviceConfirm(form, client.clientName ?? client.clientId, userCode)),
        successSource: async (ctx) => html(ctx, pages.deviceSuccess(ctx.oidc.client?.clientName ?? ctx.oidc.client?.clientId ?? 'the device')),
      },
      resourceIndicators: {
        enabled: true,
        defaultResource: async (_ctx, _client, oneOf) => oneOf ?? baseUrl,
        useGrantedResource: async () => true,
        getResourceServerInfo: async (_ctx, indicator) => {
          if (!resources.includes(indicator)) {
            throw new errors.InvalidTarget(`this authorization server issues tokens for ${resources.join(' and ')} only`);
          }
          return {
            scope: SCOPES.join(' '),
            audience: indicator,
            accessTokenTTL: ACCESS_TOKEN_TTL,
            accessTokenFormat: 'jwt',
            jwt: { sign: { alg: 'HS256', key: Buffer.from(options.secret) } },
          };
        },
      },
    },
    findAccount: async (_ctx, sub) => ({ accountId: sub, claims: async () => ({ sub }) }),
    // The groups the upstream gave at sign-in (PDS_ADMIN_GROUPS), like the `groups` of `pds token`.
    extraTokenClaims: async (_ctx, token) => {
      const accountId = (token as { accountId?: string }).accountId;
      const key = accountId && parseUserId(accountId) ? accountKey(accountId) : undefined;
      const account = key ? await store.find(ACCOUNT_KIND, key) : undefined;
      return Array.isArray(account?.groups) ? { groups: account.groups } : undefined;
    },
    formats: {
      customizers: {
        // A token of this server always says its scopes, even none: only tokens without the claim are unnarrowed.
        jwt: async (_ctx, _token, jwt) => {
          jwt.payload.scope ??= '';
        },
      },
    },
    // Browser-based MCP clients call the token and registration endpoints cross-origin; PKCE binds what they get.
    clientBasedCORS: () => true,
    // A key set or sector document is small; oidc-provider reads these two without a cap unless told one.
    fetchResponseBodyLimits: { 'client_id metadata document': 5 * 1024, jwks_uri: 64 * 1024, sector_identifier_uri: 64 * 1024 },
    // A browser gets a page; anything that does not ask for HTML first gets OAuth's JSON error.
    renderError: async (ctx, out) => {
      if (ctx.accepts('json', 'html') === 'html') return html(ctx, pages.error(out as { error: string; error_description?: string }));
      ctx.body = out;
    },
  };
  const fetchImpl = options.fetch;
  // oidc-provider passes a dispatcher that checks the address only after the socket connected (a port-probing timing
  // oracle); the injected fetch checks before connecting, so that dispatcher is dropped.
  (configuration as { fetch?: unknown }).fetch = (url: URL | string, init: RequestInit & { dispatcher?: unknown }) => {
    const { dispatcher: _dispatcher, ...rest } = init;
    return fetchImpl(url, rest);
  };
  const provider = new Provider(baseUrl, configuration);
  provider.proxy = options.trustProxy;
  if (options.githubActions) {
    registerTokenExchange(provider, errors, { baseUrl, secret: options.secret, verifier: options.githubActions, ttlSeconds: ACCESS_TOKEN_TTL, log: options.log });
  }
  // A registered client's use (a code issued, a token granted) keeps it for another CLIENT_IDLE_TTL.
  const used = (ctx: KoaContextWithOIDC) => {
    const clientId = ctx.oidc?.client?.clientId;
    if (!clientId) return;
    store.touch('Client', clientId, CLIENT_IDLE_TTL, CLIENT_TOUCH_SLACK).catch((err: unknown) => options.log.warn({ err, clientId }, 'could not extend a registered client'));
  };
  provider.on('authorization.success', used);
  provider.on('grant.success', used);
  provider.on('server_error', (_ctx, err) => options.log.error({ err }, 'OAuth authorization server error'));
  // Koa prints errors it sees to stderr unless someone listens; pds's logger listens instead.
  (provider as unknown as NodeJS.EventEmitter).on('error', (err: unknown) => options.log.error({ err }, 'OAuth authorization server error'));
  // oidc-provider 9 replaces the answer to a device-flow request it refuses before any session existed (a body that is
  // not a form, an unknown resume id) with a TypeError from saving that session: answer what it meant, a bad request.
  provider.use(async (ctx, next) => {
    try {
      await next();
    } catch (err) {
      if (!(err instanceof TypeError && err.message.startsWith('persist can only be called'))) throw err;
      ctx.status = 400;
      ctx.body = { error: 'invalid_request', error_description: 'no sign-in is open for this request; start again' };
    }
  });
  return { provider, store };
}

/** The authorization server, built (and oidc-provider imported) at the first call; see {@link lazyAuthorizationServer}. */
export type AuthorizationServerSource = () => Promise<AuthorizationServer>;

/**
 * The authorization server on demand: oidc-provider and its dependencies are imported and configured at the first
 * call, which `rest/oauth-routes.ts` makes at the first OAuth request, so a pds nobody signs in to never loads them
 * (issue 23 item 1). Every call gives the same server; a build that failed is retried at the next call.
 * @example const oauth = lazyAuthorizationServer(options); app.use(oauthProtocolRouter(oauth).routes());
 */
export function lazyAuthorizationServer(options: AuthorizationServerOptions): AuthorizationServerSource {
  let server: Promise<AuthorizationServer> | undefined;
  return () =>
    (server ??= createAuthorizationServer(options).catch((err: unknown) => {
      server = undefined;
      throw err;
    }));
}
