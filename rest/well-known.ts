/**
 * OAuth 2.0 Protected Resource Metadata (RFC 9728) at `/.well-known/oauth-protected-resource` and
 * `/.well-known/oauth-protected-resource/mcp`: tells MCP clients (MCP authorization spec, 2025-06-18) that pds is a
 * protected resource, which authorization server issues its tokens, and how to present them. Every 401 points here
 * through `WWW-Authenticate: Bearer …, resource_metadata="…"` (`auth/authenticate.ts`).
 */
import type Router from '@koa/router';
import { createRouter } from './router.js';
import type { Config } from '../config.js';

/** The RFC 9728 §2 fields pds publishes. */
export interface ProtectedResourceMetadata {
  resource: string;
  authorization_servers: string[];
  bearer_methods_supported: ['header'];
  scopes_supported?: string[];
  resource_name: string;
  resource_documentation: string;
}

/** Path of the metadata document; append a resource path (`/mcp`) per RFC 9728 §3.1. */
export const PROTECTED_RESOURCE_PATH = '/.well-known/oauth-protected-resource';

/**
 * The metadata document.
 * @param resourcePath the protected resource's path below the base URL: `''` for pds as a whole, `'/mcp'` for the MCP
 *   endpoint. `resource` must equal the URL the client derived the metadata URL from (RFC 9728 §3.3).
 * @returns `authorization_servers` = `[{PDS_AUTH_URL}/api/dex]` (Dex, the issuer of external tokens) when
 *   configured, else `[PDS_BASE_URL]` (pds, the issuer of self-issued tokens).
 * @example protectedResourceMetadata(config, '/mcp').resource // 'https://pds.example.com/mcp'
 */
export function protectedResourceMetadata(config: Pick<Config, 'baseUrl' | 'authUrl'>, resourcePath = ''): ProtectedResourceMetadata {
  const dex = config.authUrl ? `${config.authUrl}/api/dex` : undefined;
  return {
    resource: config.baseUrl + resourcePath,
    authorization_servers: [dex ?? config.baseUrl],
    bearer_methods_supported: ['header'],
    // The scopes Dex needs to put email and groups (user id, admin groups) in the token.
    ...(dex ? { scopes_supported: ['openid', 'email', 'profile', 'groups'] } : {}),
    resource_name: 'pds (Platform Deployment Service)',
    resource_documentation: `${config.baseUrl}/docs`,
  };
}

/**
 * A router answering `GET`/`HEAD` on both metadata paths, without authentication (pass it to `createRestApp` as a
 * public route). Cacheable for an hour and readable cross-origin (browser-based MCP clients fetch it).
 * @example createRestApp({ …, publicRoutes: [wellKnownRouter(config)] });
 */
export function wellKnownRouter(config: Pick<Config, 'baseUrl' | 'authUrl'>): Router {
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
