/**
 * Issue 7 item 9: traffic that does not authenticate is limited per client address (30 failures a minute, then 429
 * with Retry-After; only failures count; 127.0.0.1 and ::1 exempt; the address from X-Forwarded-For with
 * PDS_TRUST_PROXY; shared through Redis), and GitHub is asked about at most 10 unknown PATs per address a minute, a
 * refused PAT being remembered for 30 s whatever GitHub's reason. The GitHub API stand-in counts the calls.
 */
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { connectRedis } from '../../adapters/redis/connect.js';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import { errorMiddleware } from '../../rest/errors.js';
import { createAuthLimits, createOAuthLimit, FAILED_AUTHENTICATIONS_PER_MINUTE, OAUTH_REGISTRATIONS_PER_DAY, OAUTH_REGISTRATIONS_PER_MINUTE, OAUTH_REQUESTS_PER_MINUTE, PAT_LOOKUPS_PER_MINUTE } from '../../rest/auth-limit.js';
import { startGitHubFixture, type GitHubFixture } from '../fixtures/github-api.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { closeAgents, send, type Reply } from './http.js';

let gh: GitHubFixture;
let pds: TestServer;

beforeAll(async () => {
  gh = await startGitHubFixture();
  pds = await startTestServer({ PDS_GITHUB_API_URL: gh.url });
});

afterAll(async () => {
  closeAgents();
  await pds.stop();
  await gh.close();
});

const OPERATIONS = '/api/v1/operations';

function call(server: TestServer, from: string, authorization?: string, headers: Record<string, string> = {}): Promise<Reply> {
  return send(server.url + OPERATIONS, { from, headers: { ...(authorization ? { authorization } : {}), ...headers } });
}

/** A token that passes classification as a JWT but fails verification; different each time. */
const junk = () => `Bearer eyJhbGciOiJIUzI1NiJ9.${Buffer.from(randomUUID()).toString('base64url')}.c2ln`;

describe('failed authentications per address', () => {
  it('answers the 31st failure within a minute with 429 and Retry-After, and never slows a valid token', async () => {
    const from = '127.0.0.2';
    const valid = `Bearer ${await pds.token('alice')}`;
    for (let i = 0; i < 50; i++) expect((await call(pds, from, valid)).status).toBe(200); // not counted
    for (let i = 0; i < FAILED_AUTHENTICATIONS_PER_MINUTE; i++) {
      expect((await call(pds, from, i % 2 ? junk() : undefined)).status).toBe(401);
    }
    const over = await call(pds, from, junk());
    expect(over.status).toBe(429);
    expect(Number(over.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number(over.headers['retry-after'])).toBeLessThanOrEqual(60);
    expect(over.json()).toEqual({ error: expect.stringContaining('failed authentications') });
    expect((await call(pds, from)).status).toBe(429); // no token at all counts as a failure too
    // A valid token from the same address still passes, a fresh one included.
    expect((await call(pds, from, valid)).status).toBe(200);
    expect((await call(pds, from, `Bearer ${await pds.token('bob')}`)).status).toBe(200);
    // Another address has its own budget.
    expect((await call(pds, '127.0.0.3', junk())).status).toBe(401);
  });

  it('exempts exactly 127.0.0.1, as the route limit does', async () => {
    for (let i = 0; i < FAILED_AUTHENTICATIONS_PER_MINUTE + 10; i++) expect((await call(pds, '127.0.0.1', junk())).status).toBe(401);
  });

  it('takes the address from the last X-Forwarded-For entry with PDS_TRUST_PROXY', async () => {
    const proxied = await startTestServer({ PDS_TRUST_PROXY: 'true' });
    try {
      const viaProxy = (xff: string) => call(proxied, '127.0.0.1', junk(), { 'x-forwarded-for': xff });
      for (let i = 0; i < FAILED_AUTHENTICATIONS_PER_MINUTE; i++) expect((await viaProxy('127.0.0.1, 198.51.100.7')).status).toBe(401);
      expect((await viaProxy('127.0.0.1, 198.51.100.7')).status).toBe(429);
      expect((await viaProxy('198.51.100.8')).status).toBe(401);
      // A client cannot claim loopback: only the entry the proxy appended counts, and here it is the proxy's peer.
      for (let i = 0; i < FAILED_AUTHENTICATIONS_PER_MINUTE + 5; i++) expect((await viaProxy('198.51.100.7, 127.0.0.1')).status).toBe(401);
    } finally {
      await proxied.stop();
    }
  });

  it('shares the budget between replicas through Redis', async () => {
    const redisA: Redis = await connectRedis(inject('redisUrl'));
    const redisB: Redis = await connectRedis(inject('redisUrl'));
    const namespace = `test:${randomUUID()}`;
    const a = await startTestServer({}, { authLimits: createAuthLimits({ redis: redisA, namespace }) });
    const b = await startTestServer({}, { authLimits: createAuthLimits({ redis: redisB, namespace }) });
    try {
      const from = '127.0.0.4';
      for (let i = 0; i < FAILED_AUTHENTICATIONS_PER_MINUTE; i++) expect((await call(i % 2 ? a : b, from, junk())).status).toBe(401);
      expect((await call(a, from, junk())).status).toBe(429);
      expect((await call(b, from, junk())).status).toBe(429);
    } finally {
      await a.stop();
      await b.stop();
      redisA.disconnect();
      redisB.disconnect();
    }
  });
});

describe('GitHub verification of PATs', () => {
  it('asks GitHub about at most 10 unknown PATs per address a minute; known ones still pass', async () => {
    const from = '127.0.0.5';
    gh.addToken('ghp_knownGoodToken00000000000000000000', 'octocat', ['read:user']);
    expect((await call(pds, from, 'Bearer ghp_knownGoodToken00000000000000000000')).status).toBe(200); // 1 look-up
    const before = gh.calls;
    for (let i = 1; i < PAT_LOOKUPS_PER_MINUTE; i++) {
      expect((await call(pds, from, `Bearer ghp_unknown${i}${'0'.repeat(30)}`)).status).toBe(401);
    }
    expect(gh.calls).toBe(before + PAT_LOOKUPS_PER_MINUTE - 1);
    for (let i = 0; i < 5; i++) {
      const over = await call(pds, from, `Bearer ghp_another${i}${'0'.repeat(30)}`);
      expect(over.status).toBe(429);
      expect(over.headers['retry-after']).toBeDefined();
    }
    expect(gh.calls).toBe(before + PAT_LOOKUPS_PER_MINUTE - 1); // refused without asking GitHub
    expect((await call(pds, from, 'Bearer ghp_knownGoodToken00000000000000000000')).status).toBe(200); // cached
    expect((await call(pds, '127.0.0.6', `Bearer ghp_fresh${'0'.repeat(30)}`)).status).toBe(401); // its own budget
  });

  it('remembers a refused PAT whatever the reason GitHub gave, and asks again only when GitHub was unreachable', async () => {
    const from = '127.0.0.7';
    const cases: [string, (token: string) => void][] = [
      ['401', () => {}],
      ['403', (t) => gh.refuseToken(t, 403)],
      ['404', (t) => gh.refuseToken(t, 404)],
      ['422', (t) => gh.refuseToken(t, 422)],
      ['no read:user', (t) => gh.addToken(t, 'noscope', ['repo'])],
    ];
    for (const [reason, arrange] of cases) {
      const token = `ghp_refused${reason.replace(/\W/g, '')}${'0'.repeat(30)}`;
      arrange(token);
      const before = gh.calls;
      expect((await call(pds, from, `Bearer ${token}`)).status, reason).toBe(401);
      expect((await call(pds, from, `Bearer ${token}`)).status, reason).toBe(401);
      expect(gh.calls - before, reason).toBe(1);
    }
    gh.failWith = 503;
    try {
      const before = gh.calls;
      const token = `Bearer ghp_whileDown${'0'.repeat(30)}`;
      expect((await call(pds, from, token)).status).toBe(503);
      expect((await call(pds, from, token)).status).toBe(503);
      expect(gh.calls - before).toBe(2); // not a verdict on the token: not remembered
    } finally {
      gh.failWith = undefined;
    }
  });
});

describe('the OAuth routes per address', () => {
  const METADATA = '/.well-known/oauth-authorization-server';
  const client = (n: number) => ({
    client_name: `spammer ${n}`,
    redirect_uris: [`http://127.0.0.1:9/cb/${n}`],
    token_endpoint_auth_method: 'none',
    grant_types: ['authorization_code'],
    response_types: ['code'],
  });

  it(`answers the ${OAUTH_REQUESTS_PER_MINUTE + 1}st request within a minute with 429 and Retry-After; 127.0.0.1 is exempt`, async () => {
    const from = '127.0.0.5';
    for (let i = 0; i < OAUTH_REQUESTS_PER_MINUTE; i++) expect((await send(pds.url + METADATA, { from })).status).toBe(200);
    const over = await send(pds.url + METADATA, { from });
    expect(over.status).toBe(429);
    expect(Number(over.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(over.json()).toEqual({ error: expect.stringContaining(`at most ${OAUTH_REQUESTS_PER_MINUTE} a minute`) });
    // Every OAuth route shares the budget; the API's own routes do not.
    expect((await send(`${pds.url}/oauth/token`, { from, method: 'POST', body: {} })).status).toBe(429);
    expect((await send(`${pds.url}/oauth/interaction/x`, { from })).status).toBe(429);
    expect((await call(pds, from, `Bearer ${await pds.token('alice')}`)).status).toBe(200);
    // Other addresses have their own budgets, and loopback has none.
    expect((await send(pds.url + METADATA, { from: '127.0.0.6' })).status).toBe(200);
    for (let i = 0; i < OAUTH_REQUESTS_PER_MINUTE + 5; i++) expect((await send(pds.url + METADATA, { from: '127.0.0.1' })).status).toBe(200);
  });

  it(`registers at most ${OAUTH_REGISTRATIONS_PER_MINUTE} clients per address a minute (the refusal carries no client_id)`, async () => {
    const from = '127.0.0.7';
    for (let i = 0; i < OAUTH_REGISTRATIONS_PER_MINUTE; i++) {
      const registered = await send(`${pds.url}/oauth/register`, { from, method: 'POST', body: client(i) });
      expect(registered.status).toBe(201);
    }
    const over = await send(`${pds.url}/oauth/register`, { from, method: 'POST', body: client(99) });
    expect(over.status).toBe(429);
    expect(over.json()).toEqual({ error: expect.stringContaining('too many client registrations') });
    // Reading the metadata still works until the request budget is spent.
    expect((await send(pds.url + METADATA, { from })).status).toBe(200);
  });

  it(`also counts registrations against a daily budget (${OAUTH_REGISTRATIONS_PER_DAY} a day by default), per address`, async () => {
    // A small daily budget and a large per-minute one, on a Koa app of its own with only the gate and a 201.
    const gate = createOAuthLimit({ trustProxy: false, maxRegistrations: 100, maxRegistrationsPerDay: 3, namespace: `t${randomUUID()}` });
    const app = new Koa();
    app.use(errorMiddleware());
    app.use(gate);
    app.use((ctx) => {
      ctx.status = 201;
      ctx.body = {};
    });
    const server = app.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const from = '127.0.0.8';
      for (let i = 0; i < 3; i++) expect((await send(`${base}/oauth/register`, { from, method: 'POST', body: client(i) })).status).toBe(201);
      const over = await send(`${base}/oauth/register`, { from, method: 'POST', body: client(3) });
      expect(over.status).toBe(429);
      expect(over.json()).toEqual({ error: expect.stringContaining('at most 3 a day') });
      expect(Number(over.headers['retry-after'])).toBeGreaterThan(3_600);
      // Another address has its own day; other routes are not registrations.
      expect((await send(`${base}/oauth/register`, { from: '127.0.0.9', method: 'POST', body: client(4) })).status).toBe(201);
      expect((await send(`${base}/oauth/token`, { from, method: 'POST', body: {} })).status).toBe(201);
    } finally {
      server.close();
    }
  });
});
