/**
 * External-issuer JWTs (`docs/api.md#authentication`, second form): tokens from the organisation's Dex, verified with
 * the key set at `{authUrl}/api/dex/keys`, issuer `{authUrl}/api/dex`, audience `PDS_OIDC_AUDIENCE`, asymmetric
 * algorithms only (so an HS256 token "signed" with a published public key is refused).
 *
 * Keys are jose's `createRemoteJWKSet`: fetched once, kept 10 minutes, and refetched early when a token names an
 * unknown `kid` (key rotation) — at most once per 30 s cooldown, so forged `kid`s cannot hammer Dex.
 *
 * User id (issue 7 item 15, issue 17 item 9; the grammar is `core/identity.ts`): the one claim `PDS_OIDC_USER_CLAIM`
 * names, never another in its place.
 * - `email` (the default): the address, only when `email_verified` is `true` — Dex connectors pass through addresses
 *   nobody confirmed, and anyone can claim `root@example.com` at a provider that does not check — and only when it is
 *   of the e-mail form (an `@`): a verified `email: "root"` is not the GitHub login `root`.
 * - `preferred_username` or `sub`: `oidc:<value>`, the value refused when it contains `@`, so that ids of the e-mail
 *   form come from a verified `email` only and no username can be (or become a `PDS_ADMINS` entry of) an e-mail user
 *   or a GitHub login.
 * A token without a usable value is refused (401) naming the claim. `groups` feeds `PDS_ADMIN_GROUPS`.
 */
import { createRemoteJWKSet, customFetch, errors, jwtVerify, type JWTPayload } from 'jose';
import { Unauthenticated, Unavailable } from '../core/errors.js';
import { isEmailId, oidcUserId } from '../core/identity.js';
import { describeJoseError } from './jose-errors.js';

/** Signature algorithms accepted from the identity provider: asymmetric only. */
export const EXTERNAL_ALGORITHMS = [
  'RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519',
];

/** Claims `PDS_OIDC_USER_CLAIM` may name. */
export const USER_CLAIMS = ['email', 'preferred_username', 'sub'] as const;
export type UserClaim = (typeof USER_CLAIMS)[number];

export interface ExternalJwtOptions {
  /** Identity provider base URL without trailing slash (`PDS_AUTH_URL`). */
  authUrl: string;
  /** Expected `aud` (`PDS_OIDC_AUDIENCE`; Dex puts the OAuth client id there). */
  audience: string;
  /** The claim that is the user id (`PDS_OIDC_USER_CLAIM`, default `email`). */
  userClaim?: UserClaim;
  /** fetch for the key set (tests, proxies); defaults to the global one. */
  fetch?: typeof fetch;
  /** Key-set request timeout, milliseconds (default 5000). */
  timeoutMs?: number;
  /** Least time between two key-set fetches caused by unknown `kid`s, milliseconds (default 30 000). */
  cooldownMs?: number;
}

/** A verified external token. */
export interface ExternalClaims {
  userId: string;
  groups: string[];
  /** Expiry, epoch seconds. */
  exp: number;
}

export interface ExternalJwtVerifier {
  /** `{authUrl}/api/dex`: tokens whose `iss` is this are sent here. */
  readonly issuer: string;
  /**
   * @throws Unauthenticated for an expired, wrongly signed, wrong-issuer/audience or malformed token.
   * @throws Unavailable when the key set cannot be fetched.
   */
  verify(token: string): Promise<ExternalClaims>;
}

/**
 * @example
 * const dex = createExternalJwtVerifier({ authUrl: 'https://auth.example.com', audience: 'pds' });
 * const { userId, groups } = await dex.verify(jwt);
 */
export function createExternalJwtVerifier(options: ExternalJwtOptions): ExternalJwtVerifier {
  const issuer = `${options.authUrl}/api/dex`;
  const keys = createRemoteJWKSet(new URL(`${issuer}/keys`), {
    timeoutDuration: options.timeoutMs ?? 5000,
    cooldownDuration: options.cooldownMs ?? 30_000,
    ...(options.fetch ? { [customFetch]: options.fetch } : {}),
  });
  return {
    issuer,
    async verify(token) {
      let payload: JWTPayload;
      try {
        ({ payload } = await jwtVerify(token, keys, {
          issuer,
          audience: options.audience,
          algorithms: EXTERNAL_ALGORITHMS,
          requiredClaims: ['exp'],
        }));
      } catch (err) {
        if (keySetUnreachable(err)) {
          throw new Unavailable('the identity provider could not be reached to verify the token; retry shortly', { cause: err });
        }
        throw new Unauthenticated(describeJoseError(err), { cause: err });
      }
      const userId = userIdOf(payload, options.userClaim ?? 'email');
      const groups = Array.isArray(payload.groups) ? payload.groups.filter((g): g is string => typeof g === 'string') : [];
      return { userId, groups, exp: payload.exp! };
    },
  };
}

/**
 * The user id a verified token's payload gives under `claim` (see the module comment for the rule).
 * @throws Unauthenticated naming the claim when it is missing, empty, an unverified e-mail, an `email` without `@`, or
 *   (for `preferred_username`/`sub`) a value with `@`, `,` or control characters.
 * @example userIdOf({ email: 'jane@example.com', email_verified: true }, 'email') // 'jane@example.com'
 * @example userIdOf({ preferred_username: 'jane' }, 'preferred_username') // 'oidc:jane'
 */
export function userIdOf(payload: JWTPayload, claim: UserClaim): string {
  const value = payload[claim];
  const setting = `PDS_OIDC_USER_CLAIM=${claim}`;
  if (typeof value !== 'string' || value === '') {
    throw new Unauthenticated(`token has no "${claim}" claim, which is the user id on this pds (${setting}); no other claim stands in for it`);
  }
  if (claim === 'email') {
    if (payload.email_verified !== true) {
      throw new Unauthenticated(`token's email is not verified (email_verified is not true); this pds takes only a verified email as the user id (${setting})`);
    }
    if (!isEmailId(value)) {
      throw new Unauthenticated(`token's email is not an e-mail address (one "@", no ":", "," or spaces); user ids from an identity provider's email are addresses (${setting})`);
    }
    return value;
  }
  if (value.includes('@')) {
    throw new Unauthenticated(`token's "${claim}" looks like an e-mail address; user ids of that form come only from a verified "email" claim (${setting})`);
  }
  const id = oidcUserId(value);
  if (!id) throw new Unauthenticated(`token's "${claim}" is not usable as a user id (no ",", control characters or surrounding spaces; ${setting})`);
  return id;
}

/** A failure to obtain the key set (network, timeout, non-200, not JSON, not a JWKS), as opposed to a bad token. */
function keySetUnreachable(err: unknown): boolean {
  if (err instanceof errors.JWKSTimeout || err instanceof errors.JWKSInvalid) return true;
  if (err instanceof errors.JOSEError) return err.code === 'ERR_JOSE_GENERIC';
  return true; // fetch's TypeError ("fetch failed") and anything else not from jose's verification
}
