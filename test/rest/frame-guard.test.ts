/**
 * No pds page can be framed (issue 17 item 10): every HTML page pds serves carries
 * `Content-Security-Policy: frame-ancestors 'none'` and `X-Frame-Options: DENY`. The pages are enumerated by walking
 * them as a browser does — `/docs`, and every page of the OAuth server: the sign-in choice, consent, the expired and
 * error messages, and the device flow's input, confirmation and success pages (the last three rendered by
 * oidc-provider itself) — and every response pds sent on the way (redirects and JSON included) is checked.
 */
import * as oidc from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DexFixture } from '../fixtures/dex.js';
import type { GitHubFixture } from '../fixtures/github-api.js';
import { Browser, type Page } from '../helpers/browser.js';
import type { TestServer } from '../helpers/server.js';
import { startSignInStack, type SignInStack } from '../helpers/sign-in-stack.js';

let dex: DexFixture;
let github: GitHubFixture;
let pds: TestServer;
let as: oidc.Configuration;
let stack: SignInStack | undefined;
const REDIRECT = 'http://127.0.0.1:40018/callback';

beforeAll(async () => {
  stack = await startSignInStack();
  ({ dex, github, pds, as } = stack);
  dex.addUser('alice', 'pw', { email: 'alice@example.com', email_verified: true });
});

afterAll(async () => {
  await stack?.stop();
});

const title = (page: Page) => page.body.match(/<title>([^<]*?)(?: · pds)?<\/title>/)?.[1];
const dexLink = (page: Page) => {
  const href = [...page.body.matchAll(/href="([^"]*)"/g)].map((m) => m[1]!.replaceAll('&#x2F;', '/')).find((h) => h.endsWith('/sign-in/dex'));
  return new URL(href!, page.url).href;
};

describe('framing', () => {
  it("sends frame-ancestors 'none' and X-Frame-Options: DENY with every page pds serves", async () => {
    const browser = new Browser((u) => u.href.startsWith(REDIRECT));
    const pages: Page[] = [];
    const see = (page: Page) => (pages.push(page), page);

    see(await browser.open(`${pds.url}/docs`));
    // The code flow: the sign-in choice, Dex, consent.
    const verifier = oidc.randomPKCECodeVerifier();
    const url = oidc.buildAuthorizationUrl(as, {
      redirect_uri: REDIRECT,
      scope: 'pds:read',
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    });
    let page = see(await browser.open(url.href));
    page = await browser.open(dexLink(page));
    page = see(await browser.submit(page, { login: 'alice', password: 'pw' }));
    see(await browser.submit(page));
    // Messages: a sign-in that is not open, an authorization request oidc-provider refuses.
    see(await browser.open(`${pds.url}/oauth/interaction/not-open`));
    see(await browser.open(`${pds.url}/oauth/authorize?client_id=nobody&response_type=code`));
    // The device flow: input, confirmation, consent and success.
    const device = await oidc.initiateDeviceAuthorization(as, { scope: 'pds:read' });
    see(await browser.open(`${pds.url}/oauth/device`));
    page = see(await browser.open(device.verification_uri_complete!)); // oidc-provider's self-submitting form
    page = see(await browser.submit(page));
    // Alice is signed in at pds from the code flow: consent comes next.
    page = see(await browser.submit(page));
    expect(title(page)).toBe('Allow access');
    see(await browser.submit(page));

    expect(pages.map(title)).toEqual(
      expect.arrayContaining(['pds API', 'Sign in', 'Allow access', 'Sign-in expired', 'Sign-in failed', 'Sign in a device', 'Confirm the device', 'Signed in']),
    );
    const fromPds = browser.responses.filter((r) => r.url.startsWith(pds.url));
    expect(fromPds.filter((r) => r.headers.get('content-type')?.startsWith('text/html')).length).toBeGreaterThanOrEqual(9);
    const unguarded = fromPds
      .filter((r) => !(r.headers.get('content-security-policy')?.includes("frame-ancestors 'none'") && r.headers.get('x-frame-options') === 'DENY'))
      .map((r) => `${r.status} ${r.url}`);
    expect(unguarded).toEqual([]);
  });

  it('keeps the directive where a route sets a policy of its own (the icon)', async () => {
    const res = await fetch(`${pds.url}/icon.svg`);
    expect(res.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(res.headers.get('x-frame-options')).toBe('DENY');
  });
});
