/**
 * `pds mcp` as a process, byte for byte (issue 7 item 17): JSON-RPC lines in on stdin, lines out on stdout. A line
 * that is not JSON gets `-32700`, one that is not a JSON-RPC message `-32600`; at the end of the input the requests
 * already read are answered and the process exits 0.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';

let pds: TestServer;
let env: Record<string, string>;

beforeAll(async () => {
  pds = await startTestServer();
  env = { ...(process.env as Record<string, string>), PDS_BASE_URL: pds.url, PDS_TOKEN: await pds.token('root') };
});
afterAll(() => pds.stop());

/** Run `pds mcp` with `input` on stdin (then end it); resolves with the exit code and the stdout lines as JSON. */
async function runPdsMcp(input: string, args: string[] = []): Promise<{ code: number | null; answers: any[]; stderr: string }> {
  const child = spawn(process.execPath, ['bin/pds-src.js', 'mcp', ...args], { env, stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = once(child, 'exit');
  const killer = setTimeout(() => child.kill('SIGKILL'), 20_000);
  child.stdin.end(input);
  const [code] = (await exited) as [number | null];
  clearTimeout(killer);
  return { code, answers: stdout.split('\n').filter(Boolean).map((line) => JSON.parse(line)), stderr };
}

const line = (message: unknown) => `${JSON.stringify(message)}\n`;
const initialize = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'wire-test', version: '1.0.0' } },
};

it('answers malformed lines with -32700 and -32600, keeps serving, and exits 0 at the end of input', async () => {
  const input =
    line(initialize) +
    line({ jsonrpc: '2.0', method: 'notifications/initialized' }) +
    '{"jsonrpc": "2.0", "id": 2, "method": \n' +
    'hello\n' +
    line([{ jsonrpc: '2.0', id: 3, method: 'tools/list' }]) +
    line({ jsonrpc: '2.0', id: 4 }) +
    line({ jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'platform_list_services', arguments: {} } });
  const { code, answers } = await runPdsMcp(input);
  expect(code).toBe(0);
  const byId = (id: unknown) => answers.filter((a) => a.id === id);
  expect(byId(1)[0].result).toMatchObject({ protocolVersion: '2025-11-25', serverInfo: { name: 'pds' } });
  const parseErrors = answers.filter((a) => a.error?.code === -32700);
  expect(parseErrors).toHaveLength(2);
  for (const error of parseErrors) expect(error).toMatchObject({ jsonrpc: '2.0', id: null });
  expect(answers.filter((a) => a.error?.code === -32600).map((a) => a.id)).toEqual([null, 4]);
  // The tool call read before the end of input went to the server over REST and was answered before exiting.
  expect(byId(5)[0].result).toMatchObject({ structuredContent: { items: [], count: 0 } });
});

it('exits 0 on an empty input, and 2 for an unknown toolset', async () => {
  expect((await runPdsMcp('')).code).toBe(0);
  const bad = await runPdsMcp('', ['--toolsets', 'deploys']);
  expect(bad.code).toBe(2);
  expect(bad.stderr).toMatch(/unknown toolset "deploys"/);
});

it('serves protocol 2026-07-28 on the same wire without an initialize handshake', async () => {
  const meta = {
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientInfo': { name: 'wire-test', version: '1.0.0' },
    'io.modelcontextprotocol/clientCapabilities': {},
  };
  const { code, answers } = await runPdsMcp(
    line({ jsonrpc: '2.0', id: 1, method: 'server/discover', params: { _meta: meta } }) +
      line({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: { _meta: meta } }),
  );
  expect(code).toBe(0);
  expect(answers.find((a) => a.id === 1).result.supportedVersions).toContain('2026-07-28');
  expect(answers.find((a) => a.id === 2).result).toMatchObject({ resultType: 'complete', tools: expect.any(Array) });
});
