/**
 * Waits end when their caller goes away (issue 17 item 10): `?wait_seconds=` on GET /api/v1/workflows/{name} and on an
 * execute path, and `wait_seconds` of an MCP tool call, each hold a subscription to the engine's workflow changes
 * until the workflow settles or time is up. When the client's socket closes first, the subscription is dropped at
 * once: 1,500 abandoned waits once held 40 MB of heap until their workflow settled. Counted through a spy on the real
 * sandbox engine's subscription API (`onChange`), which still subscribes for real.
 */
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';

let pds: TestServer;
let root: string;
/** Subscriptions to the engine's changes that are open now. */
let open = 0;

beforeAll(async () => {
  // A minute a step: every workflow of this file is still running when its waits are abandoned.
  pds = await startTestServer({ PDS_SANDBOX_STEP_MS: '60000' });
  root = await pds.token('root');
  const engine = pds.platform.workflows;
  const subscribe = engine.onChange.bind(engine);
  vi.spyOn(engine, 'onChange').mockImplementation((listener) => {
    open += 1;
    const unsubscribe = subscribe(listener);
    let done = false;
    return () => {
      if (!done) open -= 1;
      done = true;
      unsubscribe();
    };
  });
});
afterAll(() => pds?.stop());

/** Send a request on a socket of its own and leave it waiting; the returned request can be destroyed. */
function leaveWaiting(method: string, path: string, body?: unknown, extraHeaders: Record<string, string> = {}): http.ClientRequest {
  const url = new URL(path, pds.url);
  const request = http.request(url, {
    method,
    agent: false,
    headers: { authorization: `Bearer ${root}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...extraHeaders },
  });
  request.on('error', () => {}); // destroyed on purpose
  request.end(body === undefined ? undefined : JSON.stringify(body));
  return request;
}

/** A 2026-07-28 request (per-request `_meta` envelope, SEP-2243 headers), served by the SDK's other handler. */
const MODERN_HEADERS = { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'platform_get_workflow' };
const modernWait = (id: number, name: string) => ({
  jsonrpc: '2.0',
  id: 100 + id,
  method: 'tools/call',
  params: {
    name: 'platform_get_workflow',
    arguments: { name, wait_seconds: 45 },
    _meta: {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientInfo': { name: 'leaver', version: '1' },
      'io.modelcontextprotocol/clientCapabilities': {},
    },
  },
});

describe('an abandoned wait', () => {
  it('drops its engine subscription when the client disconnects: REST workflow and execute waits, MCP tool waits', async () => {
    const submitted = await pds.api('root', 'POST', '/api/v1/operations/create-tenant/execute', { team_name: 'acme', admins: 'alice' });
    expect(submitted.status).toBe(200);
    const name = submitted.body.workflowName as string;
    const requests = [
      ...Array.from({ length: 20 }, () => leaveWaiting('GET', `/api/v1/workflows/${name}?wait_seconds=45`)),
      leaveWaiting('POST', '/api/v1/operations/create-tenant/execute?wait_seconds=45', { team_name: 'bravo', admins: 'bob' }),
      ...Array.from({ length: 5 }, (_, i) =>
        leaveWaiting('POST', '/mcp', { jsonrpc: '2.0', id: i, method: 'tools/call', params: { name: 'platform_get_workflow', arguments: { name, wait_seconds: 45 } } }),
      ),
      ...Array.from({ length: 3 }, (_, i) => leaveWaiting('POST', '/mcp', modernWait(i, name), MODERN_HEADERS)),
    ];
    await vi.waitFor(() => expect(open).toBe(requests.length), { timeout: 10_000, interval: 20 });
    for (const request of requests) request.destroy();
    // Well within the 45 s the waits asked for: only the disconnects can end them this soon.
    await vi.waitFor(() => expect(open).toBe(0), { timeout: 5_000, interval: 20 });
  });

  it('still answers a wait whose client stays, when its time is up', async () => {
    const submitted = await pds.api('root', 'GET', '/api/v1/workflows?limit=1');
    const name = submitted.body.items[0].name as string;
    const res = await pds.api('root', 'GET', `/api/v1/workflows/${name}?wait_seconds=1`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ settled: false });
    expect(open).toBe(0);
  });
});
