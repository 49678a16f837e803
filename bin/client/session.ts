/**
 * Which pds the command talks to and with which token:
 *
 * - server: `--server`, else `PDS_BASE_URL`, else the stored sign-in's, else `http://localhost:8080`;
 * - token: `PDS_TOKEN`, else the stored access token when it was issued by that server — refreshed with the stored
 *   refresh token (openid-client, rotation kept) when it has expired or is refused.
 *
 * The OAuth client is pds's built-in native client `pds-cli` (`auth/oauth/provider.ts`).
 */
import * as oidc from 'openid-client';
import { CliError, EXIT } from './errors.js';
import { readConfig, writeConfig, type StoredConfig } from './config-file.js';

/** The built-in native client of `pds login` (see `auth/oauth/provider.ts` `CLI_CLIENT_ID`). */
export const CLI_CLIENT_ID = 'pds-cli';
/** Scopes `pds login` asks for unless `--scope` says otherwise. */
export const LOGIN_SCOPES = 'pds:read pds:write';
const DEFAULT_SERVER = 'http://localhost:8080';
/** Refresh this long before expiry, seconds. */
const EXPIRY_MARGIN = 30;

/** `--server` as given, normalized (no trailing slash). @throws CliError (usage) for a value that is not an http(s) URL. */
export function serverUrl(flag: string | undefined, stored?: StoredConfig): string {
  const value = flag || process.env.PDS_BASE_URL || stored?.server || DEFAULT_SERVER;
  if (!URL.canParse(value) || !/^https?:$/.test(new URL(value).protocol)) {
    throw new CliError(`--server must be an http(s) URL such as https://pds.example.com (got "${value}")`, EXIT.usage);
  }
  return value.replace(/\/+$/, '');
}

/** The authorization server's configuration for `pds-cli` (RFC 8414 discovery at the server). */
export async function authorizationServer(server: string): Promise<oidc.Configuration> {
  try {
    return await oidc.discovery(new URL(server), CLI_CLIENT_ID, undefined, oidc.None(), {
      timeout: 10,
      ...(server.startsWith('http:') && { execute: [oidc.allowInsecureRequests] }),
    });
  } catch (err) {
    throw new CliError(`cannot reach the sign-in of ${server}: ${(err as Error).message}`);
  }
}

/** Store a token response as the sign-in to `server`. */
export async function saveTokens(server: string, tokens: oidc.TokenEndpointResponse): Promise<StoredConfig> {
  const config: StoredConfig = {
    server,
    accessToken: tokens.access_token,
    refreshToken: tokens.refresh_token,
    expiresAt: tokens.expires_in ? Math.floor(Date.now() / 1000) + tokens.expires_in : undefined,
  };
  await writeConfig(config);
  return config;
}

/** What a command calls the API with. */
export interface Session {
  server: string;
  /** The bearer token (for `PDS_TOKEN`, used as it is). */
  token(): Promise<string>;
  /** After a 401: get a new access token if a refresh token allows it; false when it does not. */
  renew(): Promise<boolean>;
}

/**
 * @param flag `--server`.
 * @throws CliError (exit 3) from `token()` when there is no token for the server.
 */
export async function openSession(flag?: string): Promise<Session> {
  let stored = await readConfig();
  const server = serverUrl(flag, stored);
  const envToken = process.env.PDS_TOKEN || undefined;
  const mine = () => (stored?.server === server ? stored : undefined);
  const refresh = async (): Promise<boolean> => {
    const current = mine();
    if (!current?.refreshToken) return false;
    try {
      const tokens = await oidc.refreshTokenGrant(await authorizationServer(server), current.refreshToken);
      stored = await saveTokens(server, tokens);
      return true;
    } catch (err) {
      if (err instanceof CliError) throw err;
      return false; // refused (expired, revoked family): the person signs in again
    }
  };
  return {
    server,
    async token() {
      if (envToken) return envToken;
      let current = mine();
      if (current?.accessToken && current.expiresAt !== undefined && current.expiresAt - EXPIRY_MARGIN < Date.now() / 1000) {
        await refresh();
        current = mine();
      }
      if (!current?.accessToken) throw new CliError(`not signed in to ${server}: run "pds login${flag ? ` --server ${server}` : ''}" (or set PDS_TOKEN)`, EXIT.signedOut);
      return current.accessToken;
    },
    renew: () => (envToken ? Promise.resolve(false) : refresh()),
  };
}
