/**
 * Issue 13 §2: `/metrics` scraped from a real pds (Redis limits, the GitHub fixture for PATs) after real traffic, and
 * read with a real parser of the exposition format — Python's `prometheus_client` (Debian `python3-prometheus-client`),
 * the reference implementation's own text parser.
 */
import { execFile } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGitHubFixture, type GitHubFixture } from '../fixtures/github-api.js';
import { startRedisServer, type RedisServer } from '../fixtures/redis-server.js';
import { freePort } from '../fixtures/free-port.js';
import { registerRepository, startTestServer, waitForWorkflow, type TestServer } from '../helpers/server.js';

const PARSER = `
import json, sys
from prometheus_client.parser import text_string_to_metric_families
out = []
for family in text_string_to_metric_families(sys.stdin.read()):
    out.append({"name": family.name, "type": family.type, "samples": [{"name": s.name, "labels": s.labels, "value": s.value} for s in family.samples]})
json.dump(out, sys.stdout)
`;

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}
interface Family {
  name: string;
  type: string;
  samples: Sample[];
}

/** The exposition text parsed by prometheus_client; rejects when the parser refuses the text. */
function parse(text: string): Promise<Family[]> {
  return new Promise((resolve, reject) => {
    const child = execFile('/usr/bin/python3', ['-c', PARSER], { maxBuffer: 64 * 2 ** 20 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`prometheus_client refused the exposition: ${stderr || err.message}`));
      else resolve(JSON.parse(stdout) as Family[]);
    });
    child.stdin!.end(text);
  });
}

const TOKEN = 'scraper-token-5f4e3d2c1b0a9988';
const PAT = `ghp_${'M'.repeat(36)}`;
const FORWARDED = { 'x-forwarded-for': '203.0.113.50' };

let pds: TestServer;
let gh: GitHubFixture;
let redis: RedisServer;
let metricsPort: number;

async function call(token: string, method: string, path: string, body?: unknown, headers: Record<string, string> = FORWARDED) {
  const res = await fetch(pds.url + path, {
    method,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

async function scrape(): Promise<Family[]> {
  const res = await fetch(`${pds.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return parse(await res.text());
}

/** The value of the sample `name` whose labels include `labels`; undefined when there is none. */
function value(families: Family[], name: string, labels: Record<string, string> = {}): number | undefined {
  for (const family of families) {
    for (const s of family.samples) {
      if (s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)) return s.value;
    }
  }
  return undefined;
}

beforeAll(async () => {
  redis = await startRedisServer();
  gh = await startGitHubFixture();
  gh.addToken(PAT, 'octocat', ['read:user']);
  metricsPort = await freePort();
  pds = await startTestServer({
    REDIS_URL: redis.url,
    PDS_TRUST_PROXY: 'true',
    PDS_GITHUB_API_URL: gh.url,
    PDS_METRICS_TOKEN: TOKEN,
    PDS_METRICS_PORT: String(metricsPort),
  });
  const root = await pds.token('root');
  const created = await call(root, 'POST', '/api/v1/operations/create-tenant/execute', { team_name: 'acme', admins: 'alice' });
  expect(created.status).toBe(200);
  await waitForWorkflow(pds, 'root', created.body.workflowName);
  await registerRepository(pds, 'alice', 'acme', 'acme/web');
  const alice = await pds.token('alice');
  const onboard = await call(alice, 'POST', '/api/v1/operations/deploy-service/execute', {
    action: 'onboard', team_name: 'acme', component_name: 'web', dockerfile_repo: 'acme/web', git_tag: '0.1.0', port: '8080',
  });
  expect(onboard.status).toBe(200);
  await waitForWorkflow(pds, 'alice', onboard.body.workflowName);
  for (let i = 0; i < 3; i++) expect((await call(alice, 'GET', '/api/v1/services/acme/web')).status).toBe(200);
  expect((await call(alice, 'GET', '/api/v1/services/acme/nope')).status).toBe(404);
  expect((await call(PAT, 'GET', '/api/v1/operations')).status).toBe(200);
  expect((await call(PAT, 'GET', '/api/v1/operations')).status).toBe(200);
  expect((await call(alice, 'GET', '/api/v1/operations', undefined, {})).status).toBe(200); // loopback: exempt
  const mcp = await call(alice, 'POST', '/mcp', { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'platform_get_status', arguments: { team: 'acme', app: 'nope' } } }, {
    accept: 'application/json, text/event-stream',
    ...FORWARDED,
  });
  expect(mcp.body.result.isError).toBe(true);
});

afterAll(async () => {
  await pds?.stop();
  await gh?.close();
  await redis?.stop();
});

describe('/metrics', () => {
  it('asks the main port\'s scrapers for the metrics token', async () => {
    expect((await fetch(`${pds.url}/metrics`)).status).toBe(401);
    const wrong = await fetch(`${pds.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}x` } });
    expect(wrong.status).toBe(401);
    expect(await wrong.json()).toEqual({ error: expect.stringMatching(/PDS_METRICS_TOKEN/) });
    expect(wrong.headers.get('x-request-id')).toBeTruthy();
  });

  it('serves the same registry without a token on PDS_METRICS_PORT, and nothing else there', async () => {
    const res = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
    expect(res.status).toBe(200);
    const families = await parse(await res.text());
    expect(families.map((f) => f.name)).toEqual(expect.arrayContaining(['pds_http_requests', 'pds_dependency_up']));
    expect((await fetch(`http://127.0.0.1:${metricsPort}/api/v1/tenants`)).status).toBe(404);
  });

  it('counts HTTP requests by route and status, with a latency histogram', async () => {
    const m = await scrape();
    expect(value(m, 'pds_http_requests_total', { method: 'GET', route: '/api/v1/services/:team/:app', status: '200' })).toBeGreaterThanOrEqual(3);
    expect(value(m, 'pds_http_requests_total', { method: 'GET', route: '/api/v1/services/:team/:app', status: '404' })).toBe(1);
    expect(m.find((f) => f.name === 'pds_http_request_duration_seconds')?.type).toBe('histogram');
    const count = value(m, 'pds_http_request_duration_seconds_count', { method: 'GET', route: '/api/v1/services/:team/:app' })!;
    expect(count).toBeGreaterThanOrEqual(4);
    expect(value(m, 'pds_http_request_duration_seconds_bucket', { method: 'GET', route: '/api/v1/services/:team/:app', le: '+Inf' })).toBe(count);
  });

  it('counts tool calls by tool, door and outcome', async () => {
    const m = await scrape();
    expect(value(m, 'pds_tool_calls_total', { tool: 'platform_get_service', door: 'rest', outcome: 'ok' })).toBeGreaterThanOrEqual(3);
    expect(value(m, 'pds_tool_calls_total', { tool: 'platform_get_service', door: 'rest', outcome: 'NOT_FOUND' })).toBe(1);
    expect(value(m, 'pds_tool_calls_total', { tool: 'platform_get_status', door: 'mcp', outcome: 'NOT_FOUND' })).toBe(1);
    expect(value(m, 'pds_tool_call_duration_seconds_count', { tool: 'platform_deploy_service', door: 'rest' })).toBe(1);
  });

  it('counts settled workflows by operation and outcome, with their durations', async () => {
    const m = await scrape();
    expect(value(m, 'pds_workflows_total', { operation: 'create-tenant', outcome: 'succeeded' })).toBe(1);
    expect(value(m, 'pds_workflows_total', { operation: 'deploy-service', outcome: 'succeeded' })).toBe(1);
    expect(value(m, 'pds_workflow_duration_seconds_count', { operation: 'deploy-service', outcome: 'succeeded' })).toBe(1);
    expect(value(m, 'pds_workflow_duration_seconds_sum', { operation: 'deploy-service', outcome: 'succeeded' })).toBeGreaterThan(0);
  });

  it('counts limiter decisions and token-cache look-ups', async () => {
    const m = await scrape();
    expect(value(m, 'pds_limit_decisions_total', { limit: 'route', decision: 'allowed', store: 'redis' })).toBeGreaterThanOrEqual(8);
    expect(value(m, 'pds_limit_decisions_total', { limit: 'route', decision: 'exempt', store: 'none' })).toBeGreaterThanOrEqual(1);
    expect(value(m, 'pds_limit_decisions_total', { limit: 'write', decision: 'allowed', store: 'redis' })).toBeGreaterThanOrEqual(2);
    expect(value(m, 'pds_token_cache_lookups_total', { cache: 'pat', result: 'miss' })).toBe(1);
    expect(value(m, 'pds_token_cache_lookups_total', { cache: 'pat', result: 'memory' })).toBe(1);
    expect(value(m, 'pds_token_cache_lookups_total', { cache: 'jwt', result: 'memory' })).toBeGreaterThanOrEqual(3);
    expect(value(m, 'pds_token_cache_lookups_total', { cache: 'jwt', result: 'miss' })).toBeGreaterThanOrEqual(2);
  });

  it('exports Node\'s default metrics', async () => {
    const m = await scrape();
    expect(value(m, 'process_resident_memory_bytes')).toBeGreaterThan(10 * 2 ** 20);
    expect(value(m, 'nodejs_heap_size_used_bytes')).toBeGreaterThan(0);
    expect(m.map((f) => f.name)).toEqual(expect.arrayContaining(['process_cpu_seconds', 'nodejs_eventloop_lag_seconds', 'nodejs_gc_duration_seconds']));
  });

  it('reports Redis and the record store up, and Redis down when it goes away (limits then counted in memory)', async () => {
    let m = await scrape();
    expect(value(m, 'pds_dependency_up', { dependency: 'redis' })).toBe(1);
    expect(value(m, 'pds_dependency_up', { dependency: 'records' })).toBe(1);
    await redis.stop();
    const alice = await pds.token('alice');
    await expect.poll(async () => value(await scrape(), 'pds_dependency_up', { dependency: 'redis' }), { timeout: 10_000 }).toBe(0);
    expect((await call(alice, 'GET', '/api/v1/services/acme/web')).status).toBe(200);
    m = await scrape();
    expect(value(m, 'pds_limit_decisions_total', { limit: 'route', decision: 'allowed', store: 'memory' })).toBeGreaterThanOrEqual(1);
    expect(value(m, 'pds_dependency_up', { dependency: 'records' })).toBe(1);
  });
});
