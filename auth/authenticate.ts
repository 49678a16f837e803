/**
 * Bearer token → {@link Identity} (SPEC.md "Authentication"). Classification: `ghp_…` without dots is a GitHub PAT;
 * three dot-separated parts is a JWT, self-issued when its `iss` is the pds base URL and external otherwise; anything
 * else is refused with 401.
 */
import { decodeJwt } from 'jose';
import { Unauthenticated } from '../adapters/errors.js';
import type { Config } from '../config.js';
import { isPlatformAdmin, type Identity } from './identity.js';
import { verifySelfToken } from './self-issued.js';

/** Turns the `Authorization` header value into an identity. */
export interface Authenticator {
  /**
   * @param authorization the raw `Authorization` header, e.g. `Bearer eyJ…`; `undefined` when absent.
   * @throws Unauthenticated (401) for a missing, malformed, expired or unverifiable token.
   */
  authenticate(authorization: string | undefined): Promise<Identity>;
}

export type TokenForm = 'pat' | 'jwt' | 'unknown';

/** Classify a bearer token by shape alone (SPEC.md "Authentication" table). */
export function classifyToken(token: string): TokenForm {
  if (token.startsWith('ghp_') && !token.includes('.')) return 'pat';
  if (token.split('.').length === 3) return 'jwt';
  return 'unknown';
}

/** The `WWW-Authenticate` challenge for a request without a usable token. */
export function challenge(config: Pick<Config, 'baseUrl'>, error?: 'invalid_token'): string {
  const parts = [`Bearer realm="pds"`];
  if (error) parts.push(`error="${error}"`);
  parts.push(`resource_metadata="${config.baseUrl}/.well-known/oauth-protected-resource"`);
  return parts.join(', ');
}

/** Build the authenticator for a configuration and the HS256 secret. */
export function createAuthenticator(config: Config, secret: Uint8Array): Authenticator {
  const invalid = (message: string) => new Unauthenticated(message, { challenge: challenge(config, 'invalid_token') });
  return {
    async authenticate(authorization) {
      if (!authorization) {
        throw new Unauthenticated('missing bearer token: send "Authorization: Bearer <token>"', {
          challenge: challenge(config),
        });
      }
      const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
      if (!match) throw invalid('malformed Authorization header: expected "Bearer <token>"');
      const token = match[1]!;
      const form = classifyToken(token);
      if (form === 'pat') {
        throw invalid('GitHub personal access tokens are not configured on this pds yet');
      }
      if (form === 'unknown') {
        throw invalid('unrecognised token: expected a GitHub PAT (ghp_…) or a JWT');
      }
      let issuer: string | undefined;
      try {
        issuer = decodeJwt(token).iss;
      } catch {
        throw invalid('token is malformed');
      }
      if (issuer !== config.baseUrl) {
        throw invalid('external identity-provider tokens are not configured on this pds yet');
      }
      const claims = await verifySelfToken(secret, config.baseUrl, token).catch((err: Unauthenticated) => {
        throw invalid(err.message);
      });
      return {
        userId: claims.sub,
        groups: claims.groups,
        admin: isPlatformAdmin(claims.sub, claims.groups, config.admins, config.adminGroups),
        tokenKind: 'self-issued',
      };
    },
  };
}
