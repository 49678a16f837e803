/**
 * pds's OAuth authorization server (issue 12 section 1) driven by openid-client, a certified relying-party library
 * nobody here wrote: metadata, the code flow with PKCE S256 for the built-in native client (loopback, any port), a
 * Client ID Metadata Document client, refresh rotation and family revocation, and the refusals — wrong redirect URI,
 * missing or plain PKCE, code replay, refresh replay, expired code, a token for another resource, a scope too small
 * (REST and the MCP edge). The person signs in at the Dex fixture's form and consents on pds's page.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as oidc from 'openid-client';
import { SignJWT, decodeJwt } from 'jose';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadOrCreateSecret } from '../../auth/self-issued.js';
import { startDexFixture, type DexFixture } from '../fixtures/dex.js';
import { Browser } from '../helpers/browser.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const CLIENT_HOST = 'mcp-client.test';
let dex: DexFixture;
let pds: TestServer;
let as: oidc.Configuration;
let cimdServer: Server;
let cimdUrl: string;

/** The injected fetch: `https://mcp-client.test/…` (a client's metadata document) is served by a local server. */
const clientHostFetch: typeof fetch = (input, init) => {
  const url = new URL(input instanceof Request ? input.url : String(input));
  if (url.hostname === CLIENT_HOST) return fetch(`${cimdUrl}${url.pathname}`, init);
  return fetch(input, init);
};

beforeAll(async () => {
  dex = await startDexFixture('pds');
  dex.setClientSecret('dex-secret');
  dex.addUser('alice', 'pw', { email: 'alice@example.com', email_verified: true });
  cimdServer = createServer((req, res) => {
    if (req.url !== '/client.json') return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({
      client_id: `https://${CLIENT_HOST}/client.json`,
      client_name: 'Metadata Document Client',
      redirect_uris: ['http://127.0.0.1:7/cimd/callback'],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      application_type: 'native',
    }));
  });
  await new Promise<void>((resolve) => cimdServer.listen(0, '127.0.0.1', resolve));
  cimdUrl = `http://127.0.0.1:${(cimdServer.address() as AddressInfo).port}`;
  pds = await startTestServer(
    { PDS_AUTH_URL: dex.url, PDS_OIDC_AUDIENCE: 'pds', PDS_OIDC_CLIENT_SECRET: 'dex-secret' },
    { oauthFetch: clientHostFetch },
  );
  as = await oidc.discovery(new URL(pds.config.baseUrl), 'pds-cli', undefined, oidc.None(), { execute: [oidc.allowInsecureRequests] });
});

afterAll(async () => {
  await pds?.stop();
  await dex?.close();
  cimdServer?.close();
});

afterEach(() => {
  vi.useRealTimers();
});

const CLI_REDIRECT = 'http://127.0.0.1:53682/callback';

/** Authorize in a browser (sign in at Dex, allow) and return where the client was sent. */
async function authorize(params: Record<string, string>, configuration = as): Promise<{ url: URL; verifier: string }> {
  const verifier = oidc.randomPKCECodeVerifier();
  const url = oidc.buildAuthorizationUrl(configuration, {
    redirect_uri: CLI_REDIRECT,
    scope: 'pds:read pds:write',
    resource: pds.config.baseUrl,
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state: 'st',
    ...params,
  });
  const redirectUri = params.redirect_uri ?? CLI_REDIRECT;
  const browser = new Browser((u) => u.href.startsWith(redirectUri.replace(/:\d+/, '')) || u.href.startsWith(redirectUri));
  let page = await browser.open(url.href);
  if (page.url.startsWith(`${dex.issuer}/auth`)) page = await browser.submit(page, { login: 'alice', password: 'pw' });
  if (page.status === 200 && page.body.includes('<title>Allow access')) page = await browser.submit(page);
  return { url: new URL(page.url || "about:blank"), verifier };
}

async function codeFlow(params: Record<string, string> = {}) {
  const { url, verifier } = await authorize(params);
  return oidc.authorizationCodeGrant(as, url, { pkceCodeVerifier: verifier, expectedState: 'st' }, params.resource === undefined ? { resource: pds.config.baseUrl } : { resource: params.resource });
}

/** The OAuth `error` of a rejected openid-client call. */
async function oauthError(promise: Promise<unknown>): Promise<string | undefined> {
  try {
    await promise;
  } catch (err) {
    return (err as { error?: string }).error ?? (err as { code?: string }).code;
  }
  return undefined;
}

describe('metadata', () => {
  it('publishes RFC 8414 metadata with S256 only, registration and CIMD; RFC 9728 points at it', async () => {
    const meta = as.serverMetadata();
    expect(meta.issuer).toBe(pds.config.baseUrl);
    expect(meta.code_challenge_methods_supported).toEqual(['S256']);
    expect(meta.registration_endpoint).toBe(`${pds.config.baseUrl}/oauth/register`);
    expect(meta.client_id_metadata_document_supported).toBe(true);
    expect(meta.scopes_supported).toEqual(expect.arrayContaining(['pds:read', 'pds:write', 'pds:admin']));
    const prm = await (await fetch(`${pds.url}/.well-known/oauth-protected-resource/mcp`)).json();
    expect(prm).toMatchObject({ resource: `${pds.config.baseUrl}/mcp`, authorization_servers: [pds.config.baseUrl] });
  });
});

describe('authorization code with PKCE (openid-client, the pds-cli native client)', () => {
  it('issues a short-lived HS256 token for the resource asked, that pds accepts, to a loopback redirect on any port', async () => {
    const tokens = await codeFlow();
    const claims = decodeJwt(tokens.access_token);
    expect(claims).toMatchObject({ iss: pds.config.baseUrl, aud: pds.config.baseUrl, sub: 'alice@example.com', client_id: 'pds-cli', scope: 'pds:read pds:write' });
    expect(tokens.expires_in).toBe(600);
    const me = await fetch(`${pds.url}/api/v1/audit`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
    expect(me.status).toBe(200);
  });

  it('rotates refresh tokens, and a replayed one revokes the whole family', async () => {
    const first = await codeFlow();
    const second = await oidc.refreshTokenGrant(as, first.refresh_token!);
    expect(second.refresh_token).not.toBe(first.refresh_token);
    expect(decodeJwt(second.access_token).sub).toBe('alice@example.com');
    expect(await oauthError(oidc.refreshTokenGrant(as, first.refresh_token!))).toBe('invalid_grant');
    // The family is gone: the newest refresh token no longer works either.
    expect(await oauthError(oidc.refreshTokenGrant(as, second.refresh_token!))).toBe('invalid_grant');
  });

  it('refuses a replayed code', async () => {
    const { url, verifier } = await authorize({});
    await oidc.authorizationCodeGrant(as, url, { pkceCodeVerifier: verifier, expectedState: 'st' }, { resource: pds.config.baseUrl });
    expect(await oauthError(oidc.authorizationCodeGrant(as, url, { pkceCodeVerifier: verifier, expectedState: 'st' }, { resource: pds.config.baseUrl }))).toBe('invalid_grant');
  });

  it('refuses an expired code (60 s)', async () => {
    const { url, verifier } = await authorize({});
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now() + 61_000);
    expect(await oauthError(oidc.authorizationCodeGrant(as, url, { pkceCodeVerifier: verifier, expectedState: 'st' }, { resource: pds.config.baseUrl }))).toBe('invalid_grant');
  });

  it('refuses a wrong PKCE verifier', async () => {
    const { url } = await authorize({});
    expect(await oauthError(oidc.authorizationCodeGrant(as, url, { pkceCodeVerifier: oidc.randomPKCECodeVerifier(), expectedState: 'st' }, { resource: pds.config.baseUrl }))).toBe('invalid_grant');
  });

  it('refuses an authorization request without PKCE, or with plain PKCE', async () => {
    const url = (extra: Record<string, string>) => {
      const u = oidc.buildAuthorizationUrl(as, { redirect_uri: CLI_REDIRECT, scope: 'pds:read', state: 'st', ...extra });
      return u;
    };
    for (const request of [url({}), url({ code_challenge: 'x'.repeat(43), code_challenge_method: 'plain' })]) {
      const res = await fetch(request, { redirect: 'manual' });
      const back = new URL(res.headers.get('location')!);
      expect(back.href.startsWith(CLI_REDIRECT)).toBe(true);
      expect(back.searchParams.get('error')).toBe('invalid_request');
    }
  });

  it('refuses a redirect URI that is not registered, without redirecting to it', async () => {
    for (const redirect of ['http://127.0.0.1:53682/elsewhere', 'http://evil.example/callback']) {
      const request = oidc.buildAuthorizationUrl(as, { redirect_uri: redirect, scope: 'pds:read', code_challenge: 'x'.repeat(43), code_challenge_method: 'S256' });
      const res = await fetch(request, { redirect: 'manual' });
      expect(res.status).toBe(400);
      expect(res.headers.get('location')).toBeNull();
      expect(await res.text()).toContain('redirect_uri');
    }
  });

  it('refuses a token for another resource: at the authorization server, and at pds', async () => {
    const { url } = await authorize({ resource: 'https://other.example.com' });
    expect(url.searchParams.get('error')).toBe('invalid_target');
    const secret = await loadOrCreateSecret(undefined, pds.dataDir);
    const foreign = await new SignJWT({ scope: 'pds:read' })
      .setProtectedHeader({ alg: 'HS256' })
      .setIssuer(pds.config.baseUrl)
      .setAudience('https://other.example.com')
      .setSubject('alice@example.com')
      .setExpirationTime('5m')
      .sign(secret);
    const res = await fetch(`${pds.url}/api/v1/audit`, { headers: { authorization: `Bearer ${foreign}` } });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toContain('error="invalid_token"');
  });
});

describe('scopes', () => {
  it('a pds:read token reads but gets 403 insufficient_scope for a write, over REST and at the MCP edge', async () => {
    const tokens = await codeFlow({ scope: 'pds:read' });
    const headers = { authorization: `Bearer ${tokens.access_token}`, 'content-type': 'application/json' };
    expect((await fetch(`${pds.url}/api/v1/services`, { headers })).status).toBe(200);

    const rest = await fetch(`${pds.url}/api/v1/operations/preview-deploy/execute`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ team_name: 'acme', component_name: 'web', image_tag: '1.0.0', ttl_hours: '1' }),
    });
    expect(rest.status).toBe(403);
    expect(rest.headers.get('www-authenticate')).toMatch(/^Bearer .*error="insufficient_scope", scope="pds:write"/);

    const call = (name: string, args: object) =>
      fetch(`${pds.url}/mcp?toolsets=all`, {
        method: 'POST',
        headers: { ...headers, accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
      });
    const mcp = await call('platform_create_tenant', { team_name: 'newteam' });
    expect(mcp.status).toBe(403);
    expect(mcp.headers.get('www-authenticate')).toContain('scope="pds:write pds:admin"');
    expect(mcp.headers.get('www-authenticate')).toContain(`resource_metadata="${pds.config.baseUrl}/.well-known/oauth-protected-resource/mcp"`);
    // The generic tool is checked as the operation it names.
    const generic = await call('platform_execute_operation', { name: 'preview-deploy', parameters: {} });
    expect(generic.status).toBe(403);
  });

  it('pds:write without pds:admin cannot create a tenant even for a platform admin; a token without scope can', async () => {
    const tokens = await codeFlow({ scope: 'pds:read pds:write' });
    const create = (token: string) =>
      fetch(`${pds.url}/api/v1/operations/create-tenant/execute`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ team_name: 'scoped' }),
      });
    const refused = await create(tokens.access_token);
    expect(refused.status).toBe(403);
    expect(refused.headers.get('www-authenticate')).toContain('scope="pds:write pds:admin"');
    expect((await create(await pds.token('root'))).status).toBe(200);
  });
});

describe('Client ID Metadata Documents', () => {
  it('signs in a client whose client_id is the URL of its metadata, redirect URIs from the document', async () => {
    const clientId = `https://${CLIENT_HOST}/client.json`;
    const cimd = await oidc.discovery(new URL(pds.config.baseUrl), clientId, undefined, oidc.None(), { execute: [oidc.allowInsecureRequests] });
    const verifier = oidc.randomPKCECodeVerifier();
    const redirect = 'http://127.0.0.1:7/cimd/callback';
    const request = oidc.buildAuthorizationUrl(cimd, {
      redirect_uri: redirect,
      scope: 'pds:read',
      resource: `${pds.config.baseUrl}/mcp`,
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state: 's',
    });
    const browser = new Browser((u) => u.href.startsWith(redirect));
    let page = await browser.open(request.href);
    page = await browser.submit(page, { login: 'alice', password: 'pw' });
    expect(page.body).toContain('Metadata Document Client');
    page = await browser.submit(page);
    const tokens = await oidc.authorizationCodeGrant(cimd, new URL(page.url), { pkceCodeVerifier: verifier, expectedState: 's' }, { resource: `${pds.config.baseUrl}/mcp` });
    expect(decodeJwt(tokens.access_token)).toMatchObject({ client_id: clientId, aud: `${pds.config.baseUrl}/mcp`, scope: 'pds:read' });
  });
});
