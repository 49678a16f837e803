/**
 * Issue 12 "Done when": an MCP client with no token connects to pds's MCP endpoint, is sent through sign-in and lists
 * tools — driven by the MCP SDK's own OAuth support (discovery from the 401's `resource_metadata` → RFC 8414
 * metadata → Dynamic Client Registration → PKCE S256 authorization → code exchange → `tools/list`), with the person
 * signing in at the Dex fixture's login form and allowing the client on pds's consent page, both submitted by a
 * browser the test drives.
 */
import { Client, StreamableHTTPClientTransport, UnauthorizedError, type OAuthClientProvider } from '@modelcontextprotocol/client';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDexFixture, type DexFixture } from '../fixtures/dex.js';
import { Browser, type Page } from '../helpers/browser.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

/** Where the MCP client would listen for the redirect; the browser stops there and hands the URL to the client. */
const REDIRECT = 'http://127.0.0.1:1/mcp-client/callback';

/** An OAuth client provider that keeps everything in memory (what an IDE keeps in its settings). */
export class MemoryOAuthProvider implements OAuthClientProvider {
  client?: any;
  saved?: any;
  verifier = '';
  authorizationUrl?: URL;
  constructor(readonly clientMetadata: any = {
    client_name: 'pds test MCP client',
    redirect_uris: [REDIRECT],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
  }) {}
  get redirectUrl() {
    return REDIRECT;
  }
  clientInformation() {
    return this.client;
  }
  saveClientInformation(info: any) {
    this.client = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: any) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
}

let dex: DexFixture;
let pds: TestServer;

beforeAll(async () => {
  dex = await startDexFixture('pds');
  dex.setClientSecret('dex-client-secret');
  dex.addUser('alice', 'alice-password', { email: 'alice@example.com', email_verified: true, groups: ['team-a'] });
  pds = await startTestServer({
    PDS_AUTH_URL: dex.url,
    PDS_OIDC_AUDIENCE: 'pds',
    PDS_OIDC_CLIENT_SECRET: 'dex-client-secret',
    PDS_ADMINS: 'alice@example.com',
  });
});

afterAll(async () => {
  await pds?.stop();
  await dex?.close();
});

/** Sign in at Dex and allow the client; returns the consent page seen and the redirect the client gets. */
export async function signInAndAllow(browser: Browser, authorizationUrl: URL, login = 'alice', password = 'alice-password'): Promise<{ consent: Page; redirect: URL }> {
  const loginForm = await browser.open(authorizationUrl.href);
  expect(loginForm.url.startsWith(`${dex.issuer}/auth`)).toBe(true);
  const consent = await browser.submit(loginForm, { login, password });
  expect(consent.status).toBe(200);
  const back = await browser.submit(consent);
  return { consent, redirect: new URL(back.url) };
}

describe('an MCP client with no token (MCP SDK v2 client OAuth support)', () => {
  it('is sent through sign-in at Dex and consent at pds, then lists and calls tools as the signed-in person', async () => {
    const mcpUrl = new URL(`${pds.url}/mcp?toolsets=all`);
    const auth = new MemoryOAuthProvider();
    const first = new Client({ name: 'pds-oauth-test', version: '1.0.0' });
    await expect(first.connect(new StreamableHTTPClientTransport(mcpUrl, { authProvider: auth }))).rejects.toBeInstanceOf(UnauthorizedError);

    // Discovery and registration happened before the redirect: a DCR client id, an S256 challenge, the MCP resource.
    expect(auth.client?.client_id).toEqual(expect.any(String));
    const asked = auth.authorizationUrl!;
    expect(asked.origin + asked.pathname).toBe(`${pds.url}/oauth/authorize`);
    expect(asked.searchParams.get('code_challenge_method')).toBe('S256');
    expect(asked.searchParams.get('resource')).toBe(`${pds.config.baseUrl}/mcp`);
    // The 401 challenge's scope (admin comes by step-up), plus offline_access, which the SDK adds for a refresh token.
    expect(asked.searchParams.get('scope')!.split(' ').sort()).toEqual(['offline_access', 'pds:read', 'pds:write']);

    const browser = new Browser((url) => url.href.startsWith(REDIRECT));
    const { consent, redirect } = await signInAndAllow(browser, asked);
    // The consent page names the client and each scope it asks for.
    expect(consent.body).toContain('pds test MCP client');
    expect(consent.body).toContain('pds:read');
    expect(consent.body).toContain('pds:write');
    expect(consent.body).not.toContain('pds:admin');
    expect(redirect.searchParams.get('code')).toEqual(expect.any(String));

    const transport = new StreamableHTTPClientTransport(mcpUrl, { authProvider: auth });
    await transport.finishAuth(redirect.searchParams);
    const claims = decodeJwt(auth.saved.access_token);
    expect(claims).toMatchObject({ iss: pds.config.baseUrl, aud: `${pds.config.baseUrl}/mcp`, sub: 'alice@example.com', groups: ['team-a'] });
    expect(String(claims.scope).split(' ').sort()).toEqual(['pds:read', 'pds:write']);
    expect(claims.exp! - claims.iat!).toBe(600);
    expect(auth.saved.refresh_token).toEqual(expect.any(String));

    const client = new Client({ name: 'pds-oauth-test', version: '1.0.0' });
    await client.connect(transport);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toContain('platform_list_services');
    const listed = await client.callTool({ name: 'platform_list_services', arguments: {} });
    expect(listed.isError).toBeFalsy();
    await client.close();
  });
});
