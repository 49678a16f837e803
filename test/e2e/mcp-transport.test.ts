/**
 * The MCP endpoint's own rules (rest/mcp.ts), against a started pds over real HTTP: the Origin check (issue 7 item 10),
 * JSON-RPC batches (item 8), bodies that are not JSON-RPC (item 11), and the server's self-description (issue 11
 * item 10: title, icon, instructions) as every client of test/helpers/mcp-clients.ts reads it.
 */
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../config.js';
import { CLIENTS, connectHttp, textOf } from '../helpers/mcp-clients.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { closeAgents, send } from '../limits/http.js';

let pds: TestServer;
let auth: Record<string, string>;
const ALLOWED = 'https://console.example.com';

beforeAll(async () => {
  pds = await startTestServer({ PDS_ALLOWED_ORIGINS: `${ALLOWED}, http://localhost:5173` });
  auth = { authorization: `Bearer ${await pds.token('root')}` };
});
afterAll(async () => {
  closeAgents();
  await pds.stop();
});

const listTools = { jsonrpc: '2.0', id: 1, method: 'tools/list' };
const postMcp = (body: unknown, headers: Record<string, string> = {}, from?: string) =>
  send(`${pds.url}/mcp`, { method: 'POST', headers: { ...auth, ...headers }, body, from });

/** POST raw bytes to /mcp with the given headers (content type JSON unless overridden). */
async function postRaw(body: Buffer | string, headers: Record<string, string> = {}) {
  const res = await fetch(`${pds.url}/mcp`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: body as BodyInit,
  });
  return { status: res.status, body: await res.json() };
}

describe('Origin (MCP "Streamable HTTP" security: DNS rebinding)', () => {
  it('refuses an Origin that is not allowed with 403 and a JSON-RPC error, and calls nothing', async () => {
    for (const origin of ['http://evil.example', 'null', 'https://console.example.com.evil.example', 'http://127.0.0.1']) {
      const res = await postMcp(listTools, { origin });
      expect(res.status, origin).toBe(403);
      expect(res.json()).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600 } });
    }
  });

  it("lets requests without Origin, with the server's own origin and with PDS_ALLOWED_ORIGINS through", async () => {
    const own = new URL(pds.config.baseUrl).origin;
    for (const headers of [{}, { origin: own }, { origin: ALLOWED }, { origin: 'http://localhost:5173' }] as Record<string, string>[]) {
      const res = await postMcp(listTools, headers);
      expect(res.status, JSON.stringify(headers)).toBe(200);
      expect(res.json().result.tools.length).toBeGreaterThan(0);
    }
  });

  it('validates PDS_ALLOWED_ORIGINS as origins at start-up', () => {
    expect(loadConfig({ PDS_ALLOWED_ORIGINS: 'https://a.example, http://b.example:8080/' }).allowedOrigins).toEqual([
      'https://a.example',
      'http://b.example:8080',
    ]);
    for (const bad of ['https://a.example/path', 'a.example', 'ftp://a.example', 'https://a.example?x=1']) {
      expect(() => loadConfig({ PDS_ALLOWED_ORIGINS: bad }), bad).toThrow(/PDS_ALLOWED_ORIGINS.*is not an origin/s);
    }
  });
});

describe('JSON-RPC batches (removed from MCP in 2025-06-18)', () => {
  const createTenant = (i: number, name: string) => ({
    jsonrpc: '2.0',
    id: i,
    method: 'tools/call',
    params: { name: 'platform_create_tenant', arguments: { team_name: `${name}${i}` } },
  });

  it('answers an array with -32600 and runs none of its calls', async () => {
    const batch = Array.from({ length: 100 }, (_, i) => createTenant(i, 'batcha'));
    const res = await postMcp(batch, { 'x-pds-toolsets': 'all' });
    expect(res.status).toBe(400);
    expect(res.json()).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600, message: expect.stringMatching(/batches are not supported/) } });
    const audit = await pds.api('root', 'GET', '/api/v1/audit');
    expect(audit.body.items.filter((e: any) => e.parameters.team_name?.startsWith('batcha'))).toEqual([]);
  });

  it('10 POSTs of 100 calls each count 10 against the 300/min limit and make no call', async () => {
    const before = await postMcp(listTools, {}, '127.0.0.2');
    const remaining = Number(before.headers['ratelimit-remaining']);
    for (let post = 0; post < 10; post++) {
      const batch = Array.from({ length: 100 }, (_, i) => createTenant(post * 100 + i, 'batchb'));
      expect((await postMcp(batch, { 'x-pds-toolsets': 'all' }, '127.0.0.2')).status).toBe(400);
    }
    const after = await postMcp(listTools, {}, '127.0.0.2');
    expect(Number(after.headers['ratelimit-remaining'])).toBe(remaining - 11);
    const tenants = await pds.api('root', 'GET', '/api/v1/tenants');
    expect(tenants.body.items.filter((t: any) => t.name.startsWith('batchb'))).toEqual([]);
  });
});

describe('bodies that are not one JSON-RPC message', () => {
  it('answers a body that is not JSON with HTTP 400 and JSON-RPC -32700, not { error }', async () => {
    for (const body of ['{"jsonrpc": "2.0", "id": 1, "method": ', 'not json', '']) {
      const res = await postRaw(body);
      expect(res.status, body).toBe(400);
      expect(res.body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32700 } });
    }
    const garbage = await postRaw(Buffer.from([0x1f, 0x8b, 1, 2, 3, 4]), { 'content-encoding': 'gzip' });
    expect(garbage).toMatchObject({ status: 400, body: { error: { code: -32700 } } });
    const unknown = await postRaw('{}', { 'content-encoding': 'zstd-ish' });
    expect(unknown).toMatchObject({ status: 415, body: { error: { code: -32600 } } });
  });

  it('answers a 2026-07-28 request with _meta nested 30,000 deep with HTTP 400 and -32600, before the SDK', async () => {
    const deep = `${'{"x":'.repeat(30_000)}1${'}'.repeat(30_000)}`;
    const meta = `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"deep","version":"1"},"io.modelcontextprotocol/clientCapabilities":{},"deep":${deep}}`;
    const headers = { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/list' };
    const res = await postRaw(`{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{"_meta":${meta}}}`, headers);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ jsonrpc: '2.0', error: { code: -32600, message: expect.stringMatching(/nests .* more than 64 deep/) } });
    // A deep array in tool arguments, on the older protocol, the same.
    const arrays = await postRaw(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"platform_get_status","arguments":{"team":${'['.repeat(65)}${']'.repeat(65)}}}}`);
    expect(arrays).toMatchObject({ status: 400, body: { error: { code: -32600 } } });
    // Just within the limit is the SDK's to answer.
    const within = await postRaw(`{"jsonrpc":"2.0","id":6,"method":"tools/list","params":{"_meta":${'{"x":'.repeat(60)}1${'}'.repeat(60)}}}`);
    expect(within.status).toBe(200);
  });

  it('reads a gzip-encoded request like a plain one', async () => {
    const res = await postRaw(gzipSync(JSON.stringify(listTools)), { 'content-encoding': 'gzip' });
    expect(res.status).toBe(200);
    expect(res.body.result.tools.length).toBeGreaterThan(0);
  });

  it.each(CLIENTS)('answers __proto__ and invalid arguments with an isError result naming the field ($name)', async (kind) => {
    const client = await connectHttp(kind, `${pds.url}/mcp`, auth);
    try {
      const proto = await client.callTool({ name: 'platform_get_status', arguments: JSON.parse('{"team":"acme","app":"web","__proto__":{"x":1}}') });
      expect(proto.isError).toBe(true);
      expect(textOf(proto)).toMatch(/__proto__/);
      const invalid = await client.callTool({ name: 'platform_get_logs', arguments: { team: 'acme', app: 'web', lines: 5000 } });
      expect(invalid.isError).toBe(true);
      expect(textOf(invalid)).toMatch(/^invalid parameters: lines: /);
    } finally {
      await client.close();
    }
  });

  it('answers __proto__ in raw tool arguments with a tool result, never an HTTP 400', async () => {
    const call = '{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"platform_get_status","arguments":{"team":"acme","app":"web","__proto__":{"polluted":true}}}}';
    const res = await postRaw(call);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: 9, result: { isError: true, content: [{ text: expect.stringMatching(/__proto__/) }] } });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe.each(CLIENTS)('server self-description, $name', (kind) => {
  it('announces a title, an icon served by pds, and instructions naming the next tools', async () => {
    const client = await connectHttp(kind, `${pds.url}/mcp`, auth);
    const info = client.serverInfo();
    const instructions = client.instructions();
    await client.close();
    expect(info).toMatchObject({ name: 'pds', title: expect.stringContaining('Platform Deployment Service'), version: expect.any(String) });
    const icons = info!.icons as { src: string; mimeType: string }[];
    expect(icons[0]).toMatchObject({ src: `${pds.config.baseUrl}/icon.svg`, mimeType: 'image/svg+xml' });
    for (const tool of ['platform_get_workflow', 'platform_get_status', 'platform_scaffold_repository']) expect(instructions).toContain(tool);
    const icon = await fetch(icons[0]!.src);
    expect(icon.status).toBe(200);
    expect(icon.headers.get('content-type')).toMatch(/^image\/svg\+xml/);
    expect(await icon.text()).toMatch(/^<svg [^>]*xmlns="http:\/\/www.w3.org\/2000\/svg"/);
  });
});
