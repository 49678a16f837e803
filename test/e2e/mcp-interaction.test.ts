/**
 * The transport's readiness for waiting and asking (issue 11 items 2 and 5 build on it): a handler's
 * `ctx.interaction` reaches the client as progress notifications (the answer then streams as SSE; without a progress
 * token it stays JSON) and as questions under 2026-07-28's stateless rules (`input_required`, answered on a new
 * request, possibly by another replica). Served by tools/mcp-http.ts on a plain node:http server, with two tools made
 * for this test, and driven by every client of test/helpers/mcp-clients.ts.
 */
import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool, type AnyTool, type ToolContext } from '../../tools/define.js';
import { InputRequired, NO_INTERACTION } from '../../tools/interaction.js';
import { createMcpServer, type ToolCaller } from '../../tools/mcp.js';
import { createMcpHttpHandler } from '../../tools/mcp-http.js';
import { CLIENTS, connectHttp, textOf } from '../helpers/mcp-clients.js';

const waitTool = defineTool({
  name: 'platform_test_wait',
  title: 'Wait in steps',
  description: 'Test tool: reports one progress notification per step, then answers how many it sent.',
  input: z.object({ steps: z.number().int().min(1).max(5).describe('Number of steps, e.g. 3') }),
  output: z.object({ sent: z.number() }),
  access: 'public',
  kind: 'read',
  toolset: 'observe',
  annotations: {},
  handler: async ({ steps }, ctx) => {
    const interaction = ctx.interaction ?? NO_INTERACTION;
    for (let step = 1; step <= steps; step++) await interaction.progress(step, steps, `step ${step}/${steps}`);
    return { sent: interaction.wantsProgress ? steps : 0 };
  },
});

const confirmTool = defineTool({
  name: 'platform_test_confirm',
  title: 'Ask before acting',
  description: 'Test tool: asks the person to confirm (when the client can be asked), then says what they answered.',
  input: z.object({ what: z.string().describe('What to confirm, e.g. "retire web"') }),
  output: z.object({ outcome: z.string(), state: z.unknown() }),
  access: 'public',
  kind: 'read',
  toolset: 'observe',
  annotations: {},
  handler: async ({ what }, ctx) => {
    const interaction = ctx.interaction ?? NO_INTERACTION;
    if (!interaction.canAsk) return { outcome: 'fallback: confirm value', state: null };
    const answer = interaction.answer('confirm');
    if (answer.kind === 'missing') {
      throw new InputRequired(
        { confirm: { message: `Really ${what}?`, requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] } } },
        { asked: what },
      );
    }
    const accepted = answer.kind === 'elicit' && answer.action === 'accept' && answer.content?.ok === true;
    return { outcome: accepted ? 'confirmed' : 'declined', state: interaction.state };
  },
});

const tools: readonly AnyTool[] = [waitTool, confirmTool];
const call: ToolCaller = (tool, args, interaction) => tool.handler(tool.input.parse(args), { interaction } as ToolContext);
const secret = new TextEncoder().encode('interaction-test-secret-'.padEnd(40, 'x'));

let http: HttpServer;
let url: string;
/** Requests served, by server instance: each POST must get a fresh one (stateless). */
let built = 0;

beforeAll(async () => {
  const serve = createMcpHttpHandler();
  const build = () => {
    built++;
    return createMcpServer(tools, call, { baseUrl: 'http://127.0.0.1', caller: 'tester', stateSecret: secret });
  };
  http = createServer((req, res) => {
    if (req.method !== 'POST') {
      res.writeHead(405, { allow: 'POST' }).end(); // clients try GET (a standing stream) and DELETE (end session)
      return;
    }
    let text = '';
    req.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
    req.on('end', () => void serve(req, res, JSON.parse(text), build));
  });
  http.listen(0, '127.0.0.1');
  await new Promise((resolve) => http.once('listening', resolve));
  url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
});
afterAll(() => new Promise((resolve) => http.close(resolve)));

describe.each(CLIENTS)('progress with the $name', (kind) => {
  it('delivers the handler\'s progress notifications when the client sent a progress token', async () => {
    const client = await connectHttp(kind, url, {});
    try {
      const seen: { progress: number; total?: number; message?: string }[] = [];
      const result = await client.callTool({ name: 'platform_test_wait', arguments: { steps: 3 } }, { onprogress: (p) => seen.push(p) });
      expect(result.structuredContent).toEqual({ sent: 3 });
      expect(seen).toEqual([1, 2, 3].map((n) => ({ progress: n, total: 3, message: `step ${n}/3` })));
      const quiet = await client.callTool({ name: 'platform_test_wait', arguments: { steps: 2 } });
      expect(quiet.structuredContent).toEqual({ sent: 0 });
    } finally {
      await client.close();
    }
  });
});

describe('the answer shape (2025-11-25)', () => {
  const post = (params: unknown) =>
    fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params }),
    });

  it('streams SSE for a request with a progress token and answers JSON otherwise', async () => {
    const streamed = await post({ name: 'platform_test_wait', arguments: { steps: 2 }, _meta: { progressToken: 'p1' } });
    expect(streamed.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const events = (await streamed.text()).split('\n').filter((l) => l.startsWith('data: ')).map((l) => JSON.parse(l.slice(6)));
    expect(events.map((e) => e.method ?? 'result')).toEqual(['notifications/progress', 'notifications/progress', 'result']);
    const plain = await post({ name: 'platform_test_wait', arguments: { steps: 2 } });
    expect(plain.headers.get('content-type')).toMatch(/^application\/json/);
    expect((await plain.json()).result.structuredContent).toEqual({ sent: 0 });
  });
});

describe('asking the person (elicitation)', () => {
  const modern = CLIENTS.find((k) => k.protocol === '2026-07-28')!;

  it('asks a 2026-07-28 client statelessly: input_required, then a new request with the answer and the sealed state', async () => {
    for (const [ok, outcome] of [[true, 'confirmed'], [false, 'declined']] as const) {
      const questions: string[] = [];
      const client = await connectHttp(modern, url, {}, {
        onElicit: (params) => {
          questions.push(params.message);
          return { action: 'accept', content: { ok } };
        },
      });
      const before = built;
      const result = await client.callTool({ name: 'platform_test_confirm', arguments: { what: 'retire web' } });
      await client.close();
      expect(questions).toEqual(['Really retire web?']);
      expect(result.structuredContent).toEqual({ outcome, state: { asked: 'retire web' } });
      expect(built - before).toBe(2); // two requests, two server instances: nothing kept between them
    }
  });

  it.each(CLIENTS.filter((k) => k.protocol === '2025-11-25'))('falls back for a stateless 2025-11-25 HTTP client ($name)', async (kind) => {
    const client = await connectHttp(kind, url, {}, { onElicit: () => ({ action: 'accept', content: { ok: true } }) });
    const result = await client.callTool({ name: 'platform_test_confirm', arguments: { what: 'retire web' } });
    await client.close();
    expect(result.structuredContent).toEqual({ outcome: 'fallback: confirm value', state: null });
  });

  it('refuses a sealed state that was tampered with', async () => {
    const res = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'tools/call',
        'mcp-name': 'platform_test_confirm',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 3,
        method: 'tools/call',
        params: {
          name: 'platform_test_confirm',
          arguments: { what: 'retire web' },
          requestState: 'v1.eyJwIjp7InRvb2wiOiJwbGF0Zm9ybV90ZXN0X2NvbmZpcm0ifX0.forged',
          inputResponses: { confirm: { action: 'accept', content: { ok: true } } },
          _meta: {
            'io.modelcontextprotocol/protocolVersion': '2026-07-28',
            'io.modelcontextprotocol/clientInfo': { name: 'forger', version: '1' },
            'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} } },
          },
        },
      }),
    });
    const body = await res.json();
    expect(body.error?.code ?? body.result?.isError).toBeTruthy();
    expect(JSON.stringify(body)).not.toContain('confirmed');
    expect(textOf(body.result ?? { content: [] })).not.toBe('confirmed');
  });
});
