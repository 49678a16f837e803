/**
 * Issue 23 item 1: a pds loads what its configuration uses, when it is first used. A real `pds serve` process
 * (bin/pds-src.js) runs with a loader hook (`test/helpers/record-loads.mjs`) that writes down every module the ESM
 * loader resolves (static imports, `import()`, and the entry of each CommonJS package imported from ESM), and the test
 * reads that list after requests of its own.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { issueSelfToken } from '../../auth/self-issued.js';
import { startPds, TEST_JWT_SECRET, type PdsProcess } from '../helpers/pds-process.js';
import { freePort } from '../fixtures/free-port.js';

const RECORDER = path.resolve('test/helpers/record-loads.mjs');

/** Packages a default sandbox (SQLite, no Redis, JSON logs) must not load at start-up or on ordinary requests. */
const NOT_BY_DEFAULT = ['@kubernetes/client-node', 'oidc-provider', 'openid-client', '@octokit/rest', '@octokit/auth-app', '@octokit/core', 'ioredis', 'pg', 'pino-pretty'];

let dir: string | undefined;
let pds: PdsProcess | undefined;

afterEach(async () => {
  await pds?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
  pds = dir = undefined;
});

async function start(env: Record<string, string> = {}) {
  dir = await mkdtemp(path.join(tmpdir(), 'pds-lazy-'));
  const record = path.join(dir, 'loads.txt');
  pds = await startPds({
    dataDir: path.join(dir, 'data'),
    env: { ...env, PDS_RECORD_LOADS: record, NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import=${RECORDER}`.trim() },
  });
  /** The packages loaded so far (the folder after each `node_modules/`, scope included). */
  return async (): Promise<Set<string>> => {
    const urls = (await readFile(record, 'utf8')).split('\n');
    return new Set(urls.flatMap((url) => [...url.matchAll(/\/node_modules\/((?:@[^/]+\/)?[^/]+)\//g)].map((m) => m[1]!).slice(-1)));
  };
}

it('a default sandbox loads neither the cluster client, the OAuth provider, openid-client nor Octokit; the provider comes at the first OAuth request', async () => {
  const loaded = await start();
  expect((await pds!.api('root', 'GET', '/api/v1/tenants')).status).toBe(200);
  expect((await fetch(`${pds!.url}/docs`)).status).toBe(200);
  const before = await loaded();
  // The recorder works: what every request goes through is there.
  expect(before).toContain('koa');
  expect(before).toContain('better-sqlite3');
  // Kysely comes as its CommonJS build (adapters/sql/kysely.ts), which the ESM loader never resolves: its ES module
  // build, about 980 files, is not loaded.
  expect(before).not.toContain('kysely');
  expect(NOT_BY_DEFAULT.filter((name) => before.has(name))).toEqual([]);
  // The authorization server is still there for whoever asks: built at the first request, oidc-provider with it.
  const metadata = await fetch(`${pds!.url}/.well-known/oauth-authorization-server`);
  expect(metadata.status).toBe(200);
  expect(((await metadata.json()) as { token_endpoint: string }).token_endpoint).toBe(`${pds!.url}/oauth/token`);
  const after = await loaded();
  expect(after).toContain('oidc-provider');
  expect(['@kubernetes/client-node', 'openid-client', '@octokit/rest'].filter((name) => after.has(name))).toEqual([]);
  // Swagger UI's files are streamed from the package at the first asset asked for.
  const css = await fetch(`${pds!.url}/docs/assets/swagger-ui.css`);
  expect(css.status).toBe(200);
  expect(css.headers.get('content-type')).toContain('text/css');
  await css.arrayBuffer();
});

it('the MCP SDK loads at the first MCP request, not at start-up nor for REST calls', async () => {
  const loaded = await start();
  expect((await pds!.api('root', 'GET', '/api/v1/operations')).status).toBe(200);
  // An MCP request the edge refuses (no token) does not load it either.
  expect((await fetch(`${pds!.url}/mcp`, { method: 'POST', body: '{}' })).status).toBe(401);
  const before = await loaded();
  expect(['@modelcontextprotocol/server', '@modelcontextprotocol/node', '@modelcontextprotocol/core'].filter((name) => before.has(name))).toEqual([]);
  const call = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'platform_list_operations', arguments: {} } };
  const headers = { authorization: `Bearer ${await issueSelfToken(new TextEncoder().encode(TEST_JWT_SECRET), pds!.url, { sub: 'root', groups: [] }, 600)}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' };
  // Two first calls at once (both waiting on the one import) are both answered.
  const answers = await Promise.all([1, 2].map(async (id) => {
    const res = await fetch(`${pds!.url}/mcp?toolsets=catalog`, { method: 'POST', headers, body: JSON.stringify({ ...call, id }) });
    return { status: res.status, body: (await res.json()) as { id: number; result: { isError?: boolean; structuredContent: unknown } } };
  }));
  for (const [i, answer] of answers.entries()) {
    expect(answer.status).toBe(200);
    expect(answer.body.id).toBe(i + 1);
    expect(answer.body.result.isError, JSON.stringify(answer.body.result)).toBeUndefined();
    expect(JSON.stringify(answer.body.result.structuredContent)).toContain('deploy-service');
  }
  expect(await loaded()).toContain('@modelcontextprotocol/server');
});

it('with GitHub sign-in configured, the OAuth provider and openid-client load at start-up, Octokit at the first token to verify', async () => {
  // A GitHub API where nothing listens: the PAT below cannot be verified, but asking is what loads Octokit.
  const github = `http://127.0.0.1:${await freePort()}`;
  const loaded = await start({ PDS_GITHUB_OAUTH_CLIENT_ID: 'pds-test', PDS_GITHUB_OAUTH_CLIENT_SECRET: 'pds-test-secret', PDS_GITHUB_API_URL: github });
  const names = await loaded();
  expect(names).toContain('oidc-provider');
  expect(names).toContain('openid-client');
  expect(['@kubernetes/client-node', '@octokit/rest'].filter((name) => names.has(name))).toEqual([]);
  const refused = await fetch(`${pds!.url}/api/v1/tenants`, { headers: { authorization: 'Bearer ghp_lazymodulestest0123456789abcdefghij' } });
  expect(refused.status).toBe(503);
  expect(await loaded()).toContain('@octokit/rest');
});
