import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import { silentLogger } from '../../core/logger.js';
import type { Redis } from 'ioredis';
import { createAuthenticator, type AuthenticatorDeps } from '../../auth/authenticate.js';
import { createGitHubUserLookup } from '../../adapters/github/users.js';
import { connectRedis } from '../../adapters/redis/connect.js';
import { startGitHubFixture, type GitHubFixture } from '../fixtures/github-api.js';
import { SECRET, refusal, testConfig } from './helpers.js';

const quiet = silentLogger;
let gh: GitHubFixture;
let redis: Redis;
let n = 0;
/** A token no other test (or earlier run sharing this Redis) has seen. */
const fresh = () => `ghp_${process.pid}x${Date.now()}x${++n}${'A'.repeat(20)}`;

beforeAll(async () => {
  gh = await startGitHubFixture();
  redis = await connectRedis(inject('redisUrl'), { log: quiet });
});
afterAll(async () => {
  await gh.close();
  redis.disconnect();
});
beforeEach(() => {
  gh.calls = 0;
  gh.failWith = undefined;
  gh.delayMs = 0;
});

/** The authenticator as the composition root builds it (server.ts): the GitHub look-up injected, at `baseUrl`. */
const withGitHub = (baseUrl: string, deps: Omit<AuthenticatorDeps, 'redis'> & { redis?: Redis } = {}) =>
  createAuthenticator(testConfig({ PDS_GITHUB_API_URL: baseUrl, PDS_ADMINS: 'octocat' }), SECRET, {
    ...deps,
    lookupGitHubUser: createGitHubUserLookup({ baseUrl, timeoutMs: deps.timeoutMs }),
    redis: deps.redis && (() => deps.redis),
  });
const auth = (deps: Omit<AuthenticatorDeps, 'redis'> & { redis?: Redis } = {}) => withGitHub(gh.url, deps);

describe('GitHub PAT', () => {
  it('accepts a token with read:user; the user id is the GitHub login', async () => {
    const token = fresh();
    gh.addToken(token, 'octocat', ['read:user', 'repo']);
    await expect(auth().authenticate(`Bearer ${token}`)).resolves.toEqual({
      userId: 'octocat',
      groups: [],
      admin: true,
      tokenKind: 'pat',
    });
  });

  it('accepts the parent scope "user" (GitHub reports the broader scope)', async () => {
    const token = fresh();
    gh.addToken(token, 'hubot', ['repo', 'user', 'workflow']);
    await expect(auth().authenticate(`Bearer ${token}`)).resolves.toMatchObject({ userId: 'hubot', admin: false });
  });

  it('refuses a token without read:user: 401 insufficient scope, token not echoed', async () => {
    const token = fresh();
    gh.addToken(token, 'octocat', ['repo', 'read:org']);
    const err = await refusal(auth().authenticate(`Bearer ${token}`));
    expect(err.code).toBe('UNAUTHENTICATED');
    expect(err.message).toBe('insufficient scope: the token needs read:user');
    expect(err.headers['WWW-Authenticate']).toContain('error="invalid_token"');
    expect(err.headers['WWW-Authenticate']).toContain('resource_metadata="http://pds.test/.well-known/oauth-protected-resource"');
    expect(JSON.stringify({ m: err.message, h: err.headers })).not.toContain(token);
  });

  it('refuses a token GitHub does not know: 401 bad credentials', async () => {
    const token = fresh();
    const err = await refusal(auth().authenticate(`Bearer ${token}`));
    expect(err.code).toBe('UNAUTHENTICATED');
    expect(err.message).toMatch(/bad credentials/);
    expect(err.message).not.toContain(token);
  });

  it('answers 503, not 401, when GitHub cannot be reached and nothing is cached', async () => {
    const down = await startGitHubFixture();
    await down.close();
    const a = withGitHub(down.url);
    const err = await refusal(a.authenticate(`Bearer ${fresh()}`));
    expect(err.code).toBe('UNAVAILABLE');
    expect(err.status).toBe(503);
    expect(err.message).toMatch(/GitHub could not be reached/);
  });

  it('answers 503 when GitHub fails (5xx) and does not cache the failure', async () => {
    const token = fresh();
    gh.addToken(token, 'octocat', ['read:user']);
    const a = auth();
    gh.failWith = 502;
    expect((await refusal(a.authenticate(`Bearer ${token}`))).code).toBe('UNAVAILABLE');
    gh.failWith = undefined;
    await expect(a.authenticate(`Bearer ${token}`)).resolves.toMatchObject({ userId: 'octocat' });
  });

  it('times out a GitHub that does not answer', async () => {
    const token = fresh();
    gh.addToken(token, 'octocat', ['read:user']);
    // Left alone, GitHub would accept the token after 2 s: only the 200 ms timeout can make this a refusal.
    gh.delayMs = 2000;
    const err = await refusal(auth({ timeoutMs: 200 }).authenticate(`Bearer ${token}`));
    expect(err.code).toBe('UNAVAILABLE');
  });

  it('a concurrent burst with one token costs one GitHub call; later calls are served from the cache', async () => {
    const token = fresh();
    gh.addToken(token, 'octocat', ['read:user']);
    gh.delayMs = 50;
    const a = auth();
    const ids = await Promise.all(Array.from({ length: 25 }, () => a.authenticate(`Bearer ${token}`)));
    expect(new Set(ids.map((i) => i.userId))).toEqual(new Set(['octocat']));
    await a.authenticate(`Bearer ${token}`);
    expect(gh.calls).toBe(1);
  });

  it('caches refusals too (briefly): a burst of a bad token costs one call', async () => {
    const token = fresh();
    const a = auth();
    for (let i = 0; i < 5; i++) expect((await refusal(a.authenticate(`Bearer ${token}`))).code).toBe('UNAUTHENTICATED');
    expect(gh.calls).toBe(1);
  });

  it('a cached token keeps working while GitHub is down', async () => {
    const token = fresh();
    gh.addToken(token, 'octocat', ['read:user']);
    const a = auth();
    await a.authenticate(`Bearer ${token}`);
    gh.failWith = 503;
    await expect(a.authenticate(`Bearer ${token}`)).resolves.toMatchObject({ userId: 'octocat' });
  });

  it('expires cached verdicts: good after 5 minutes, bad after 30 s', async () => {
    let now = Date.now();
    const a = auth({ now: () => now });
    const good = fresh();
    const bad = fresh();
    gh.addToken(good, 'octocat', ['read:user']);
    await a.authenticate(`Bearer ${good}`);
    await refusal(a.authenticate(`Bearer ${bad}`));
    expect(gh.calls).toBe(2);
    now += 31_000;
    await a.authenticate(`Bearer ${good}`);
    await refusal(a.authenticate(`Bearer ${bad}`));
    expect(gh.calls).toBe(3);
    now += 270_000;
    await a.authenticate(`Bearer ${good}`);
    expect(gh.calls).toBe(4);
  });

  it('shares verdicts through Redis, keyed by the SHA-256 of the token, never the token itself', async () => {
    const token = fresh();
    gh.addToken(token, 'octocat', ['read:user']);
    await auth({ redis }).authenticate(`Bearer ${token}`);
    // A second replica (its own memory) asks Redis, not GitHub.
    await expect(auth({ redis }).authenticate(`Bearer ${token}`)).resolves.toMatchObject({ userId: 'octocat' });
    expect(gh.calls).toBe(1);
    const keys = await redis.keys('pds:auth:pat:*');
    expect(keys.length).toBeGreaterThan(0);
    for (const key of keys) {
      expect(key).not.toContain(token);
      expect(await redis.get(key)).not.toContain(token);
    }
    const ttl = await redis.pttl(keys[0]!);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(300_000);
  });
});
