/**
 * Sign-in is bound to the browser that started it (issue 17 item 1). The attack: an attacker starts a sign-in, takes
 * the upstream (Dex or GitHub) URL it produced and sends it to a victim; the victim signs in upstream, and the upstream
 * sends the victim's browser back to pds's callback with the attacker's `state`. pds must not complete the attacker's
 * interaction with the victim's identity: the callback resumes only the interaction whose cookie the calling browser
 * holds. Two cookie jars (two {@link Browser}s) in one test, on both upstreams and on the device flow; then one
 * browser-like client walks the whole flow and every transition is checked.
 */
import * as oidc from 'openid-client';
import { decodeJwt } from 'jose';
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
const REDIRECT = 'http://127.0.0.1:40017/callback';

beforeAll(async () => {
  stack = await startSignInStack();
  ({ dex, github, pds, as } = stack);
  dex.addUser('victim', 'pw', { email: 'victim@example.com', email_verified: true });
  github.addOAuthUser('victimcat');
});

afterAll(async () => {
  await stack?.stop();
});

const UPSTREAMS = {
  dex: { authorize: () => `${dex.issuer}/auth`, signIn: (b: Browser, p: Page) => b.submit(p, { login: 'victim', password: 'pw' }) },
  github: { authorize: () => `${github.url}/login/oauth/authorize`, signIn: (b: Browser, p: Page) => b.submit(p, { login: 'victimcat' }) },
} as const;
type UpstreamName = keyof typeof UPSTREAMS;

/** A browser that stops at the client's redirect URI and, when asked, before leaving pds for an upstream. */
function browser(stopAtUpstream: boolean): Browser {
  return new Browser((u) => u.href.startsWith(REDIRECT) || (stopAtUpstream && !u.href.startsWith(pds.url)));
}

async function authorizationUrl() {
  const verifier = oidc.randomPKCECodeVerifier();
  const url = oidc.buildAuthorizationUrl(as, {
    redirect_uri: REDIRECT,
    scope: 'pds:read pds:write pds:admin',
    resource: pds.config.baseUrl,
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state: 'st',
  });
  return { url, verifier };
}

/** The sign-in page's link to one upstream (mustache escapes `/` in attributes). */
function signInLink(page: Page, name: string): string {
  const hrefs = [...page.body.matchAll(/href="([^"]*)"/g)].map((m) => m[1]!.replaceAll('&#x2F;', '/').replaceAll('&#x3D;', '=').replaceAll('&amp;', '&'));
  const href = hrefs.find((h) => h.endsWith(`/sign-in/${name}`));
  if (!href) throw new Error(`no sign-in link for ${name} on ${page.url}: ${page.body.slice(0, 800)}`);
  return new URL(href, page.url).href;
}

/** Follow a page to its end as the attacker would: through consent if offered. */
async function finish(b: Browser, page: Page): Promise<Page> {
  if (page.status === 200 && page.body.includes('<title>Allow access')) return b.submit(page);
  return page;
}

describe('the upstream callback resumes only the interaction of the browser that holds its cookie', () => {
  for (const name of Object.keys(UPSTREAMS) as UpstreamName[]) {
    it(`an attacker who sends the ${name} sign-in link to a victim gets no token and the victim completes nothing`, async () => {
      const upstream = UPSTREAMS[name];
      const attacker = browser(true);
      const { url, verifier } = await authorizationUrl();
      // The attacker starts a sign-in and stops where pds sends it upstream: that URL is the lure.
      let page = await attacker.open(url.href);
      expect(page.body).toContain('Sign in'); // two upstreams configured: the choice page
      page = await attacker.open(signInLink(page, name));
      expect(page.url.startsWith(upstream.authorize())).toBe(true);
      const lure = page.url;
      const uid = attacker.visited.map((v) => v.match(/\/oauth\/interaction\/([^/?]+)/)?.[1]).find(Boolean)!;

      // The victim opens the lure and signs in upstream; the upstream sends them to pds's callback.
      const victim = browser(false);
      const victimPage = await upstream.signIn(victim, await victim.open(lure));
      expect(victim.visited.some((v) => v.startsWith(`${pds.url}/oauth/callback/${name}?`))).toBe(true);

      // The attacker resumes its authorization with its own cookies: no code comes out, so no token.
      const resumed = await finish(attacker, await attacker.open(`${pds.url}/oauth/authorize/${uid}`));
      const landed = new URL(resumed.url || pds.url);
      const code = landed.href.startsWith(REDIRECT) ? landed.searchParams.get('code') : null;
      const sub = code
        ? decodeJwt((await oidc.authorizationCodeGrant(as, landed, { pkceCodeVerifier: verifier, expectedState: 'st' }, { resource: pds.config.baseUrl })).access_token).sub
        : undefined;
      expect({ code, sub }).toEqual({ code: null, sub: undefined });

      // The victim is told the sign-in is not theirs to finish, and is sent nowhere.
      expect(victimPage.status).toBe(400);
      expect(victimPage.body).toContain('Sign-in expired');
      expect(victim.visited.some((v) => v.startsWith(REDIRECT))).toBe(false);
    });
  }

  it('lets the browser that started the sign-in finish it after a foreign browser tried its callback', async () => {
    // The foreign try consumes nothing: the owner's own callback still completes (and only once).
    const owner = browser(true);
    const { url, verifier } = await authorizationUrl();
    let page = await owner.open(url.href);
    page = await owner.open(signInLink(page, 'dex'));
    // The owner signs in at Dex, but a copy of the callback URL reaches another browser first.
    const dexOnly = new Browser((u) => u.href.startsWith(`${pds.url}/oauth/callback/`));
    const atCallback = await dexOnly.submit(await dexOnly.open(page.url), { login: 'victim', password: 'pw' });
    expect(atCallback.url.startsWith(`${pds.url}/oauth/callback/dex?`)).toBe(true);
    const foreign = await browser(false).open(atCallback.url);
    expect(foreign.status).toBe(400);
    const ownerPage = await finish(owner, await owner.open(atCallback.url));
    const landed = new URL(ownerPage.url);
    expect(landed.href.startsWith(REDIRECT)).toBe(true);
    const tokens = await oidc.authorizationCodeGrant(as, landed, { pkceCodeVerifier: verifier, expectedState: 'st' }, { resource: pds.config.baseUrl });
    expect(decodeJwt(tokens.access_token).sub).toBe('victim@example.com');
    // Replayed in the owner's browser, the callback finds nothing.
    expect((await owner.open(atCallback.url)).status).toBe(400);
  });

  it('binds the device flow the same way: a victim who opens the attacker’s upstream link completes nothing', async () => {
    const device = await oidc.initiateDeviceAuthorization(as, { scope: 'pds:read pds:write pds:admin', resource: pds.config.baseUrl });
    const attacker = browser(true);
    let page = await attacker.open(device.verification_uri_complete ?? `${device.verification_uri}?user_code=${device.user_code}`);
    if (page.body.includes('<form')) page = await attacker.submit(page, { user_code: device.user_code });
    if (page.body.includes('<form') && page.url.startsWith(`${pds.url}/oauth/device`)) page = await attacker.submit(page, {}, { button: { confirm: 'yes' } });
    page = await attacker.open(signInLink(page, 'dex'));
    expect(page.url.startsWith(`${dex.issuer}/auth`)).toBe(true);

    const victim = browser(false);
    const victimPage = await UPSTREAMS.dex.signIn(victim, await victim.open(page.url));
    expect(victimPage.status).toBe(400);
    expect(victimPage.body).toContain('Sign-in expired');

    // The device's poll is still waiting (not approved with the victim's identity).
    const poll = await fetch(`${pds.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'urn:ietf:params:oauth:grant-type:device_code', device_code: device.device_code, client_id: 'pds-cli' }),
    });
    expect(poll.status).toBe(400);
    expect((await poll.json()).error).toBe('authorization_pending');
  });
});

describe('the whole flow in a browser-like client, one transition at a time', () => {
  it('goes authorize → interaction → upstream → callback → consent → code → token, and nowhere else', async () => {
    const person = browser(false);
    const { url, verifier } = await authorizationUrl();
    let page = await person.open(url.href);
    // authorize → the sign-in interaction (a cookie scoped to it) offering the two upstreams
    expect(person.visited).toEqual([url.href, expect.stringMatching(new RegExp(`^${pds.url}/oauth/interaction/[\\w-]+$`))]);
    const signInUid = person.visited[1]!.split('/').pop()!;
    expect(page.status).toBe(200);
    const cookies = await person.jar.getCookies(`${pds.url}/oauth/interaction/${signInUid}`);
    expect(cookies.map((c) => c.key)).toContain('_interaction');
    const link = signInLink(page, 'dex');
    expect(link).toBe(`${pds.url}/oauth/interaction/${signInUid}/sign-in/dex`);

    // interaction → upstream (Dex's authorize endpoint, with pds's callback as redirect_uri) → Dex's login form
    const start = person.visited.length;
    page = await person.open(link);
    const toDex = new URL(person.visited[start + 1]!);
    expect(toDex.href.startsWith(`${dex.issuer}/auth?`)).toBe(true);
    expect(toDex.searchParams.get('redirect_uri')).toBe(`${pds.config.baseUrl}/oauth/callback/dex`);
    const upstreamState = toDex.searchParams.get('state')!;
    expect(upstreamState).toBeTruthy();

    // upstream sign-in → callback (the upstream state) → the interaction's own path, where its cookie is sent →
    // resume → the consent interaction
    const beforeLogin = person.visited.length;
    page = await UPSTREAMS.dex.signIn(person, page);
    const hops = person.visited.slice(beforeLogin).map((v) => new URL(v));
    const paths = hops.map((u) => `${u.origin === pds.url ? '' : u.origin}${u.pathname}`);
    expect(paths).toEqual([
      `${dex.url}/api/dex/auth/local/login`,
      '/oauth/callback/dex',
      `/oauth/interaction/${signInUid}/callback/dex`,
      `/oauth/authorize/${signInUid}`,
      expect.stringMatching(/^\/oauth\/interaction\/[\w-]+$/),
    ]);
    expect(hops[1]!.searchParams.get('state')).toBe(upstreamState);
    const consentUid = paths[4]!.split('/').pop()!;
    expect(consentUid).not.toBe(signInUid);
    expect(page.status).toBe(200);
    expect(page.body).toContain('<title>Allow access');

    // consent → resume → the client's redirect URI with a code and the client's state
    const beforeConsent = person.visited.length;
    page = await person.submit(page);
    const after = person.visited.slice(beforeConsent).map((v) => new URL(v));
    expect(after.map((u) => (u.href.startsWith(REDIRECT) ? 'client' : u.pathname))).toEqual([
      `/oauth/interaction/${consentUid}/consent`,
      `/oauth/authorize/${consentUid}`,
      'client',
    ]);
    const landed = after.at(-1)!;
    expect(landed.searchParams.get('state')).toBe('st');
    expect(landed.searchParams.get('code')).toBeTruthy();

    // code → token, for the person who signed in upstream
    const tokens = await oidc.authorizationCodeGrant(as, landed, { pkceCodeVerifier: verifier, expectedState: 'st' }, { resource: pds.config.baseUrl });
    expect(decodeJwt(tokens.access_token)).toMatchObject({ sub: 'victim@example.com', aud: pds.config.baseUrl });
  });
});
