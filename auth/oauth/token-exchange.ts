/**
 * CI without a personal token (issue 20 item 6): OAuth 2.0 Token Exchange (RFC 8693) at pds's token endpoint, for
 * GitHub Actions OIDC ID tokens. A workflow posts
 *
 * ```
 * grant_type=urn:ietf:params:oauth:grant-type:token-exchange
 * subject_token_type=urn:ietf:params:oauth:token-type:id_token
 * subject_token=<the run's ID token, audience = the pds base URL>
 * client_id=pds-ci
 * ```
 *
 * and gets a self-issued token (`auth/self-issued.ts`) valid {@link ACCESS_TOKEN_TTL} seconds, for the user id
 * `github-actions:<owner>/<repo>`, carrying the verified run. What that token may do is decided at the door
 * (`tools/ci.ts`): deploy-service with action=deploy of services built from that repository, in tenants whose
 * policy accepts it. `pds-ci` is a built-in public client (no secret: the ID token is the credential) allowed this
 * grant only. The grant is oidc-provider's `registerGrantType`; errors are RFC 8693 §2.2.2's `invalid_request` with a
 * description saying what was wrong.
 */
import type { KoaContextWithOIDC, default as ProviderType, ClientMetadata } from 'oidc-provider';
import { CI_EVENTS } from '../../core/governance/ci.js';
import { isPlatformError } from '../../core/errors.js';
import type { Logger } from '../../core/logger.js';
import type { GitHubActionsVerifier } from '../github-actions.js';
import { issueSelfToken, pdsResources } from '../self-issued.js';

/** RFC 8693 §2.1 `grant_type`. */
export const TOKEN_EXCHANGE_GRANT = 'urn:ietf:params:oauth:grant-type:token-exchange';
/** RFC 8693 §3: the subject token is an OpenID Connect ID token. */
export const ID_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:id_token';
/** RFC 8693 §3: what pds issues, an access token. */
export const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';
/** The client id a CI job sends (a public client: no secret). */
export const CI_CLIENT_ID = 'pds-ci';

/** The built-in client of CI jobs: the token exchange grant only. */
export const CI_CLIENT: ClientMetadata = {
  client_id: CI_CLIENT_ID,
  client_name: 'CI (GitHub Actions OIDC token exchange)',
  token_endpoint_auth_method: 'none',
  grant_types: [TOKEN_EXCHANGE_GRANT],
  response_types: [],
  redirect_uris: [],
};

export interface TokenExchangeOptions {
  baseUrl: string;
  secret: Uint8Array;
  /** Verifies the subject token. */
  verifier: GitHubActionsVerifier;
  /** Lifetime of an issued token, seconds. */
  ttlSeconds: number;
  log: Logger;
}

type OidcErrors = typeof import('oidc-provider').errors;

/**
 * Register the token exchange grant on `provider`.
 * @example registerTokenExchange(provider, errors, { baseUrl, secret, verifier, ttlSeconds: ACCESS_TOKEN_TTL, log });
 */
export function registerTokenExchange(provider: ProviderType, errors: OidcErrors, options: TokenExchangeOptions): void {
  const resources = pdsResources(options.baseUrl);
  const handler = async (ctx: KoaContextWithOIDC) => {
    const params = ctx.oidc.params as Record<string, string | undefined>;
    if (params.subject_token_type !== ID_TOKEN_TYPE) {
      throw new errors.InvalidRequest(`subject_token_type must be ${ID_TOKEN_TYPE} (a GitHub Actions OIDC ID token)`);
    }
    if (!params.subject_token) throw new errors.InvalidRequest('subject_token is missing: send the ID token of the GitHub Actions run');
    if (params.requested_token_type !== undefined && params.requested_token_type !== ACCESS_TOKEN_TYPE) {
      throw new errors.InvalidRequest(`requested_token_type must be ${ACCESS_TOKEN_TYPE}, the only kind issued`);
    }
    for (const target of [params.resource, params.audience]) {
      if (target !== undefined && !resources.includes(target)) throw new errors.InvalidTarget(`this authorization server issues tokens for ${resources.join(' and ')} only`);
    }
    let verified: Awaited<ReturnType<GitHubActionsVerifier['verify']>>;
    try {
      verified = await options.verifier.verify(params.subject_token);
    } catch (err) {
      if (isPlatformError(err) && err.code === 'UNAUTHENTICATED') throw new errors.InvalidRequest(`subject_token refused: ${err.message}`);
      options.log.warn({ err }, 'could not verify a GitHub Actions ID token');
      const unavailable = new errors.CustomOIDCProviderError('temporarily_unavailable', isPlatformError(err) ? err.message : 'the ID token could not be verified; retry shortly');
      Object.assign(unavailable, { status: 503, statusCode: 503, expose: true });
      throw unavailable;
    }
    if (!(CI_EVENTS as readonly string[]).includes(verified.run.event_name)) {
      throw new errors.InvalidRequest(
        `subject_token refused: the run was started by a ${verified.run.event_name} event; only ${CI_EVENTS.join(' and ')} runs may deploy`,
      );
    }
    const token = await issueSelfToken(
      options.secret,
      options.baseUrl,
      // No `scope`: OAuth scopes narrow a person's roles, and a CI caller has none; tools/ci.ts is its whole rule.
      { sub: verified.userId, groups: [], githubActions: verified.run },
      options.ttlSeconds,
    );
    ctx.body = { access_token: token, issued_token_type: ACCESS_TOKEN_TYPE, token_type: 'Bearer', expires_in: options.ttlSeconds };
  };
  provider.registerGrantType(TOKEN_EXCHANGE_GRANT, handler, ['subject_token', 'subject_token_type', 'requested_token_type', 'audience', 'resource', 'scope']);
}
