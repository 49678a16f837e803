/**
 * Sign-in through the Dex of `PDS_AUTH_URL` (OIDC authorization code with PKCE, state and nonce; openid-client). The
 * user id is the ID token's `PDS_OIDC_USER_CLAIM`, by the same rule as a Dex bearer token (`userIdOf`), so a person
 * is the same user whichever way they come in; `groups` feeds `PDS_ADMIN_GROUPS`.
 */
import * as oidc from 'openid-client';
import { userIdOf, type UserClaim } from '../external-jwt.js';
import type { SignInProvider, SignInProviderOptions } from './upstream.js';
import { upstreamError } from './upstream-errors.js';

export interface DexSignInOptions extends SignInProviderOptions {
  /** `PDS_AUTH_URL`; the issuer is `{authUrl}/api/dex`. */
  authUrl: string;
  userClaim: UserClaim;
}

/** Scopes asked of Dex: the claims the user id and admin groups come from. */
const DEX_SCOPES = 'openid email profile groups';

/**
 * @example const dex = dexUpstream({ authUrl, clientId: 'pds', clientSecret, userClaim: 'email' });
 */
export function dexUpstream(options: DexSignInOptions): SignInProvider {
  const issuer = new URL(`${options.authUrl}/api/dex`);
  let configuration: Promise<oidc.Configuration> | undefined;
  // Discovered once and kept; a failed discovery is retried at the next sign-in.
  const discover = () =>
    (configuration ??= oidc
      .discovery(issuer, options.clientId, options.clientSecret, undefined, {
        timeout: options.timeoutSeconds ?? 5,
        ...(issuer.protocol === 'http:' && { execute: [oidc.allowInsecureRequests] }),
        ...(options.fetch && { [oidc.customFetch]: options.fetch as oidc.CustomFetch }),
      })
      .catch((err: unknown) => {
        configuration = undefined;
        throw upstreamError('Dex', err);
      }));

  return {
    name: 'dex',
    title: 'Dex (single sign-on)',
    async start(redirectUri) {
      const config = await discover();
      const attempt = { codeVerifier: oidc.randomPKCECodeVerifier(), state: oidc.randomState(), nonce: oidc.randomNonce() };
      const url = oidc.buildAuthorizationUrl(config, {
        redirect_uri: redirectUri,
        scope: DEX_SCOPES,
        code_challenge: await oidc.calculatePKCECodeChallenge(attempt.codeVerifier),
        code_challenge_method: 'S256',
        state: attempt.state,
        nonce: attempt.nonce,
      });
      return { url, attempt };
    },
    async finish(callbackUrl, attempt) {
      const config = await discover();
      let claims: oidc.IDToken | undefined;
      try {
        const tokens = await oidc.authorizationCodeGrant(config, callbackUrl, {
          pkceCodeVerifier: attempt.codeVerifier,
          expectedState: attempt.state,
          expectedNonce: attempt.nonce,
          idTokenExpected: true,
        });
        claims = tokens.claims();
      } catch (err) {
        throw upstreamError('Dex', err);
      }
      const userId = userIdOf(claims!, options.userClaim);
      const groups = Array.isArray(claims!.groups) ? claims!.groups.filter((g): g is string => typeof g === 'string') : [];
      return { userId, groups };
    },
  };
}
