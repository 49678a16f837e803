/**
 * Bearer token → {@link Identity} (`docs/api.md#authentication`). Classification: `ghp_…` without dots is a GitHub PAT;
 * three dot-separated parts is a JWT, self-issued when its `iss` is the pds base URL and external (Dex) when it is
 * `{PDS_AUTH_URL}/api/dex`; anything else is refused with 401.
 *
 * Verification is cached by the token's SHA-256: PAT verdicts (see `auth/pat.ts`), and verified JWTs for at most a
 * minute and never past their `exp`, so the hot path of a known token is one hash and one map look-up.
 */
import type { Redis } from 'ioredis';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { Unauthenticated, isPlatformError } from '../core/errors.js';
import type { GitHubUserLookup } from '../core/ports.js';
import type { Config } from '../config.js';
import { createExternalJwtVerifier, type ExternalJwtVerifier } from './external-jwt.js';
import { isPlatformAdmin, type Identity, type TokenKind } from './identity.js';
import { githubActionsUserId, isGitHubActionsId, isGitHubLogin, parseUserId, USER_ID_FORMS } from '../core/identity.js';
import type { GitHubActionsRun } from '../core/governance/ci.js';
import { createPatVerifier, type PatVerifier } from './pat.js';
import { DEFAULT_SCOPES, type Scope } from './scopes.js';
import { authorizationServerOf } from './oauth/authorization-server-of.js';
import { protectedResourceMetadataUrl } from '../core/names.js';
import { verifySelfToken } from './self-issued.js';
import { TokenCache, type CacheLookup } from './token-cache.js';

/** What the caller of one authentication may add: a budget for the upstream calls it would cost. */
export interface AuthAttempt {
  /**
   * Runs right before GitHub is asked about a PAT pds has no verdict for (never for a cached one); throwing (e.g.
   * `RateLimited`) refuses the token without asking. `rest/auth-limit.ts` spends a per-address budget here.
   */
  beforeGitHubLookup?: () => Promise<void>;
  /**
   * The path of the protected resource being accessed below the base URL (`/mcp`), so a 401's `resource_metadata`
   * names that resource's RFC 9728 document (§5.1) and a client asks for a token for it; default pds as a whole.
   */
  resourcePath?: string;
}

/** Turns the `Authorization` header value into an identity. */
export interface Authenticator {
  /**
   * @param authorization the raw `Authorization` header, e.g. `Bearer eyJ…`; `undefined` when absent.
   * @param attempt hooks of this attempt (see {@link AuthAttempt}).
   * @throws Unauthenticated (401) for a missing, malformed, expired or unverifiable token; carries a
   *   `WWW-Authenticate` challenge with `resource_metadata`.
   * @throws Unavailable (503) when the token's issuer (GitHub, Dex) cannot be reached and nothing is cached.
   * @throws whatever `attempt.beforeGitHubLookup` throws.
   */
  authenticate(authorization: string | undefined, attempt?: AuthAttempt): Promise<Identity>;
}

/** Optional collaborators; everything defaults to the real thing built from the configuration. */
export interface AuthenticatorDeps {
  /**
   * Who owns a GitHub PAT: the composition root passes `createGitHubUserLookup` of `adapters/github/users.ts` (auth/
   * imports no adapter). Without one, every PAT is refused.
   */
  lookupGitHubUser?: GitHubUserLookup;
  /** Shares PAT verdicts between replicas: the Redis client when it can take commands now (see `TokenCacheOptions`). */
  redis?: () => Redis | undefined;
  /** fetch for the Dex key set. */
  fetch?: typeof fetch;
  /** Clock, epoch milliseconds (cache expiry). */
  now?: () => number;
  /** Outbound call timeout, milliseconds (default 5000). */
  timeoutMs?: number;
  /** Least time between key-set refetches for unknown `kid`s, milliseconds (default 30 000). */
  jwksCooldownMs?: number;
  /** Told where each token verdict came from (metrics), per cache: `pat` (GitHub PATs) or `jwt` (verified JWTs). */
  onCacheLookup?: (cache: 'pat' | 'jwt', result: CacheLookup) => void;
}

export type TokenForm = 'pat' | 'jwt' | 'unknown';

/** Classify a bearer token by shape alone (`docs/api.md#authentication` table). */
export function classifyToken(token: string): TokenForm {
  if (token.startsWith('ghp_') && !token.includes('.')) return 'pat';
  // Exactly two dots, counted without splitting (this runs for every request).
  const first = token.indexOf('.');
  const second = first < 0 ? -1 : token.indexOf('.', first + 1);
  if (second >= 0 && token.indexOf('.', second + 1) < 0) return 'jwt';
  return 'unknown';
}

/**
 * The `WWW-Authenticate` challenge (RFC 6750 §3, RFC 9728 §5.1): `error="invalid_token"` when a token was sent but
 * refused, `resource_metadata` always, so MCP clients can discover where to log in, and, when pds is the
 * authorization server, `scope` with the scopes to ask for ({@link DEFAULT_SCOPES}: admin comes by step-up).
 */
export function challenge(config: Pick<Config, 'baseUrl' | 'authUrl' | 'signIn'>, error?: 'invalid_token', resourcePath = ''): string {
  const parts = [`Bearer realm="pds"`];
  if (error) parts.push(`error="${error}"`);
  if (authorizationServerOf(config).pds) parts.push(`scope="${DEFAULT_SCOPES.join(' ')}"`);
  parts.push(`resource_metadata="${protectedResourceMetadataUrl(config.baseUrl, resourcePath)}"`);
  return parts.join(', ');
}

/** Longest time a verified JWT is reused without verifying its signature again. */
const JWT_CACHE_MS = 60_000;

/**
 * Build the authenticator for a configuration and the HS256 secret.
 * @throws TypeError when `PDS_AUTH_URL` is set without `PDS_OIDC_AUDIENCE` (a misconfiguration, found at start-up).
 * @example
 * const auth = createAuthenticator(config, secret, { lookupGitHubUser: createGitHubUserLookup({ baseUrl }), redis: () => redis });
 * ctx.state.identity = await auth.authenticate(ctx.get('authorization') || undefined);
 */
export function createAuthenticator(config: Config, secret: Uint8Array, deps: AuthenticatorDeps = {}): Authenticator {
  const now = deps.now ?? Date.now;
  const refuse = (message: string) => new Unauthenticated(message, { challenge: challenge(config, 'invalid_token') });
  const identity = (userId: string, groups: string[], tokenKind: TokenKind, scopes?: Scope[]): Identity => ({
    userId,
    groups,
    admin: isPlatformAdmin(userId, groups, config.admins, config.adminGroups),
    tokenKind,
    ...(scopes && { scopes }),
  });

  const verifyPat: PatVerifier | undefined =
    deps.lookupGitHubUser &&
    createPatVerifier({
      lookup: deps.lookupGitHubUser,
      redis: deps.redis,
      now,
      onCacheLookup: deps.onCacheLookup && ((result) => deps.onCacheLookup!('pat', result)),
    });

  let external: ExternalJwtVerifier | undefined;
  if (config.authUrl) {
    if (!config.oidcAudience) throw new TypeError('PDS_AUTH_URL is set but PDS_OIDC_AUDIENCE is not: external tokens cannot be checked');
    external = createExternalJwtVerifier({
      authUrl: config.authUrl,
      audience: config.oidcAudience,
      userClaim: config.oidcUserClaim,
      fetch: deps.fetch,
      timeoutMs: deps.timeoutMs,
      cooldownMs: deps.jwksCooldownMs,
    });
  }

  const jwts = new TokenCache<Identity>({ namespace: 'pds:auth:jwt:', now, onLookup: deps.onCacheLookup && ((result) => deps.onCacheLookup!('jwt', result)) });

  async function verifyJwt(token: string): Promise<Identity> {
    const cached = jwts.peek(token);
    if (cached?.ok) return cached.value;
    let issuer: string | undefined;
    let alg: string | undefined;
    try {
      issuer = decodeJwt(token).iss;
      alg = decodeProtectedHeader(token).alg;
    } catch {
      throw refuse('token is malformed');
    }
    let verified: { userId: string; groups: string[]; exp: number; kind: TokenKind; scopes?: Scope[]; ci?: GitHubActionsRun };
    if (issuer === config.baseUrl) {
      const claims = await verifySelfToken(secret, config.baseUrl, token);
      if (isGitHubActionsId(claims.sub) || claims.githubActions) {
        // A CI token (auth/oauth/token-exchange.ts): its subject is the repository of the run it carries, nothing else.
        if (!claims.githubActions || githubActionsUserId(claims.githubActions.repository) !== claims.sub) {
          throw refuse('token subject is a GitHub Actions id without the verified run it stands for');
        }
        verified = { userId: claims.sub, groups: [], exp: claims.exp, kind: 'self-issued', scopes: claims.scopes, ci: claims.githubActions };
      } else {
        // A pds token stands for an identity of one of the other origins, so its subject follows that identity's grammar.
        if (!parseUserId(claims.sub)) throw refuse(`token subject is not a user id: it must be ${USER_ID_FORMS}`);
        verified = { userId: claims.sub, groups: claims.groups, exp: claims.exp, kind: 'self-issued', scopes: claims.scopes };
      }
    } else if (external && issuer === external.issuer) {
      verified = { ...(await external.verify(token)), kind: 'external' };
    } else if (alg === 'HS256') {
      // A pds-form token (identity providers never sign HS256 here: EXTERNAL_ALGORITHMS) minted for another base URL,
      // typically `pds token` run with another PDS_BASE_URL or PORT than the server.
      throw refuse(
        `token issued for ${issuer ?? '(no issuer)'}; this pds is ${config.baseUrl}: mint one with "npx pds token" ` +
          'run with the same PDS_BASE_URL (or PORT) as the server',
      );
    } else {
      // Refused before any key-set fetch: a forged issuer costs nothing.
      throw refuse(external ? 'token issuer is not trusted by this pds' : 'token issuer is not trusted: external identity-provider tokens are not configured on this pds');
    }
    const id = verified.ci
      ? { userId: verified.userId, groups: [], admin: false, tokenKind: verified.kind, ...(verified.scopes && { scopes: verified.scopes }), ci: verified.ci }
      : identity(verified.userId, verified.groups, verified.kind, verified.scopes);
    jwts.set(token, { ok: true, value: id }, Math.min(JWT_CACHE_MS, verified.exp * 1000 - now()));
    return id;
  }

  return {
    async authenticate(authorization, attempt) {
      if (!authorization) {
        throw new Unauthenticated('missing bearer token: send "Authorization: Bearer <token>"', { challenge: challenge(config, undefined, attempt?.resourcePath) });
      }
      const match = /^Bearer +(\S+) *$/i.exec(authorization);
      if (!match) throw refuse('malformed Authorization header: expected "Bearer <token>"');
      const token = match[1]!;
      try {
        switch (classifyToken(token)) {
          case 'pat': {
            if (!verifyPat) throw refuse('GitHub tokens are not accepted by this pds: use a JWT');
            const login = await verifyPat(token, attempt?.beforeGitHubLookup);
            if (!isGitHubLogin(login)) throw refuse('GitHub answered a login that is not a GitHub login; refused');
            return identity(login, [], 'pat');
          }
          case 'jwt':
            return await verifyJwt(token);
          default:
            throw refuse('malformed token: expected a GitHub classic PAT (ghp_…) or a JWT');
        }
      } catch (err) {
        // Every 401 carries the challenge of the resource asked for, whichever verifier refused; 503s pass unchanged.
        const complete = (h?: string) => h?.includes('resource_metadata') && !attempt?.resourcePath;
        if (isPlatformError(err) && err.code === 'UNAUTHENTICATED' && !complete(err.headers['WWW-Authenticate'])) {
          throw new Unauthenticated(err.message, { cause: err.cause ?? err, challenge: challenge(config, 'invalid_token', attempt?.resourcePath) });
        }
        throw err;
      }
    },
  };
}
