/**
 * Which authorization server MCP clients are sent to (RFC 9728 `authorization_servers`, the 401 challenge): pds itself,
 * which signs people in upstream and issues its own scoped tokens (issue 12), unless the only thing configured is a
 * Dex to take tokens from directly (`PDS_AUTH_URL` without `PDS_OIDC_CLIENT_SECRET` and without a GitHub OAuth app),
 * the arrangement of earlier versions, kept so such a deployment goes on working unchanged.
 */
import type { Config } from '../../config.js';

/** The authorization server's issuer, and whether it is pds (then its tokens carry pds scopes). */
export interface AuthorizationServerChoice {
  issuer: string;
  pds: boolean;
}

/**
 * @example authorizationServerOf(config) // { issuer: 'https://pds.example.com', pds: true }
 */
export function authorizationServerOf(config: Pick<Config, 'baseUrl' | 'authUrl' | 'signIn'>): AuthorizationServerChoice {
  const signsIn = Boolean(config.signIn.dex || config.signIn.github);
  if (config.authUrl && !signsIn) return { issuer: `${config.authUrl}/api/dex`, pds: false };
  return { issuer: config.baseUrl, pds: true };
}
