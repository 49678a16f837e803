/**
 * OAuth state survives a restart (issue 12: codes, refresh-token families and registered clients belong in the
 * durable store): a client registered and signed in before pds restarts refreshes its token after, and a refresh
 * token used before the restart is still known as used.
 */
import * as oidc from 'openid-client';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDexFixture, type DexFixture } from '../fixtures/dex.js';
import { Browser } from '../helpers/browser.js';
import { freePort } from '../fixtures/free-port.js';
import { startTestServer } from '../helpers/server.js';

let dex: DexFixture;
let dataDir: string;

beforeAll(async () => {
  dex = await startDexFixture('pds');
  dex.setClientSecret('dex-secret');
  dex.addUser('alice', 'pw', { email: 'alice@example.com', email_verified: true });
  dataDir = await mkdtemp(path.join(tmpdir(), 'pds-oauth-restart-'));
});

afterAll(async () => {
  await dex?.close();
  await rm(dataDir, { recursive: true, force: true });
});

describe('OAuth state across a restart', () => {
  it('keeps registered clients and refresh-token families', async () => {
    const port = await freePort();
    const env = {
      PORT: String(port),
      PDS_BASE_URL: `http://127.0.0.1:${port}`,
      PDS_DATA_DIR: dataDir,
      PDS_AUTH_URL: dex.url,
      PDS_OIDC_AUDIENCE: 'pds',
      PDS_OIDC_CLIENT_SECRET: 'dex-secret',
    };
    let pds = await startTestServer(env);
    const redirect = 'http://127.0.0.1:40123/cb';
    const registered = await oidc.dynamicClientRegistration(
      new URL(env.PDS_BASE_URL),
      { redirect_uris: [redirect], token_endpoint_auth_method: 'none', client_name: 'restart test' },
      oidc.None(),
      { execute: [oidc.allowInsecureRequests] },
    );
    const verifier = oidc.randomPKCECodeVerifier();
    const request = oidc.buildAuthorizationUrl(registered, {
      redirect_uri: redirect,
      scope: 'pds:read',
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state: 's',
    });
    const browser = new Browser((u) => u.href.startsWith(redirect));
    let page = await browser.open(request.href);
    page = await browser.submit(page, { login: 'alice', password: 'pw' });
    page = await browser.submit(page);
    const first = await oidc.authorizationCodeGrant(registered, new URL(page.url), { pkceCodeVerifier: verifier, expectedState: 's' });
    const second = await oidc.refreshTokenGrant(registered, first.refresh_token!);
    await pds.close();

    pds = await startTestServer(env);
    try {
      const client = await oidc.discovery(new URL(env.PDS_BASE_URL), registered.clientMetadata().client_id, undefined, oidc.None(), { execute: [oidc.allowInsecureRequests] });
      const third = await oidc.refreshTokenGrant(client, second.refresh_token!);
      expect(third.access_token).toEqual(expect.any(String));
      // The first refresh token was used before the restart: presenting it now revokes the family.
      await expect(oidc.refreshTokenGrant(client, first.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
      await expect(oidc.refreshTokenGrant(client, third.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
    } finally {
      await pds.close();
    }
  });
});
