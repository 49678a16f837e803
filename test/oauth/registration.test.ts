/**
 * Dynamic client registration is bounded (issue 17 items 7 and 10): metadata larger than the cap is refused, an
 * `http://` redirect URI off the loopback is refused, and a registered client expires 30 days after its last use (an
 * authorization or a token request), which each use extends. The clock is the database's: the test moves a client's
 * expiry in pds's own SQLite file as the passing days would, and drives the flow through openid-client and the Dex
 * stand-in. The daily registration budget is in `test/limits/auth-failures.test.ts`.
 */
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import * as oidc from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLIENT_IDLE_TTL, CLIENT_METADATA_MAX_BYTES } from '../../auth/oauth/registration.js';
import { startDexFixture, type DexFixture } from '../fixtures/dex.js';
import { Browser } from '../helpers/browser.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { until } from '../helpers/until.js';

let dex: DexFixture;
let pds: TestServer;
let db: BetterSqlite3.Database;
const REDIRECT = 'http://127.0.0.1:9/registered/callback';
const DAY_MS = 86_400_000;

beforeAll(async () => {
  dex = await startDexFixture('pds');
  dex.setClientSecret('dex-secret');
  dex.addUser('alice', 'pw', { email: 'alice@example.com', email_verified: true });
  pds = await startTestServer({ PDS_AUTH_URL: dex.url, PDS_OIDC_AUDIENCE: 'pds', PDS_OIDC_CLIENT_SECRET: 'dex-secret' });
  db = new BetterSqlite3(path.join(pds.dataDir, 'pds.db'));
});

afterAll(async () => {
  db?.close();
  await pds?.stop();
  await dex?.close();
});

async function register(metadata: Record<string, unknown>) {
  const res = await fetch(`${pds.url}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ token_endpoint_auth_method: 'none', grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], ...metadata }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
}

const expiresAt = (clientId: string) =>
  (db.prepare("SELECT expires_at FROM oauth_records WHERE kind = 'Client' AND id = ?").get(clientId) as { expires_at: number | null } | undefined)?.expires_at;
const setExpiresAt = (clientId: string, at: number) => db.prepare("UPDATE oauth_records SET expires_at = ? WHERE kind = 'Client' AND id = ?").run(at, clientId);

describe('what a registration may hold', () => {
  it(`refuses metadata over ${CLIENT_METADATA_MAX_BYTES} bytes with invalid_client_metadata, and stores nothing`, async () => {
    const big = await register({ client_name: 'x'.repeat(CLIENT_METADATA_MAX_BYTES), redirect_uris: [REDIRECT] });
    expect(big.status).toBe(400);
    expect(big.body).toMatchObject({ error: 'invalid_client_metadata', error_description: expect.stringContaining(`at most ${CLIENT_METADATA_MAX_BYTES}`) });
    expect(big.body.client_id).toBeUndefined();
    const count = () => (db.prepare("SELECT count(*) AS n FROM oauth_records WHERE kind = 'Client'").get() as { n: number }).n;
    const before = count();
    await register({ client_name: 'y'.repeat(CLIENT_METADATA_MAX_BYTES), redirect_uris: [REDIRECT] });
    expect(count()).toBe(before);
    expect((await register({ client_name: 'just right', redirect_uris: [REDIRECT] })).status).toBe(201);
  });

  it('refuses an http:// redirect URI off the loopback, for web and native clients alike (RFC 8252)', async () => {
    for (const uri of ['http://app.example/cb', 'http://10.0.0.5/cb', 'http://127.0.0.1.nip.io/cb', 'http://[::2]/cb']) {
      for (const application_type of ['web', 'native']) {
        const refused = await register({ client_name: 'plain http', application_type, redirect_uris: ['https://app.example/ok', uri] });
        expect(refused.status, `${application_type} ${uri}`).toBe(400);
        expect(refused.body).toMatchObject({ error: 'invalid_redirect_uri', error_description: expect.stringContaining('https://') });
      }
    }
    for (const uri of ['https://app.example/cb', 'http://127.0.0.1:8123/cb', 'http://[::1]:8123/cb', 'http://localhost:8123/cb']) {
      const registered = await register({ client_name: 'allowed', redirect_uris: [uri] });
      expect(registered.status, uri).toBe(201);
    }
  });

  it('issues no registration access token (registration management is not served)', async () => {
    const registered = await register({ client_name: 'no rat', redirect_uris: [REDIRECT] });
    expect(registered.status).toBe(201);
    expect(registered.body.registration_access_token).toBeUndefined();
  });
});

describe('a registered client expires 30 days after its last use', () => {
  it('is kept 30 days from registration, extended by each authorization and token request, and unknown once expired', async () => {
    const registered = await register({ client_name: 'expiring client', redirect_uris: [REDIRECT] });
    expect(registered.status).toBe(201);
    const clientId = String(registered.body.client_id);
    const fresh = () => Date.now() + CLIENT_IDLE_TTL * 1000;
    expect(expiresAt(clientId)).toBeGreaterThan(fresh() - 60_000);
    expect(expiresAt(clientId)).toBeLessThanOrEqual(fresh());

    // 29 days unused: one day left. A sign-in and a token request are uses: 30 days again.
    setExpiresAt(clientId, Date.now() + DAY_MS);
    const as = await oidc.discovery(new URL(pds.config.baseUrl), clientId, undefined, oidc.None(), { execute: [oidc.allowInsecureRequests] });
    const verifier = oidc.randomPKCECodeVerifier();
    const url = oidc.buildAuthorizationUrl(as, {
      redirect_uri: REDIRECT,
      scope: 'pds:read',
      resource: pds.config.baseUrl,
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state: 'st',
    });
    const browser = new Browser((u) => u.href.startsWith(REDIRECT));
    let page = await browser.open(url.href);
    page = await browser.submit(page, { login: 'alice', password: 'pw' });
    page = await browser.submit(page);
    expect(page.url.startsWith(REDIRECT)).toBe(true);
    await until('the authorization to extend the client', () => (expiresAt(clientId) ?? 0) > Date.now() + 29 * DAY_MS, 5);

    setExpiresAt(clientId, Date.now() + DAY_MS);
    const tokens = await oidc.authorizationCodeGrant(as, new URL(page.url), { pkceCodeVerifier: verifier, expectedState: 'st' }, { resource: pds.config.baseUrl });
    expect(tokens.access_token).toBeTruthy();
    await until('the token request to extend the client', () => (expiresAt(clientId) ?? 0) > Date.now() + 29 * DAY_MS, 5);

    // Looking the client up is not use: an authorize request that goes nowhere leaves the expiry alone.
    setExpiresAt(clientId, Date.now() + DAY_MS);
    await fetch(url.href, { redirect: 'manual', headers: { accept: 'application/json' } });
    expect(expiresAt(clientId)).toBeLessThan(Date.now() + 2 * DAY_MS);

    // 30 days unused: gone. Its client_id is unknown at the authorization and token endpoints.
    setExpiresAt(clientId, Date.now() - 1);
    const authorize = await fetch(url.href, { redirect: 'manual', headers: { accept: 'application/json' } });
    expect(authorize.status).toBe(400);
    expect((await authorize.json()).error).toBe('invalid_client');
    const refresh = await fetch(`${pds.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token!, client_id: clientId }),
    });
    expect(refresh.status).toBe(401);
    expect((await refresh.json()).error).toBe('invalid_client');
  });
});
