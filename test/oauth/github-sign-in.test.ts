/**
 * Sign-in through a GitHub OAuth app (issue 12): the GitHub stand-in's authorize page and token endpoint (GitHub's wire
 * format, errors as HTTP 200 with `error`), and the user id pds gives: the GitHub login, the same a PAT of that person
 * gives, so their tenant roles follow them from CI to the browser.
 */
import * as oidc from 'openid-client';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGitHubFixture, type GitHubFixture } from '../fixtures/github-api.js';
import { Browser } from '../helpers/browser.js';
import { executeAndWait, startTestServer, type TestServer } from '../helpers/server.js';

let github: GitHubFixture;
let pds: TestServer;
let as: oidc.Configuration;
const REDIRECT = 'http://127.0.0.1:40001/callback';

beforeAll(async () => {
  github = await startGitHubFixture();
  github.setOAuthApp('Iv1.pds', 'gh-secret');
  github.addOAuthUser('octocat');
  github.addToken('ghp_octocatreadusertoken00000000000000', 'octocat', ['read:user']);
  pds = await startTestServer({
    PDS_GITHUB_API_URL: github.url,
    PDS_GITHUB_OAUTH_URL: github.url,
    PDS_GITHUB_OAUTH_CLIENT_ID: 'Iv1.pds',
    PDS_GITHUB_OAUTH_CLIENT_SECRET: 'gh-secret',
  });
  as = await oidc.discovery(new URL(pds.config.baseUrl), 'pds-cli', undefined, oidc.None(), { execute: [oidc.allowInsecureRequests] });
});

afterAll(async () => {
  await pds?.stop();
  await github?.close();
});

async function signIn(login: string) {
  const verifier = oidc.randomPKCECodeVerifier();
  const request = oidc.buildAuthorizationUrl(as, {
    redirect_uri: REDIRECT,
    scope: 'pds:read pds:write',
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state: 's',
  });
  const browser = new Browser((u) => u.href.startsWith(REDIRECT));
  let page = await browser.open(request.href);
  expect(page.url.startsWith(`${github.url}/login/oauth/authorize`)).toBe(true);
  page = await browser.submit(page, { login });
  if (page.body.includes('<title>Allow access')) page = await browser.submit(page);
  return { redirect: new URL(page.url), verifier };
}

describe('sign-in through a GitHub OAuth app', () => {
  it('gives the GitHub login as the user id, the one a PAT of the same person gives', async () => {
    const { redirect, verifier } = await signIn('octocat');
    const tokens = await oidc.authorizationCodeGrant(as, redirect, { pkceCodeVerifier: verifier, expectedState: 's' });
    expect(decodeJwt(tokens.access_token).sub).toBe('octocat');

    // Both forms see the same tenant: root makes octocat a member, and each token reads it.
    await executeAndWait(pds, 'root', 'create-tenant', { team_name: 'octo', members: 'octocat' });
    for (const token of [tokens.access_token, 'ghp_octocatreadusertoken00000000000000']) {
      expect((await fetch(`${pds.url}/api/v1/tenants/octo`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
    }
  });

  it('sends the client an access_denied error when GitHub refuses the code, and issues nothing', async () => {
    github.setOAuthApp('Iv1.pds', 'rotated-secret'); // pds still sends the old secret: GitHub answers an error
    try {
      const { redirect } = await signIn('octocat');
      expect(redirect.href.startsWith(REDIRECT)).toBe(true);
      expect(redirect.searchParams.get('error')).toBe('access_denied');
      expect(redirect.searchParams.get('code')).toBeNull();
    } finally {
      github.setOAuthApp('Iv1.pds', 'gh-secret');
    }
  });
});
