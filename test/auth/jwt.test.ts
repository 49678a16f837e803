import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SignJWT, UnsecuredJWT, generateKeyPair } from 'jose';
import { createAuthenticator, classifyToken } from '../../auth/authenticate.js';
import { issueSelfToken } from '../../auth/self-issued.js';
import { startDexFixture, type DexFixture } from '../fixtures/dex.js';
import { BASE, SECRET, refusal, testConfig } from './helpers.js';

let dex: DexFixture;
beforeAll(async () => {
  dex = await startDexFixture('pds');
});
afterAll(() => dex.close());

const config = () =>
  testConfig({ PDS_AUTH_URL: dex.url, PDS_OIDC_AUDIENCE: 'pds', PDS_ADMIN_GROUPS: 'platform-admins', PDS_ADMINS: 'root@example.com' });
const auth = (deps = {}) => createAuthenticator(config(), SECRET, deps);

async function refused(token: string, message: RegExp, a = auth()) {
  const err = await refusal(a.authenticate(`Bearer ${token}`));
  expect(err.code).toBe('UNAUTHENTICATED');
  expect(err.message).toMatch(message);
  expect(err.message).not.toContain(token);
  expect(err.headers['WWW-Authenticate']).toBe(
    `Bearer realm="pds", error="invalid_token", resource_metadata="${BASE}/.well-known/oauth-protected-resource"`,
  );
  return err;
}

describe('classification (`docs/api.md#authentication`)', () => {
  it.each([
    ['ghp_abcdef0123456789', 'pat'],
    ['ghp_abc.def', 'unknown'],
    ['aaa.bbb.ccc', 'jwt'],
    ['aaa.bbb', 'unknown'],
    ['a.b.c.d', 'unknown'],
    ['github_pat_11ABC', 'unknown'],
    ['gho_abcdef', 'unknown'],
  ])('%s → %s', (token, form) => expect(classifyToken(token)).toBe(form));

  it('refuses a missing header with a challenge but no error code', async () => {
    const err = await refusal(auth().authenticate(undefined));
    expect(err.code).toBe('UNAUTHENTICATED');
    expect(err.message).toMatch(/missing bearer token/);
    expect(err.headers['WWW-Authenticate']).toBe(`Bearer realm="pds", resource_metadata="${BASE}/.well-known/oauth-protected-resource"`);
  });

  it.each(['Basic dXNlcjpwYXNz', 'Bearer', 'Bearer a b', 'token ghp_x'])('refuses the malformed header %j', async (header) => {
    const err = await refusal(auth().authenticate(header));
    expect(err.message).toMatch(/malformed Authorization header/);
    expect(err.headers['WWW-Authenticate']).toContain('error="invalid_token"');
  });

  it('refuses an unrecognised token form without echoing it', async () => {
    await refused('sk-live-1234567890', /malformed token/);
    await refused('xx.yy.zz', /malformed/);
  });
});

describe('external JWT (Dex)', () => {
  it('accepts a Dex token: user id is the email, groups make an admin', async () => {
    const token = await dex.sign({ email: 'jane@example.com', email_verified: true, preferred_username: 'jane', groups: ['platform-admins', 'dev'] });
    await expect(auth().authenticate(`Bearer ${token}`)).resolves.toEqual({
      userId: 'jane@example.com',
      groups: ['platform-admins', 'dev'],
      admin: true,
      tokenKind: 'external',
    });
  });

  // Issue 7 item 15 changed this contract: no fallback to preferred_username or sub (test/auth/identity-claims.test.ts).
  it('refuses a token without a verified email instead of falling back to another claim', async () => {
    await refused(await dex.sign({ preferred_username: 'jane' }), /no "email" claim/);
    await refused(await dex.sign({ email: 'x@evil.test', email_verified: false, preferred_username: 'joe' }), /not verified/);
    await refused(await dex.sign({}), /no "email" claim/);
  });

  it('refuses an expired token', async () => {
    const now = Math.floor(Date.now() / 1000);
    await refused(await dex.sign({ email: 'a@b.c', iat: now - 7200, exp: now - 3600 }), /expired/);
  });

  it('refuses a token without exp', async () => {
    await refused(await dex.sign({ email: 'a@b.c', exp: undefined }), /"exp" is missing/);
  });

  it('refuses a wrong audience', async () => {
    await refused(await dex.sign({ email: 'a@b.c' }, { audience: 'someone-else' }), /audience/);
  });

  it('refuses an untrusted issuer without fetching any key set', async () => {
    const before = dex.keyFetches;
    await refused(await dex.sign({ email: 'a@b.c', iss: 'https://evil.example.com/api/dex' }), /issuer is not trusted/);
    expect(dex.keyFetches).toBe(before);
  });

  it('refuses a token signed by a key Dex does not publish (same kid)', async () => {
    const { privateKey } = await generateKeyPair('RS256');
    await refused(await dex.sign({ email: 'a@b.c' }, { key: privateKey }), /signature is invalid/);
  });

  it('refuses HS256 "signed" with the published public key (algorithm confusion)', async () => {
    const jwk = dex.publicJwk();
    const hmacKey = new TextEncoder().encode(JSON.stringify(jwk));
    const token = await new SignJWT({ email: 'a@b.c' })
      .setProtectedHeader({ alg: 'HS256', kid: jwk.kid })
      .setIssuer(dex.issuer)
      .setAudience('pds')
      .setExpirationTime('5m')
      .sign(hmacKey);
    await refused(token, /algorithm is not allowed/);
    // Also with the modulus bytes as the secret, the classic confusion attack.
    const n = Buffer.from(jwk.n!, 'base64url');
    const token2 = await new SignJWT({ email: 'a@b.c' }).setProtectedHeader({ alg: 'HS256' }).setIssuer(dex.issuer).setAudience('pds').setExpirationTime('5m').sign(n);
    await refused(token2, /algorithm is not allowed/);
  });

  it('refuses alg "none"', async () => {
    const token = new UnsecuredJWT({ email: 'a@b.c' }).setIssuer(dex.issuer).setAudience('pds').setExpirationTime('5m').encode();
    await refused(token, /algorithm is not allowed|malformed/);
  });

  it('refuses a tampered payload', async () => {
    const token = await dex.sign({ email: 'a@b.c' });
    const [h, p, s] = token.split('.');
    const claims = JSON.parse(Buffer.from(p!, 'base64url').toString());
    claims.email = 'root@example.com';
    await refused(`${h}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.${s}`, /signature is invalid/);
  });

  it('follows key rotation: an unknown kid refetches the key set, at most once per cooldown', async () => {
    const a = auth({ jwksCooldownMs: 0 });
    await a.authenticate(`Bearer ${await dex.sign({ email: 'a@b.c', email_verified: true })}`);
    const before = dex.keyFetches;
    await dex.rotate();
    await expect(a.authenticate(`Bearer ${await dex.sign({ email: 'rotated@b.c', email_verified: true })}`)).resolves.toMatchObject({ userId: 'rotated@b.c' });
    expect(dex.keyFetches).toBe(before + 1);

    // With a cooldown, forged kids cannot make pds hammer Dex.
    const slow = auth({ jwksCooldownMs: 60_000 });
    await slow.authenticate(`Bearer ${await dex.sign({ email: 'a@b.c', email_verified: true })}`);
    const fetched = dex.keyFetches;
    for (let i = 0; i < 5; i++) await refused(await dex.sign({ email: 'a@b.c' }, { kid: `forged-${i}` }), /signing key/, slow);
    expect(dex.keyFetches).toBe(fetched);
  });

  it('answers 503 when the key set cannot be fetched', async () => {
    const gone = await startDexFixture('pds');
    const token = await gone.sign({ email: 'a@b.c' });
    await gone.close();
    const a = createAuthenticator(testConfig({ PDS_AUTH_URL: gone.url, PDS_OIDC_AUDIENCE: 'pds' }), SECRET);
    const err = await refusal(a.authenticate(`Bearer ${token}`));
    expect(err.code).toBe('UNAVAILABLE');
    expect(err.message).toMatch(/identity provider could not be reached/);
  });

  it('refuses external tokens when no identity provider is configured', async () => {
    const a = createAuthenticator(testConfig(), SECRET);
    const err = await refusal(a.authenticate(`Bearer ${await dex.sign({ email: 'a@b.c' })}`));
    expect(err.message).toMatch(/not configured/);
  });

  it('fails fast at start-up when PDS_AUTH_URL comes without PDS_OIDC_AUDIENCE', () => {
    expect(() => createAuthenticator(testConfig({ PDS_AUTH_URL: dex.url }), SECRET)).toThrow(TypeError);
  });
});

describe('self-issued JWT', () => {
  it('accepts a token pds issued', async () => {
    const token = await issueSelfToken(SECRET, BASE, { sub: 'alice', groups: ['platform-admins'] }, 600);
    await expect(auth().authenticate(`Bearer ${token}`)).resolves.toEqual({
      userId: 'alice',
      groups: ['platform-admins'],
      admin: true,
      tokenKind: 'self-issued',
    });
  });

  it('refuses a token signed with another secret', async () => {
    const token = await issueSelfToken(new TextEncoder().encode('x'.repeat(40)), BASE, { sub: 'alice', groups: [] }, 600);
    await refused(token, /signature is invalid/);
  });

  it('refuses an expired token', async () => {
    const token = await new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setSubject('alice').setIssuer(BASE).setAudience(BASE)
      .setIssuedAt(Math.floor(Date.now() / 1000) - 120).setExpirationTime(Math.floor(Date.now() / 1000) - 60).sign(SECRET);
    await refused(token, /expired/);
  });

  it('refuses a token without exp', async () => {
    const token = await new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setSubject('alice').setIssuer(BASE).setAudience(BASE).sign(SECRET);
    await refused(token, /"exp" is missing/);
  });

  it('refuses a wrong audience', async () => {
    const token = await new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setSubject('alice').setIssuer(BASE).setAudience('other')
      .setExpirationTime('5m').sign(SECRET);
    await refused(token, /audience/);
  });

  it('refuses HS512 and alg "none" with pds as issuer', async () => {
    const hs512 = await new SignJWT({}).setProtectedHeader({ alg: 'HS512' }).setSubject('alice').setIssuer(BASE).setAudience(BASE)
      .setExpirationTime('5m').sign(new TextEncoder().encode('s'.repeat(64)));
    await refused(hs512, /algorithm is not allowed/);
    const none = new UnsecuredJWT({}).setSubject('alice').setIssuer(BASE).setAudience(BASE).setExpirationTime('5m').encode();
    await refused(none, /algorithm is not allowed|malformed/);
  });

  it('does not serve a cached verification past the token expiry', async () => {
    const a = auth();
    const token = await issueSelfToken(SECRET, BASE, { sub: 'alice', groups: [] }, 1);
    await a.authenticate(`Bearer ${token}`); // cached now, for at most the token's remaining life
    await new Promise((r) => setTimeout(r, 1500));
    await refused(token, /expired/, a);
  });
});
