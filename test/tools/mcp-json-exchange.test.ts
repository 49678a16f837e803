/**
 * tools/mcp-json-exchange.ts: the Node transport for one JSON-RPC request answered with one JSON body. Which requests
 * it takes, that its answers are the SDK transport's answers byte for byte, and that a client who leaves aborts the
 * handler. Two node:http servers on loopback serve the same per-request server: one through pds's handler
 * (`tools/mcp-http.ts`, which picks this transport when it may), one through the SDK's `NodeStreamableHTTPServerTransport`
 * alone, as pds served every request before.
 */
import { once } from 'node:events';
import { createServer, request as httpRequest, type IncomingMessage, type Server as HttpServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { NodeStreamableHTTPServerTransport } from '@modelcontextprotocol/node';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { InvalidParams } from '../../core/errors.js';
import { defineTool, type AnyTool, type ToolContext } from '../../tools/define.js';
import { createMcpServer, type ToolCaller } from '../../tools/mcp.js';
import { createMcpHttpHandler } from '../../tools/mcp-http.js';
import { JsonExchangeTransport, jsonExchangeMessage, responsePieces, type StructuredOutput } from '../../tools/mcp-json-exchange.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/server';

/** Signals of calls to the waiting tool, in the order they started. */
const waits: AbortSignal[] = [];

const echo = defineTool({
  name: 'platform_test_echo',
  title: 'Echo',
  description: 'Test tool: answers its text, or refuses "bad".',
  input: z.object({ text: z.string().describe('What to echo, e.g. "héllo"') }),
  output: z.object({ text: z.string() }),
  access: 'public',
  kind: 'read',
  toolset: 'observe',
  annotations: {},
  handler: async ({ text }) => {
    if (text === 'bad') throw new InvalidParams('text "bad" is refused: send any other text');
    return { text };
  },
});

const wait = defineTool({
  name: 'platform_test_wait_forever',
  title: 'Wait',
  description: 'Test tool: waits until its call is aborted.',
  input: z.object({}),
  output: z.object({}),
  access: 'public',
  kind: 'read',
  toolset: 'observe',
  annotations: {},
  handler: async (_input, ctx) => {
    const signal = ctx.interaction!.signal;
    waits.push(signal);
    await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
    return {};
  },
});

const tools: readonly AnyTool[] = [echo, wait];
const call: ToolCaller = (tool, args, interaction) => tool.handler(tool.input.parse(args), { interaction } as ToolContext);
const secret = new TextEncoder().encode('json-exchange-test-secret-'.padEnd(40, 'x'));
const build = () => createMcpServer(tools, call, { baseUrl: 'http://127.0.0.1', caller: 'tester', stateSecret: secret });
/** The servers pds's handler built, newest last: after an exchange its transport stays connected (nothing to close). */
const built: Array<ReturnType<typeof build>> = [];

/** Serves POSTs with `serve` after reading the JSON body, as rest/mcp.ts does. */
async function listen(serve: (req: IncomingMessage, res: ServerResponse, body: unknown) => Promise<void>): Promise<{ http: HttpServer; url: string }> {
  const http = createServer((req, res) => {
    let text = '';
    req.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
    req.on('end', () => void serve(req, res, JSON.parse(text)));
  });
  http.listen(0, '127.0.0.1');
  await once(http, 'listening');
  return { http, url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp` };
}

let pds: { http: HttpServer; url: string };
let sdk: { http: HttpServer; url: string };

beforeAll(async () => {
  const handler = createMcpHttpHandler();
  pds = await listen((req, res, body) =>
    handler(req, res, body, () => {
      built.push(build());
      return built.at(-1)!;
    }),
  );
  sdk = await listen(async (req, res, body) => {
    const server = build();
    const transport = new NodeStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  });
});
afterAll(async () => {
  await Promise.all([pds, sdk].map(({ http }) => new Promise((resolve) => http.close(resolve))));
});

const JSON_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

/** Everything a client can see of an answer but its date and framing headers. */
async function answer(url: string, body: unknown, headers: Record<string, string>) {
  const res = await fetch(url, { method: 'POST', headers, body: JSON.stringify(body) });
  return { status: res.status, type: res.headers.get('content-type'), body: await res.text() };
}

/** A request as a bare IncomingMessage would show it to {@link jsonExchangeMessage}. */
const incoming = (headers: Record<string, string>) => ({ headers }) as unknown as IncomingMessage;

const call1 = (args: unknown, extra: object = {}) => ({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'platform_test_echo', arguments: args }, ...extra });

describe('which requests the JSON exchange takes', () => {
  it('takes one request with JSON and SSE accepted, a JSON body and a supported or absent protocol version', () => {
    for (const headers of [JSON_HEADERS, { ...JSON_HEADERS, 'mcp-protocol-version': '2025-11-25' }, { ...JSON_HEADERS, 'content-type': 'application/json; charset=utf-8' }]) {
      expect(jsonExchangeMessage(incoming(headers), call1({ text: 'a' })), JSON.stringify(headers)).toMatchObject({ id: 1, method: 'tools/call' });
    }
    expect(jsonExchangeMessage(incoming(JSON_HEADERS), { jsonrpc: '2.0', id: 'x', method: 'tools/list' })).toMatchObject({ id: 'x' });
  });

  it('leaves to the SDK what it answers otherwise: notifications, initialize, progress, headers it refuses, malformed messages', () => {
    const cases: Array<[string, unknown, Record<string, string>]> = [
      ['a notification', { jsonrpc: '2.0', method: 'notifications/initialized' }, JSON_HEADERS],
      ['initialize', { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } } }, JSON_HEADERS],
      ['a progress token (SSE)', call1({ text: 'a' }, { params: { name: 'platform_test_echo', arguments: {}, _meta: { progressToken: 1 } } }), JSON_HEADERS],
      ['Accept without SSE (406)', call1({}), { ...JSON_HEADERS, accept: 'application/json' }],
      ['Accept without JSON (406)', call1({}), { ...JSON_HEADERS, accept: 'text/event-stream' }],
      ['no Accept (406)', call1({}), { 'content-type': 'application/json' }],
      ['a text body (415)', call1({}), { ...JSON_HEADERS, 'content-type': 'text/plain' }],
      ['an unsupported protocol version (400)', call1({}), { ...JSON_HEADERS, 'mcp-protocol-version': '1999-01-01' }],
      ['a batch', [call1({})], JSON_HEADERS],
      ['no jsonrpc member', { id: 1, method: 'tools/list' }, JSON_HEADERS],
      ['a null id', { jsonrpc: '2.0', id: null, method: 'tools/list' }, JSON_HEADERS],
      ['a response', { jsonrpc: '2.0', id: 1, result: {} }, JSON_HEADERS],
      ['not an object', 'tools/list', JSON_HEADERS],
    ];
    for (const [name, body, headers] of cases) expect(jsonExchangeMessage(incoming(headers), body), name).toBeUndefined();
  });
});

describe('answers as the SDK transport does', () => {
  const cases: Array<[string, unknown, Record<string, string>?]> = [
    ['a tool result with non-ASCII text', call1({ text: 'héllo — ✓' })],
    ['a refused call (isError)', call1({ text: 'bad' })],
    ['arguments the tool rejects', call1({ text: 42 })],
    ['an unknown tool', { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'platform_nothing', arguments: {} } }],
    ['tools/list with a string id', { jsonrpc: '2.0', id: 'list-1', method: 'tools/list' }],
    ['id 0', { jsonrpc: '2.0', id: 0, method: 'ping' }],
    ['resources/list', { jsonrpc: '2.0', id: 3, method: 'resources/list' }],
    ['an unknown method', { jsonrpc: '2.0', id: 4, method: 'no/such/method' }],
    ['params the method rejects', { jsonrpc: '2.0', id: 5, method: 'tools/call', params: { arguments: {} } }],
    ['a supported protocol version header', { jsonrpc: '2.0', id: 6, method: 'tools/list' }, { 'mcp-protocol-version': '2025-06-18' }],
    // Not taken by the exchange; the same handler answers them through the SDK, as before.
    ['an unsupported protocol version', { jsonrpc: '2.0', id: 7, method: 'tools/list' }, { 'mcp-protocol-version': '1999-01-01' }],
    ['a notification', { jsonrpc: '2.0', method: 'notifications/initialized' }],
    ['Accept without SSE', { jsonrpc: '2.0', id: 8, method: 'tools/list' }, { accept: 'application/json' }],
  ];
  for (const [name, body, headers] of cases) {
    it(name, async () => {
      const sent = { ...JSON_HEADERS, ...headers };
      const [ours, theirs] = await Promise.all([answer(pds.url, body, sent), answer(sdk.url, body, sent)]);
      expect(ours).toEqual(theirs);
    });
  }

  it("serves them through the exchange, with the body's length in bytes", async () => {
    const res = await fetch(pds.url, { method: 'POST', headers: JSON_HEADERS, body: JSON.stringify(call1({ text: 'héllo — ✓' })) });
    expect(built.at(-1)!.transport).toBeInstanceOf(JsonExchangeTransport);
    const bytes = Buffer.from(await res.arrayBuffer());
    expect(Number(res.headers.get('content-length'))).toBe(bytes.length);
    expect(JSON.parse(bytes.toString('utf8')).result.structuredContent).toEqual({ text: 'héllo — ✓' });
  });
});

/** The whole text the exchange writes for `message`. */
const serializeResponse = (message: JSONRPCMessage, structured?: StructuredOutput) => responsePieces(message, structured).join('');

describe('responsePieces: the output serialised once', () => {
  const output = { items: [{ name: 'deploy', note: 'é "quoted" \\ — ✓' }], count: 1, when: new Date(0) };
  const json = JSON.stringify(output);
  const message = (structuredContent: object, extra: object = {}) =>
    ({ result: { content: [{ type: 'text', text: json }], structuredContent, ...extra }, jsonrpc: '2.0', id: 7 }) as unknown as JSONRPCMessage;

  it('writes what JSON.stringify writes, for a copy of the output and for anything else', () => {
    const cases: JSONRPCMessage[] = [
      message({ ...output }),
      message(output),
      message({ ...output }, { isError: undefined, _meta: { a: 1 } }),
      message({ ...output, extra: true }),
      message({ count: 1, items: output.items, when: output.when }),
      message({ ...output, items: [...output.items] }),
      { jsonrpc: '2.0', id: 'x', error: { code: -32601, message: 'Method not found' } },
      { jsonrpc: '2.0', id: 1, result: {} },
    ];
    for (const m of cases) expect(serializeResponse(m, { output, json }), JSON.stringify(m)).toBe(JSON.stringify(m));
  });

  it('reuses the noted JSON only for a copy with the same entries in the same order', () => {
    const marker = { output, json: '{"noted":true}' };
    expect(serializeResponse(message({ ...output }), marker)).toContain('"structuredContent":{"noted":true}');
    for (const other of [{ ...output, extra: true }, { count: 1, items: output.items, when: output.when }, { ...output, items: [...output.items] }]) {
      expect(serializeResponse(message(other), marker)).not.toContain('noted');
    }
    expect(serializeResponse(message({ ...output }))).toBe(JSON.stringify(message({ ...output })));
  });

  it('writes a large noted JSON as a piece of its own, never copied into another', () => {
    const large = { ...output, notes: 'ü'.repeat(1000) };
    const largeJson = JSON.stringify(large);
    const m = message({ ...large });
    const pieces = responsePieces(m, { output: large, json: largeJson });
    expect(pieces).toContain(largeJson);
    expect(pieces.join('')).toBe(JSON.stringify(m));
    expect(pieces.length).toBeLessThanOrEqual(5);
  });

  it("writes the output's text block from one string kept per frozen output, and any other content as JSON.stringify does", () => {
    const frozen = Object.freeze({ ...output, notes: 'ü "é" \\ '.repeat(500) });
    const frozenJson = JSON.stringify(frozen);
    const textBlock = JSON.stringify(frozenJson);
    const answer = (content: unknown[]) =>
      ({ jsonrpc: '2.0', id: 3, result: { content, structuredContent: { ...frozen } } }) as unknown as JSONRPCMessage;
    const first = responsePieces(answer([{ type: 'text', text: frozenJson }]), { output: frozen, json: frozenJson });
    expect(first.join('')).toBe(JSON.stringify(answer([{ type: 'text', text: frozenJson }])));
    expect(first).toContain(textBlock);
    // Later answers of the same frozen output serialise its JSON as a string no more.
    const stringify = vi.spyOn(JSON, 'stringify');
    try {
      const second = responsePieces(answer([{ type: 'text', text: frozenJson }]), { output: frozen, json: frozenJson });
      expect(second).toEqual(first);
      expect(stringify.mock.calls.filter(([value]) => value === frozenJson)).toEqual([]);
    } finally {
      stringify.mockRestore();
    }
    const others: unknown[][] = [
      [{ type: 'text', text: frozenJson }, { type: 'resource_link', uri: 'pds://workflows/w-1', name: 'w-1' }],
      [{ text: frozenJson, type: 'text' }],
      [{ type: 'text', text: '{}' }],
      [{ type: 'text', text: frozenJson, annotations: { audience: ['user'] } }],
      [],
    ];
    for (const content of others) {
      const m = answer(content);
      expect(serializeResponse(m, { output: frozen, json: frozenJson }), JSON.stringify(content)).toBe(JSON.stringify(m));
    }
  });
});

describe('a client that leaves', () => {
  it('aborts the call it left, and the server keeps answering', async () => {
    const before = waits.length;
    const body = JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'platform_test_wait_forever', arguments: {} } });
    const req = httpRequest(pds.url, { method: 'POST', headers: { ...JSON_HEADERS, 'content-length': Buffer.byteLength(body) } });
    req.on('error', () => {});
    req.end(body);
    await expect.poll(() => waits.length, { timeout: 10_000 }).toBe(before + 1);
    const signal = waits[before];
    expect(signal.aborted).toBe(false);
    req.destroy();
    await expect.poll(() => signal.aborted, { timeout: 10_000 }).toBe(true);
    expect((await answer(pds.url, call1({ text: 'still here' }), JSON_HEADERS)).status).toBe(200);
  });
});
