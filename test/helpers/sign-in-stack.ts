/**
 * A pds with both sign-in upstreams configured — the Dex stand-in (`test/fixtures/dex.ts`, client secret `dex-secret`)
 * and the GitHub OAuth app stand-in (`test/fixtures/github-api.ts`, app `Iv1.pds`) — and openid-client's view of pds's
 * authorization server for the public client `pds-cli`. For suites that walk the sign-in as a browser does.
 */
import * as oidc from 'openid-client';
import { startDexFixture, type DexFixture } from '../fixtures/dex.js';
import { startGitHubFixture, type GitHubFixture } from '../fixtures/github-api.js';
import { startTestServer, type TestServer } from './server.js';

export interface SignInStack {
  dex: DexFixture;
  github: GitHubFixture;
  pds: TestServer;
  /** pds's authorization server as the public client `pds-cli` sees it (plain http allowed: loopback). */
  as: oidc.Configuration;
  stop(): Promise<void>;
}

/** Start Dex, GitHub and a pds signing in through both; add the stand-ins' users before or after. */
export async function startSignInStack(): Promise<SignInStack> {
  const dex = await startDexFixture('pds');
  dex.setClientSecret('dex-secret');
  const github = await startGitHubFixture();
  github.setOAuthApp('Iv1.pds', 'gh-secret');
  const pds = await startTestServer({
    PDS_AUTH_URL: dex.url,
    PDS_OIDC_AUDIENCE: 'pds',
    PDS_OIDC_CLIENT_SECRET: 'dex-secret',
    PDS_GITHUB_API_URL: github.url,
    PDS_GITHUB_OAUTH_URL: github.url,
    PDS_GITHUB_OAUTH_CLIENT_ID: 'Iv1.pds',
    PDS_GITHUB_OAUTH_CLIENT_SECRET: 'gh-secret',
  });
  const as = await oidc.discovery(new URL(pds.config.baseUrl), 'pds-cli', undefined, oidc.None(), { execute: [oidc.allowInsecureRequests] });
  return {
    dex,
    github,
    pds,
    as,
    async stop() {
      await pds.stop();
      await dex.close();
      await github.close();
    },
  };
}
