/**
 * Issue 7 item 15: which claim of an external (Dex) token is the user id. `PDS_OIDC_USER_CLAIM` names it (default
 * `email`); `email` counts only when `email_verified` is true; there is no fallback to another claim; and a
 * `preferred_username` or `sub` id never takes the e-mail form, so no such claim can become a `PDS_ADMINS` e-mail user.
 * Tokens come from the Dex stand-in (real RS256 key set over HTTP).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JWTPayload } from 'jose';
import { createAuthenticator } from '../../auth/authenticate.js';
import { accountKey } from '../../auth/oauth/provider.js';
import { issueSelfToken } from '../../auth/self-issued.js';
import { parseMemberReference, parseUserId } from '../../core/identity.js';
import { loadConfig } from '../../config.js';
import { startDexFixture, type DexFixture } from '../fixtures/dex.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { BASE, SECRET, refusal, testConfig } from './helpers.js';

const ADMIN = 'root@example.com';
let dex: DexFixture;

beforeAll(async () => {
  dex = await startDexFixture('pds');
});
afterAll(() => dex.close());

function authenticator(claim?: string) {
  const env = { PDS_AUTH_URL: dex.url, PDS_OIDC_AUDIENCE: 'pds', PDS_ADMINS: `${ADMIN},jane`, PDS_OIDC_USER_CLAIM: claim };
  return createAuthenticator(testConfig(env), SECRET);
}

async function identify(claims: JWTPayload, claim?: string) {
  return authenticator(claim).authenticate(`Bearer ${await dex.sign(claims)}`);
}

async function refusedCode(claims: JWTPayload, claim?: string): Promise<string> {
  return (await refusal(identify(claims, claim))).code;
}

describe('PDS_OIDC_USER_CLAIM=email (the default)', () => {
  it('takes a verified email', async () => {
    await expect(identify({ email: ADMIN, email_verified: true })).resolves.toMatchObject({ userId: ADMIN, admin: true });
  });

  it('refuses an email not marked verified, whatever the other claims say', async () => {
    expect(await refusedCode({ email: ADMIN, email_verified: false })).toBe('UNAUTHENTICATED');
    expect(await refusedCode({ email: ADMIN })).toBe('UNAUTHENTICATED');
    expect(await refusedCode({ email: ADMIN, email_verified: 'true' })).toBe('UNAUTHENTICATED');
    expect(await refusedCode({ email: 'x@evil.test', email_verified: false, preferred_username: ADMIN })).toBe('UNAUTHENTICATED');
  });

  it('has no fallback: a token without a verified email is refused, even with preferred_username or sub', async () => {
    expect(await refusedCode({ preferred_username: ADMIN })).toBe('UNAUTHENTICATED');
    expect(await refusedCode({ preferred_username: 'jane' })).toBe('UNAUTHENTICATED');
    expect(await refusedCode({ sub: ADMIN })).toBe('UNAUTHENTICATED');
    expect(await refusedCode({})).toBe('UNAUTHENTICATED');
  });
});

describe('PDS_OIDC_USER_CLAIM=preferred_username or sub', () => {
  it('takes the named claim', async () => {
    // Taken only as `oidc:<value>` (issue 17 item 9): the GitHub login `jane` in PDS_ADMINS is another person.
    await expect(identify({ preferred_username: 'jane', email: 'other@example.com', email_verified: true }, 'preferred_username')).resolves.toMatchObject({ userId: 'oidc:jane', admin: false });
    await expect(identify({ sub: 'CgZqYW5lEgZnaXRodWI' }, 'sub')).resolves.toMatchObject({ userId: 'oidc:CgZqYW5lEgZnaXRodWI', admin: false });
  });

  it('never lets it take an id of the e-mail form', async () => {
    expect(await refusedCode({ preferred_username: ADMIN }, 'preferred_username')).toBe('UNAUTHENTICATED');
    expect(await refusedCode({ sub: ADMIN }, 'sub')).toBe('UNAUTHENTICATED');
    expect(await refusedCode({ sub: 'someone@elsewhere' }, 'sub')).toBe('UNAUTHENTICATED');
  });

  it('has no fallback to email when the claim is missing', async () => {
    expect(await refusedCode({ email: ADMIN, email_verified: true }, 'preferred_username')).toBe('UNAUTHENTICATED');
  });
});

describe('one identity, one namespace, by grammar (issue 17 item 9)', () => {
  const selfIssued = async (sub: string) =>
    createAuthenticator(testConfig({ PDS_ADMINS: 'root' }), SECRET).authenticate(`Bearer ${await issueSelfToken(SECRET, BASE, { sub, groups: [] }, 600)}`);

  it('refuses a verified email that is not an address: "root" from Dex is not the GitHub login root', async () => {
    expect(await refusedCode({ email: 'root', email_verified: true })).toBe('UNAUTHENTICATED');
    expect(await refusedCode({ email: 'oidc:root', email_verified: true })).toBe('UNAUTHENTICATED');
  });

  it('takes the same string from two token kinds as two people', async () => {
    const dexRoot = await identify({ preferred_username: 'root' }, 'preferred_username');
    const pdsRoot = await selfIssued('root');
    expect(dexRoot).toMatchObject({ userId: 'oidc:root', admin: false });
    expect(pdsRoot).toMatchObject({ userId: 'root', admin: true });
    expect(accountKey(dexRoot.userId)).not.toBe(accountKey(pdsRoot.userId));
  });

  it('refuses a self-issued subject outside the grammar of the identities it may stand for', async () => {
    for (const sub of ['group:admins', 'role:admin', 'github-actions:acme/web', 'a:b', 'root@', '@example.com', 'oidc:', 'oidc:x@y', 'two words', '-root']) {
      expect((await refusal(selfIssued(sub))).code, sub).toBe('UNAUTHENTICATED');
    }
    await expect(selfIssued('oidc:CgZqYW5l')).resolves.toMatchObject({ userId: 'oidc:CgZqYW5l' });
    await expect(selfIssued('jane@example.com')).resolves.toMatchObject({ userId: 'jane@example.com' });
  });

  it('parses user ids and prefixed member references by one grammar', () => {
    expect(parseUserId('octo-cat')).toEqual({ kind: 'github', id: 'octo-cat' });
    expect(parseUserId('jane@example.com')).toEqual({ kind: 'email', id: 'jane@example.com' });
    expect(parseUserId('oidc:jane')).toEqual({ kind: 'oidc', id: 'oidc:jane' });
    expect(parseUserId('group:admins')).toBeUndefined();
    expect(parseMemberReference('group:platform-team')).toEqual({ kind: 'group', name: 'platform-team' });
    expect(parseMemberReference('alice')).toEqual({ kind: 'user', user: { kind: 'github', id: 'alice' } });
    expect(parseMemberReference('nope:alice')).toBeUndefined();
    expect(parseMemberReference('group:')).toBeUndefined();
  });
});

describe('configuration', () => {
  it('accepts email, preferred_username and sub, and refuses anything else naming the variable', () => {
    expect(loadConfig({}).oidcUserClaim).toBe('email');
    for (const claim of ['email', 'preferred_username', 'sub'] as const) expect(loadConfig({ PDS_OIDC_USER_CLAIM: claim }).oidcUserClaim).toBe(claim);
    expect(() => loadConfig({ PDS_OIDC_USER_CLAIM: 'name' })).toThrow(/PDS_OIDC_USER_CLAIM/);
  });
});

describe('over HTTP', () => {
  let pds: TestServer;
  beforeAll(async () => {
    pds = await startTestServer({ PDS_AUTH_URL: dex.url, PDS_OIDC_AUDIENCE: 'pds', PDS_ADMINS: ADMIN });
  });
  afterAll(() => pds.stop());

  it('does not make a token with an unverified email or a look-alike username the admin', async () => {
    const get = async (claims: JWTPayload) =>
      (await fetch(`${pds.url}/api/v1/tenants`, { headers: { authorization: `Bearer ${await dex.sign(claims)}` } })).status;
    expect(await get({ email: ADMIN, email_verified: true })).toBe(200);
    expect(await get({ email: ADMIN, email_verified: false })).toBe(401);
    expect(await get({ email_verified: false, preferred_username: ADMIN })).toBe(401);
    expect(await get({ sub: ADMIN })).toBe(401);
  });
});
