/**
 * The web console's sessions (issue 21 item 2): the backend-for-frontend half of the console. A person's tokens stay
 * here, on the server; the browser holds only a random session id in an `HttpOnly`, `SameSite=Lax` cookie (`Secure`
 * when the base URL is https) scoped to `/console/api`, and a CSRF token it sends back in `X-CSRF-Token` on every
 * state-changing request (`rest/console.ts` checks both).
 *
 * Two ways in:
 * - **OAuth** through pds's own authorization server, as the confidential client `pds-console` (authorization code
 *   with PKCE, `auth/oauth/provider.ts`); the session keeps the access and refresh tokens and refreshes them as they
 *   expire. The token endpoint is called on the server's own listener (loopback), so no proxy or DNS stands between.
 * - **A one-time code** on a sandbox (`pds console --user alice`, `auth/console-code.ts`): the session names the
 *   person, and a short self-issued token is signed for them as requests need one.
 *
 * Records live in the OAuth store (`OAuthStore`, shared by replicas) under `ConsoleSession` (by the SHA-256 of the
 * cookie's id, so the store never holds a usable cookie) and `ConsoleSignIn` (an OAuth sign-in in flight, by `state`).
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Context } from 'koa';
import { decodeJwt } from 'jose';
import type * as OidcClient from 'openid-client';
import { InvalidParams, Unauthenticated } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import type { OAuthStore } from '../core/ports.js';
import { CONSOLE_CLIENT_ID, OAUTH_ROUTES, consoleClientSecret, consoleRedirectUri } from '../auth/oauth/provider.js';
import { issueSelfToken } from '../auth/self-issued.js';
import { SCOPES } from '../auth/scopes.js';

/** Record kind of a console session. */
export const SESSION_KIND = 'ConsoleSession';
/** Record kind of an OAuth sign-in in flight, keyed by its `state`. */
export const SIGN_IN_KIND = 'ConsoleSignIn';
/** A session's lifetime, seconds (12 hours); then the person signs in again. */
export const SESSION_TTL = 12 * 3600;
/** An OAuth sign-in's lifetime, seconds (the authorization server's interaction lasts as long). */
export const SIGN_IN_TTL = 600;
/** Tokens are renewed this long before they expire, seconds. */
const RENEW_MARGIN = 60;
/** Lifetime of the self-issued tokens of a code session, seconds. */
const CODE_TOKEN_TTL = 300;
/** Scopes the console asks for: everything a person may do; roles still decide (`auth/scopes.ts`). */
export const CONSOLE_SCOPES = SCOPES.join(' ');

/** A signed-in person as the console's pages see them. */
export interface ConsoleSession {
  /** The SHA-256 of the cookie's session id, the record's key. */
  key: string;
  userId: string;
  /** How the session began: the OAuth flow or a sandbox's one-time code. */
  via: 'oauth' | 'code';
  /** The CSRF token the pages send back in `X-CSRF-Token`. */
  csrf: string;
}

interface SessionRecord {
  userId: string;
  via: 'oauth' | 'code';
  csrf: string;
  accessToken?: string;
  /** Epoch seconds. */
  accessExp?: number;
  refreshToken?: string;
  /** Epoch seconds: when the session ends whatever happens. */
  expiresAt: number;
}

/** What the sessions need. */
export interface ConsoleSessionOptions {
  baseUrl: string;
  /** The HS256 secret: self-issued tokens of code sessions, and the console client's secret. */
  secret: Uint8Array;
  store: OAuthStore;
  /** The server's own listener (`http://127.0.0.1:<port>`), where the token and revocation endpoints are called. */
  localUrl: () => string;
  log: Logger;
}

const now = () => Math.floor(Date.now() / 1000);
const digest = (text: string) => createHash('sha256').update(text).digest('base64url');

/** The cookie's name: `__Secure-` prefixed when it is sent over https only. */
export function sessionCookieName(baseUrl: string): string {
  return baseUrl.startsWith('https:') ? '__Secure-pds_console' : 'pds_console';
}

/** The cookie binding an OAuth sign-in to the browser that started it (scoped to the callback). */
export function signInCookieName(baseUrl: string): string {
  return baseUrl.startsWith('https:') ? '__Secure-pds_console_sign_in' : 'pds_console_sign_in';
}

/** Constant-time comparison of two texts. */
export function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** The console's sessions; see the module comment. */
export class ConsoleSessions {
  private readonly secure: boolean;
  private readonly cookie: string;
  /** Renewals in flight by session key: one refresh per session at a time (refresh tokens rotate, and a reuse revokes). */
  private readonly renewing = new Map<string, Promise<string>>();
  /** Self-issued tokens of code sessions by session key, reused until near expiry. */
  private readonly minted = new Map<string, { token: string; exp: number }>();
  private client?: Promise<{ oidc: typeof OidcClient; config: OidcClient.Configuration }>;

  constructor(private readonly options: ConsoleSessionOptions) {
    this.secure = options.baseUrl.startsWith('https:');
    this.cookie = sessionCookieName(options.baseUrl);
  }

  /** openid-client and the console client's configuration, loaded at the first OAuth sign-in (issue 23: lazy modules). */
  private oauth() {
    return (this.client ??= (async () => {
      const oidc = await import('openid-client');
      const { baseUrl, secret } = this.options;
      const local = this.options.localUrl();
      const clientSecret = consoleClientSecret(secret);
      const config = new oidc.Configuration(
        {
          issuer: baseUrl,
          authorization_endpoint: `${baseUrl}${OAUTH_ROUTES.authorization}`,
          token_endpoint: `${local}${OAUTH_ROUTES.token}`,
          revocation_endpoint: `${local}${OAUTH_ROUTES.revocation}`,
        },
        CONSOLE_CLIENT_ID,
        clientSecret,
        oidc.ClientSecretBasic(clientSecret),
      );
      // The token endpoint is this process's own loopback listener.
      oidc.allowInsecureRequests(config);
      return { oidc, config };
    })());
  }

  /**
   * Begin an OAuth sign-in: record the PKCE verifier under a fresh `state`, bound to a random value in a cookie of
   * the browser, and answer the authorization URL to send it to.
   */
  async beginSignIn(ctx: Context, returnTo: string): Promise<string> {
    const { oidc, config } = await this.oauth();
    const verifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const binding = randomBytes(24).toString('base64url');
    await this.options.store.upsert(SIGN_IN_KIND, state, { verifier, binding: digest(binding), returnTo }, SIGN_IN_TTL);
    this.setCookie(ctx, signInCookieName(this.options.baseUrl), binding, { path: '/console/callback', maxAge: SIGN_IN_TTL });
    return oidc.buildAuthorizationUrl(config, {
      redirect_uri: consoleRedirectUri(this.options.baseUrl),
      scope: CONSOLE_SCOPES,
      resource: this.options.baseUrl,
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
    }).href;
  }

  /**
   * Finish an OAuth sign-in at the callback: the browser must hold the cookie its sign-in began with; the code is
   * exchanged with the PKCE verifier, and a session begins.
   * @returns where to send the person (the page they started from).
   * @throws InvalidParams (400) when the sign-in is unknown, expired, of another browser, or refused.
   */
  async finishSignIn(ctx: Context): Promise<string> {
    const state = typeof ctx.query.state === 'string' ? ctx.query.state : '';
    const binding = ctx.cookies.get(signInCookieName(this.options.baseUrl)) ?? '';
    const saved = state ? await this.options.store.find(SIGN_IN_KIND, state) : undefined;
    this.setCookie(ctx, signInCookieName(this.options.baseUrl), '', { path: '/console/callback', maxAge: 0 });
    if (!saved || !binding || !sameText(String(saved.binding), digest(binding))) {
      throw new InvalidParams('console sign-in expired or started in another browser: sign in again from the console');
    }
    await this.options.store.destroy(SIGN_IN_KIND, state);
    if (typeof ctx.query.error === 'string') {
      throw new InvalidParams(`sign-in did not complete: ${ctx.query.error}${typeof ctx.query.error_description === 'string' ? ` (${ctx.query.error_description})` : ''}`);
    }
    const { oidc, config } = await this.oauth();
    let tokens: OidcClient.TokenEndpointResponse;
    try {
      const arrived = new URL(`${consoleRedirectUri(this.options.baseUrl)}?${ctx.querystring}`);
      tokens = await oidc.authorizationCodeGrant(config, arrived, { pkceCodeVerifier: String(saved.verifier), expectedState: state }, { resource: this.options.baseUrl });
    } catch (err) {
      this.options.log.info({ err: { message: (err as Error).message, code: (err as { code?: string }).code } }, 'console sign-in refused at the token endpoint');
      throw new InvalidParams('sign-in was refused by the authorization server: sign in again', { cause: err });
    }
    const claims = decodeJwt(tokens.access_token);
    await this.create(ctx, String(claims.sub), 'oauth', {
      accessToken: tokens.access_token,
      accessExp: Number(claims.exp),
      refreshToken: tokens.refresh_token,
    });
    return typeof saved.returnTo === 'string' ? saved.returnTo : '/';
  }

  /** Begin a session for `userId` and set its cookie. */
  async create(ctx: Context, userId: string, via: 'oauth' | 'code', tokens: Pick<SessionRecord, 'accessToken' | 'accessExp' | 'refreshToken'> = {}): Promise<ConsoleSession> {
    const id = randomBytes(32).toString('base64url');
    const key = digest(id);
    const record: SessionRecord = { userId, via, csrf: randomBytes(24).toString('base64url'), expiresAt: now() + SESSION_TTL, ...tokens };
    await this.options.store.upsert(SESSION_KIND, key, { ...record }, SESSION_TTL);
    this.setCookie(ctx, this.cookie, id, { path: '/console/api', maxAge: SESSION_TTL });
    return { key, userId, via, csrf: record.csrf };
  }

  /** The session the request's cookie names, or `undefined`. */
  async find(ctx: Context): Promise<ConsoleSession | undefined> {
    const id = ctx.cookies.get(this.cookie);
    if (!id) return undefined;
    const key = digest(id);
    const record = (await this.options.store.find(SESSION_KIND, key)) as SessionRecord | undefined;
    if (!record || record.expiresAt <= now()) return undefined;
    return { key, userId: record.userId, via: record.via, csrf: record.csrf };
  }

  /**
   * A bearer token for the session's person: the OAuth access token (refreshed when near expiry), or a fresh
   * self-issued token for a code session.
   * @throws Unauthenticated when the session ended or its refresh was refused (the session is then removed).
   */
  async token(session: ConsoleSession): Promise<string> {
    if (session.via === 'code') {
      const kept = this.minted.get(session.key);
      if (kept && kept.exp - now() > RENEW_MARGIN) return kept.token;
      const token = await issueSelfToken(this.options.secret, this.options.baseUrl, { sub: session.userId, groups: [] }, CODE_TOKEN_TTL);
      // Forget the expired ones of sessions nobody uses any more, so the map stays as large as the active sessions.
      for (const [key, { exp }] of this.minted) if (exp <= now()) this.minted.delete(key);
      this.minted.set(session.key, { token, exp: now() + CODE_TOKEN_TTL });
      return token;
    }
    const record = (await this.options.store.find(SESSION_KIND, session.key)) as SessionRecord | undefined;
    if (!record) throw signedOut();
    if (record.accessToken && (record.accessExp ?? 0) - now() > RENEW_MARGIN) return record.accessToken;
    let renewal = this.renewing.get(session.key);
    if (!renewal) {
      renewal = this.renew(session.key, record).finally(() => this.renewing.delete(session.key));
      this.renewing.set(session.key, renewal);
    }
    return renewal;
  }

  private async renew(key: string, record: SessionRecord): Promise<string> {
    if (!record.refreshToken) throw signedOut();
    const { oidc, config } = await this.oauth();
    try {
      const tokens = await oidc.refreshTokenGrant(config, record.refreshToken, { resource: this.options.baseUrl });
      const claims = decodeJwt(tokens.access_token);
      const next: SessionRecord = { ...record, accessToken: tokens.access_token, accessExp: Number(claims.exp), refreshToken: tokens.refresh_token ?? record.refreshToken };
      await this.options.store.upsert(SESSION_KIND, key, { ...next }, Math.max(1, record.expiresAt - now()));
      return tokens.access_token;
    } catch (err) {
      this.options.log.info({ err: { message: (err as Error).message } }, 'console session could not be renewed; signing out');
      await this.options.store.destroy(SESSION_KIND, key);
      throw signedOut();
    }
  }

  /**
   * Sign out: revoke the refresh token at the authorization server (which revokes its whole grant), forget the
   * session and clear the cookie. A revocation that fails is logged; the session ends all the same.
   */
  async end(ctx: Context, session: ConsoleSession): Promise<void> {
    const record = (await this.options.store.find(SESSION_KIND, session.key)) as SessionRecord | undefined;
    await this.options.store.destroy(SESSION_KIND, session.key);
    this.minted.delete(session.key);
    this.setCookie(ctx, this.cookie, '', { path: '/console/api', maxAge: 0 });
    if (record?.refreshToken) {
      const { oidc, config } = await this.oauth();
      await oidc.tokenRevocation(config, record.refreshToken, { token_type_hint: 'refresh_token' }).catch((err: unknown) =>
        this.options.log.warn({ err: { message: (err as Error).message } }, 'console sign-out: the refresh token could not be revoked'),
      );
    }
  }

  private setCookie(ctx: Context, name: string, value: string, options: { path: string; maxAge: number }): void {
    // Koa refuses a Secure cookie on a connection it does not see as TLS; behind a TLS proxy without PDS_TRUST_PROXY
    // the base URL is what says the browser talks https.
    ctx.cookies.secure = this.secure;
    ctx.cookies.set(name, value || null, {
      httpOnly: true,
      sameSite: 'lax',
      secure: this.secure,
      path: options.path,
      ...(options.maxAge > 0 ? { maxAge: options.maxAge * 1000 } : { expires: new Date(0) }),
      overwrite: true,
    });
  }
}

function signedOut(): Unauthenticated {
  return new Unauthenticated('not signed in to the console (or the session ended): sign in again', { challenge: 'Cookie realm="pds console"' });
}
