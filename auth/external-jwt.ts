/**
 * External-issuer JWTs (SPEC.md "Authentication", second form): tokens from the organisation's Dex, verified with
 * the key set at `{authUrl}/api/dex/keys`, issuer `{authUrl}/api/dex`, audience `PDS_OIDC_AUDIENCE`, asymmetric
 * algorithms only (so an HS256 token "signed" with a published public key is refused).
 *
 * Keys are jose's `createRemoteJWKSet`: fetched once, kept 10 minutes, and refetched early when a token names an
 * unknown `kid` (key rotation) — at most once per 30 s cooldown, so forged `kid`s cannot hammer Dex.
 *
 * User id: `email` (unless `email_verified` is false), then `preferred_username`, then `sub` (Dex's `sub` is an
 * opaque, base64-encoded connector id, the last resort). `groups` feeds `PDS_ADMIN_GROUPS`.
 */
import { createRemoteJWKSet, customFetch, errors, jwtVerify, type JWTPayload } from 'jose';
import { Unauthenticated, Unavailable } from '../core/errors.js';
import { describeJoseError } from './jose-errors.js';

/** Signature algorithms accepted from the identity provider: asymmetric only. */
export const EXTERNAL_ALGORITHMS = [
  'RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519',
];

export interface ExternalJwtOptions {
  /** Identity provider base URL without trailing slash (`PDS_AUTH_URL`). */
  authUrl: string;
  /** Expected `aud` (`PDS_OIDC_AUDIENCE`; Dex puts the OAuth client id there). */
  audience: string;
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
      const userId = userIdOf(payload);
      if (!userId) throw new Unauthenticated('token names no user (email, preferred_username or sub)');
      const groups = Array.isArray(payload.groups) ? payload.groups.filter((g): g is string => typeof g === 'string') : [];
      return { userId, groups, exp: payload.exp! };
    },
  };
}

/** `email` (when not explicitly unverified) → `preferred_username` → `sub`. */
export function userIdOf(payload: JWTPayload): string | undefined {
  const str = (v: unknown) => (typeof v === 'string' && v !== '' ? v : undefined);
  const email = payload.email_verified === false ? undefined : str(payload.email);
  return email ?? str(payload.preferred_username) ?? str(payload.sub);
}

/** A failure to obtain the key set (network, timeout, non-200, not JSON, not a JWKS), as opposed to a bad token. */
function keySetUnreachable(err: unknown): boolean {
  if (err instanceof errors.JWKSTimeout || err instanceof errors.JWKSInvalid) return true;
  if (err instanceof errors.JOSEError) return err.code === 'ERR_JOSE_GENERIC';
  return true; // fetch's TypeError ("fetch failed") and anything else not from jose's verification
}
