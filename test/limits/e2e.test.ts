/**
 * Issue 3 end to end: a started pds with `REDIS_URL` (the shared redis-server), the GitHub and Dex fixtures, and the
 * default wiring of `server.ts` — every token form, the 300/min route cap by peer address, and the 20/min write limit
 * over REST and over MCP sharing one budget.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { CLIENTS, connectHttp, textOf } from '../helpers/mcp-clients.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { startDexFixture, type DexFixture } from '../fixtures/dex.js';
import { startGitHubFixture, type GitHubFixture } from '../fixtures/github-api.js';
import { burst, closeAgents, send } from './http.js';

let pds: TestServer;
let gh: GitHubFixture;
let dex: DexFixture;

beforeAll(async () => {
  gh = await startGitHubFixture();
  dex = await startDexFixture('pds');
  pds = await startTestServer({
    REDIS_URL: inject('redisUrl'),
    PDS_GITHUB_API_URL: gh.url,
    PDS_AUTH_URL: dex.url,
    PDS_OIDC_AUDIENCE: 'pds',
    PDS_ADMINS: 'root',
    PDS_ADMIN_GROUPS: 'platform-admins',
  });
});
afterAll(async () => {
  closeAgents();
  await pds?.stop();
  await gh?.close();
  await dex?.close();
});

/** A user id no other test (or file sharing this Redis) uses. */
const unique = (name: string) => `${name}-${randomUUID().slice(0, 8)}`;
const bearer = async (user: string, groups: string[] = []) => ({ authorization: `Bearer ${await pds.token(user, groups)}` });

describe('authentication end to end', () => {
  it('accepts a self-issued token, a PAT with read:user and a Dex token on GET /api/v1/operations', async () => {
    const url = `${pds.url}/api/v1/operations`;
    expect((await send(url, { headers: await bearer('alice') })).status).toBe(200);

    gh.addToken('ghp_e2eTokenWithReadUser000000000000000', 'octocat', ['read:user']);
    const pat = await send(url, { headers: { authorization: 'Bearer ghp_e2eTokenWithReadUser000000000000000' } });
    expect(pat.status).toBe(200);

    const jwt = await dex.sign({ email: 'jane@example.com', email_verified: true, groups: ['dev'] });
    expect((await send(url, { headers: { authorization: `Bearer ${jwt}` } })).status).toBe(200);
  });

  it('answers 401 { error } with a Bearer challenge naming the metadata URL, never echoing the token', async () => {
    const url = `${pds.url}/api/v1/operations`;
    const cases: [string | undefined, RegExp, boolean][] = [
      [undefined, /missing bearer token/, false],
      ['Bearer ghp_unknownToken0000000000000000000', /bad credentials/, true],
      ['Bearer not-a-token', /malformed/, true],
      [`Bearer ${await dex.sign({ email: 'a@b.c', exp: Math.floor(Date.now() / 1000) - 60 })}`, /expired/, true],
    ];
    for (const [authorization, message, invalid] of cases) {
      const res = await send(url, { headers: authorization ? { authorization } : {} });
      expect(res.status).toBe(401);
      expect(res.json()).toEqual({ error: expect.stringMatching(message) });
      if (authorization) expect(res.body).not.toContain(authorization.slice(7));
      const challenge = res.headers['www-authenticate'] as string;
      expect(challenge).toMatch(/^Bearer realm="pds"/);
      expect(challenge).toContain(`resource_metadata="${pds.config.baseUrl}/.well-known/oauth-protected-resource"`);
      expect(challenge.includes('error="invalid_token"')).toBe(invalid);
    }
  });

  it('answers 503 when GitHub cannot be reached for an uncached PAT', async () => {
    gh.failWith = 503;
    try {
      const res = await send(`${pds.url}/api/v1/operations`, { headers: { authorization: 'Bearer ghp_neverSeenBefore00000000000000000000' } });
      expect(res.status).toBe(503);
      expect(res.json().error).toMatch(/GitHub could not be reached/);
    } finally {
      gh.failWith = undefined;
    }
  });

  it('serves /.well-known/oauth-protected-resource without a token', async () => {
    const res = await send(`${pds.url}/.well-known/oauth-protected-resource`);
    expect(res.status).toBe(200);
    expect(res.json()).toMatchObject({ resource: pds.config.baseUrl, authorization_servers: [`${dex.url}/api/dex`] });
    const mcp = await send(`${pds.url}/.well-known/oauth-protected-resource/mcp`);
    expect(mcp.json()).toMatchObject({ resource: `${pds.config.baseUrl}/mcp` });
  });
});

describe('300 requests per minute per user', () => {
  it('caps a user calling from 127.0.0.2 at 300, POST /mcp included; 127.0.0.1 is not capped and not counted', async () => {
    const user = unique('cap');
    const headers = await bearer(user);
    const url = `${pds.url}/api/v1/operations`;

    const local = await burst(320, () => send(url, { from: '127.0.0.1', headers }));
    expect(local.every((r) => r.status === 200)).toBe(true);

    const remote = await burst(299, () => send(url, { from: '127.0.0.2', headers }));
    expect(remote.every((r) => r.status === 200)).toBe(true);
    // The 300th request is an MCP call: it counts against the same bucket.
    const mcpBody = { jsonrpc: '2.0', id: 1, method: 'tools/list' };
    const mcp300 = await send(`${pds.url}/mcp`, { method: 'POST', from: '127.0.0.2', headers, body: mcpBody });
    expect(mcp300.status).toBe(200);
    expect(mcp300.headers['ratelimit-remaining']).toBe('0');

    // The workflow event stream (issue 19 item 1) is a read like the others: over the cap it is refused too.
    for (const target of [url, `${pds.url}/mcp`, `${pds.url}/api/v1/workflows/deploy-service-x7k2p/events`]) {
      const refused = await send(target, { method: target.endsWith('/mcp') ? 'POST' : 'GET', from: '127.0.0.2', headers, body: target.endsWith('/mcp') ? mcpBody : undefined });
      expect(refused.status).toBe(429);
      expect(refused.json()).toEqual({ error: expect.stringMatching(/^rate limit exceeded: 300 requests per minute per user; retry in \d+ s$/) });
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
      expect(refused.headers['ratelimit-limit']).toBe('300');
      expect(refused.headers['ratelimit-remaining']).toBe('0');
    }
    // Over MCP, a refused tools/call is a tool result the agent can read, still carrying Retry-After.
    const call = { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'platform_list_operations', arguments: {} } };
    const refusedCall = await send(`${pds.url}/mcp`, { method: 'POST', from: '127.0.0.2', headers, body: call });
    expect(refusedCall.status).toBe(200);
    expect(refusedCall.json()).toEqual({
      jsonrpc: '2.0',
      id: 7,
      result: {
        isError: true,
        content: [{ type: 'text', text: expect.stringMatching(/^rate limit exceeded: 300 requests per minute per user; retry in \d+ s$/) }],
        _meta: { 'pds/errorCode': 'RATE_LIMITED' },
      },
    });
    expect(Number(refusedCall.headers['retry-after'])).toBeGreaterThan(0);
    // Loopback still answers for the same user; health checks never count.
    expect((await send(url, { from: '127.0.0.1', headers })).status).toBe(200);
    expect((await send(`${pds.url}/healthz`, { from: '127.0.0.2' })).status).toBe(200);
  });
});

describe('20 write calls per minute per user', () => {
  const tenant = (i: number) => `t${randomUUID().slice(0, 6)}${i}`;

  it('refuses the 21st write over REST with 429, loopback included', async () => {
    const user = unique('root');
    const headers = await bearer(user, ['platform-admins']);
    const execute = (i: number) =>
      send(`${pds.url}/api/v1/operations/create-tenant/execute`, { method: 'POST', headers, body: { team_name: tenant(i) } });
    for (let i = 0; i < 20; i++) expect((await execute(i)).status).toBe(200);
    const refused = await execute(21);
    expect(refused.status).toBe(429);
    expect(refused.json()).toEqual({ error: expect.stringMatching(/^write limit exceeded: 20 write calls per minute per user; retry in \d+ s$/) });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    // Reads still work.
    expect((await send(`${pds.url}/api/v1/operations`, { headers })).status).toBe(200);
  });

  it.each(CLIENTS)('refuses the 21st write over MCP as an isError tool result, sharing the budget with REST ($name)', async (kind) => {
    const user = unique('root');
    const headers = await bearer(user, ['platform-admins']);
    for (let i = 0; i < 10; i++) {
      const res = await send(`${pds.url}/api/v1/operations/create-tenant/execute`, { method: 'POST', headers, body: { team_name: tenant(i) } });
      expect(res.status).toBe(200);
    }
    const client = await connectHttp(kind, `${pds.url}/mcp?toolsets=all`, headers);
    try {
      for (let i = 10; i < 20; i++) {
        const ok = await client.callTool({ name: 'platform_create_tenant', arguments: { team_name: tenant(i) } });
        expect(ok.isError).toBeFalsy();
      }
      const refused = await client.callTool({ name: 'platform_create_tenant', arguments: { team_name: tenant(21) } });
      expect(refused.isError).toBe(true);
      expect(textOf(refused)).toMatch(/^write limit exceeded: 20 write calls per minute per user; retry in \d+ s$/);
      // The generic tool counts the same (once per call).
      const generic = await client.callTool({ name: 'platform_execute_operation', arguments: { name: 'create-tenant', parameters: { team_name: tenant(22) } } });
      expect(generic.isError).toBe(true);
      // Read tools are not write-limited.
      const read = await client.callTool({ name: 'platform_list_operations', arguments: {} });
      expect(read.isError).toBeFalsy();
    } finally {
      await client.close();
    }
  });
});
