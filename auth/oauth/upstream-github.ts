/**
 * Sign-in through a GitHub OAuth app (`PDS_GITHUB_OAUTH_CLIENT_ID`/`_SECRET`): GitHub's web application flow with PKCE
 * (`{PDS_GITHUB_OAUTH_URL}/login/oauth/authorize`, `/login/oauth/access_token`; openid-client with the endpoints
 * given, GitHub has no discovery), asking for `read:user` only. The user id is the GitHub login from `GET /user`,
 * the same lookup a PAT goes through, so a person is the same user with a PAT or through the browser.
 */
import * as oidc from 'openid-client';
import type { GitHubUserLookup } from '../../core/ports.js';
import type { SignInProvider, SignInProviderOptions } from './upstream.js';
import { upstreamError } from './upstream-errors.js';
import { Unauthenticated } from '../../core/errors.js';
import { isGitHubLogin } from '../../core/identity.js';

export interface GitHubSignInOptions extends SignInProviderOptions {
  /** `PDS_GITHUB_OAUTH_URL`, e.g. `https://github.com`. */
  url: string;
  /** Who a GitHub token belongs to (`GET /user` on `PDS_GITHUB_API_URL`). */
  lookup: GitHubUserLookup;
}

/**
 * @example const github = githubUpstream({ url: 'https://github.com', clientId, clientSecret, lookup });
 */
export function githubUpstream(options: GitHubSignInOptions): SignInProvider {
  const server: oidc.ServerMetadata = {
    issuer: options.url,
    authorization_endpoint: `${options.url}/login/oauth/authorize`,
    token_endpoint: `${options.url}/login/oauth/access_token`,
  };
  const config = new oidc.Configuration(server, options.clientId, options.clientSecret, oidc.ClientSecretPost(options.clientSecret));
  config.timeout = options.timeoutSeconds ?? 5;
  if (options.fetch) config[oidc.customFetch] = options.fetch as oidc.CustomFetch;
  if (server.issuer.startsWith('http:')) oidc.allowInsecureRequests(config);

  return {
    name: 'github',
    title: 'GitHub',
    async start(redirectUri) {
      const attempt = { codeVerifier: oidc.randomPKCECodeVerifier(), state: oidc.randomState() };
      const url = oidc.buildAuthorizationUrl(config, {
        redirect_uri: redirectUri,
        scope: 'read:user',
        code_challenge: await oidc.calculatePKCECodeChallenge(attempt.codeVerifier),
        code_challenge_method: 'S256',
        state: attempt.state,
        allow_signup: 'false',
      });
      return { url, attempt };
    },
    async finish(callbackUrl, attempt) {
      let accessToken: string;
      try {
        const tokens = await oidc.authorizationCodeGrant(config, callbackUrl, {
          pkceCodeVerifier: attempt.codeVerifier,
          expectedState: attempt.state,
        });
        accessToken = tokens.access_token;
      } catch (err) {
        throw upstreamError('GitHub', err);
      }
      const { login } = await options.lookup(accessToken);
      // The GitHub grammar of core/identity.ts: a login never has "@" or ":", so it can meet no other origin's id.
      if (!isGitHubLogin(login)) throw new Unauthenticated('GitHub answered a login that is not a GitHub login; sign-in refused');
      return { userId: login, groups: [] };
    },
  };
}
