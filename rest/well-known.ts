/**
 * OAuth 2.0 Protected Resource Metadata (RFC 9728) at `/.well-known/oauth-protected-resource` and
 * `/.well-known/oauth-protected-resource/mcp`: tells MCP clients (MCP authorization spec, 2025-06-18) that pds is a
 * protected resource, which authorization server issues its tokens, and how to present them. Every 401 points here
 * through `WWW-Authenticate: Bearer …, resource_metadata="…"` (`auth/authenticate.ts`).
 */
import type Router from '@koa/router';
import { createRouter } from './router.js';
import { PROTECTED_RESOURCE_PATH } from '../core/names.js';
import type { Config } from '../config.js';
import { authorizationServerOf } from '../auth/oauth/authorization-server-of.js';
import { SCOPES } from '../auth/scopes.js';

/** The RFC 9728 §2 fields pds publishes. */
export interface ProtectedResourceMetadata {
  resource: string;
  authorization_servers: string[];
  bearer_methods_supported: ['header'];
  scopes_supported?: string[];
  resource_name: string;
  resource_documentation: string;
}


/**
 * The metadata document.
 * @param resourcePath the protected resource's path below the base URL: `''` for pds as a whole, `'/mcp'` for the MCP
 *   endpoint. `resource` must equal the URL the client derived the metadata URL from (RFC 9728 §3.3).
 * @returns `authorization_servers` = `[PDS_BASE_URL]` (pds's authorization server, `auth/oauth/`) with its scopes, or
 *   `[{PDS_AUTH_URL}/api/dex]` when Dex is configured without any upstream sign-in for pds
 *   (`auth/oauth/authorization-server-of.ts`).
 * @example protectedResourceMetadata(config, '/mcp').resource // 'https://pds.example.com/mcp'
 */
export function protectedResourceMetadata(config: Pick<Config, 'baseUrl' | 'authUrl' | 'signIn'>, resourcePath = ''): ProtectedResourceMetadata {
  const server = authorizationServerOf(config);
  return {
    resource: config.baseUrl + resourcePath,
    authorization_servers: [server.issuer],
    bearer_methods_supported: ['header'],
    // pds's scopes; or, for a Dex taken directly, the ones Dex needs to put email and groups in the token.
    scopes_supported: server.pds ? [...SCOPES] : ['openid', 'email', 'profile', 'groups'],
    resource_name: 'pds (Platform Deployment Service)',
    resource_documentation: `${config.baseUrl}/docs`,
  };
}

/**
 * A router answering `GET`/`HEAD` on both metadata paths, without authentication (pass it to `createRestApp` as a
 * public route). Cacheable for an hour and readable cross-origin (browser-based MCP clients fetch it).
 * @example createRestApp({ …, publicRoutes: [wellKnownRouter(config)] });
 */
export function wellKnownRouter(config: Pick<Config, 'baseUrl' | 'authUrl' | 'signIn'>): Router {
  const router = createRouter();
  for (const resourcePath of ['', '/mcp']) {
    const body = JSON.stringify(protectedResourceMetadata(config, resourcePath));
    router.get(PROTECTED_RESOURCE_PATH + resourcePath, (ctx) => {
      ctx.set('Cache-Control', 'public, max-age=3600');
      ctx.set('Access-Control-Allow-Origin', '*');
      ctx.type = 'application/json';
      ctx.body = body;
    });
  }
  return router;
}
