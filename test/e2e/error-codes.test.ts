/**
 * Every error code of `core/errors.ts` reaches every client alike (issue 18 item 5): REST sends it in
 * `PDS-Error-Code` beside the unchanged `{ "error" }` body (`docs/api.md#errors`); `pds mcp` on stdio (a real process, raw JSON-RPC
 * lines, against a real pds over REST) answers the same call with an `isError` result carrying the same code in
 * `_meta["pds/errorCode"]`; the CLI exits 3 for UNAUTHENTICATED and 1 for the rest, printing the server's message.
 *
 * The pds is real; its sandbox platform throws, from `logs`, the error its `app` names (`not-found`, …), so every code
 * the error tree defines is produced at the same place. Two codes are also produced the ordinary way, because they
 * share status 400 and the bridge used to tell them apart by status: a bad parameter (INVALID_PARAMS) and a
 * confirmation request (CONFIRMATION_REQUIRED).
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ConfirmationRequired,
  Conflict,
  ERROR_CODE_HEADER,
  Forbidden,
  HTTP_STATUS,
  InvalidParams,
  NotFound,
  RateLimited,
  Unauthenticated,
  Unavailable,
  Upstream,
  type ErrorCode,
  type PlatformError,
} from '../../core/errors.js';
import type { Platform, PlatformBackend } from '../../core/ports.js';
import { buildPlatform } from '../../server.js';
import { ERROR_CODE_META } from '../../tools/mcp-edge.js';
import { startTestServer, testConfig, waitForWorkflow, type TestServer } from '../helpers/server.js';

/** One error of every code; typed by the code, so a code added to the tree fails to compile until it is tested here. */
const FAULTS: Record<ErrorCode, () => PlatformError> = {
  INVALID_PARAMS: () => new InvalidParams('invalid parameters: since: must be a duration'),
  CONFIRMATION_REQUIRED: () => new ConfirmationRequired('confirm with "c0ffee"', { confirm: 'c0ffee', expiresAt: '2026-01-01T00:00:00Z', plan: 'read the logs' }),
  UNAUTHENTICATED: () => new Unauthenticated('token expired'),
  FORBIDDEN: () => new Forbidden('access denied to this tenant'),
  NOT_FOUND: () => new NotFound('service acme/not-found not found'),
  CONFLICT: () => new Conflict('the logs are being rotated'),
  RATE_LIMITED: () => new RateLimited('rate limit exceeded; retry in 7 s', 7),
  UPSTREAM: () => new Upstream('Loki answered 500'),
  UNAVAILABLE: () => new Unavailable('Loki cannot be reached'),
};
const CODES = Object.keys(HTTP_STATUS) as ErrorCode[];
const appOf = (code: ErrorCode) => code.toLowerCase().replaceAll('_', '-');

let pds: TestServer;
let env: Record<string, string>;

beforeAll(async () => {
  const config = await testConfig();
  const real = await buildPlatform(config);
  const backend: PlatformBackend = Object.create(real.backend, {
    logs: {
      value: (team: string, app: string, options: Parameters<PlatformBackend['logs']>[2]) => {
        const fault = CODES.find((code) => appOf(code) === app);
        if (fault) throw FAULTS[fault]();
        return real.backend.logs(team, app, options);
      },
    },
  });
  const platform: Platform = Object.create(real, { backend: { value: backend } });
  pds = await startTestServer({ PDS_DATA_DIR: config.dataDir }, { platform });
  const created = await pds.api('root', 'POST', '/api/v1/operations/create-tenant/execute', { team_name: 'acme', admins: 'alice' });
  await waitForWorkflow(pds, 'root', created.body.workflowName);
  env = { ...(process.env as Record<string, string>), PDS_BASE_URL: pds.url, PDS_TOKEN: await pds.token('root') };
});
afterAll(() => pds?.stop());

/** Run `pds mcp` with these tool calls on stdin (then end it); resolves with each call's result, by index. */
async function callOverStdio(calls: { name: string; arguments: Record<string, unknown> }[]): Promise<any[]> {
  const child = spawn(process.execPath, ['bin/pds-src.js', 'mcp', '--toolsets', 'all'], { env, stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  const exited = once(child, 'exit');
  const killer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  const initialize = { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'codes-test', version: '1.0.0' } };
  const lines = [
    { jsonrpc: '2.0', id: 'init', method: 'initialize', params: initialize },
    { jsonrpc: '2.0', method: 'notifications/initialized' },
    ...calls.map((params, id) => ({ jsonrpc: '2.0', id, method: 'tools/call', params })),
  ];
  child.stdin.end(lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
  const [code] = (await exited) as [number | null];
  clearTimeout(killer);
  expect(code).toBe(0);
  const answers = stdout.split('\n').filter(Boolean).map((line) => JSON.parse(line));
  return calls.map((_call, id) => answers.find((a) => a.id === id)?.result);
}

describe('every error code, over REST and over pds mcp on stdio', () => {
  it('is the same code on both, with the body and message unchanged', async () => {
    const results = await callOverStdio(CODES.map((code) => ({ name: 'platform_get_logs', arguments: { team: 'acme', app: appOf(code) } })));
    for (const [i, code] of CODES.entries()) {
      const rest = await pds.api('root', 'GET', `/api/v1/logs/acme/${appOf(code)}`);
      const expected = FAULTS[code]();
      expect({ code, status: rest.status, header: rest.headers.get(ERROR_CODE_HEADER), body: rest.body }).toEqual({
        code,
        status: HTTP_STATUS[code],
        header: code,
        body: { error: expected.message },
      });
      expect({ code, isError: results[i]?.isError, meta: results[i]?._meta?.[ERROR_CODE_META], text: results[i]?.content?.[0]?.text }).toEqual({
        code,
        isError: true,
        meta: code,
        text: expected.message,
      });
    }
    // The structured fields travel back from their headers too.
    const confirm = results[CODES.indexOf('CONFIRMATION_REQUIRED')];
    expect(confirm.structuredContent).toEqual({ confirm: 'c0ffee', expiresAt: '2026-01-01T00:00:00Z', plan: 'read the logs' });
  });

  it('tells the two codes of status 400 apart when the server produces them the ordinary way', async () => {
    const [invalid, confirm] = await callOverStdio([
      { name: 'platform_rollback_service', arguments: { team_name: 'acme', component_name: 'web', target_tag: 'latest' } },
      { name: 'platform_delete_tenant', arguments: { team_name: 'acme' } },
    ]);
    // Before the code travelled in a header, every plain 400 came back to a stdio client as CONFIRMATION_REQUIRED.
    expect(invalid).toMatchObject({ isError: true, _meta: { [ERROR_CODE_META]: 'INVALID_PARAMS' } });
    expect(invalid.content[0].text).toMatch(/^invalid parameters: target_tag/);
    expect(confirm).toMatchObject({ isError: true, _meta: { [ERROR_CODE_META]: 'CONFIRMATION_REQUIRED' }, structuredContent: { confirm: expect.any(String) } });
    const rest = await pds.api('root', 'POST', '/api/v1/operations/rollback-service/execute', { team_name: 'acme', component_name: 'web', target_tag: 'latest' });
    expect([rest.status, rest.headers.get(ERROR_CODE_HEADER)]).toEqual([400, 'INVALID_PARAMS']);
  });
});

describe('every error code through the CLI', () => {
  /** `pds logs acme/<app>` as a process; resolves with its exit code and stderr. */
  async function pdsLogs(app: string): Promise<{ code: number | null; stderr: string }> {
    const child = spawn(process.execPath, [path.resolve('bin/pds-src.js'), 'logs', `acme/${app}`, '--server', pds.url], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const [code] = (await once(child, 'exit')) as [number | null];
    return { code, stderr };
  }

  it('exits 3 when not signed in and 1 for every other refusal, printing the server\'s message', async () => {
    const runs = await Promise.all(CODES.map((code) => pdsLogs(appOf(code))));
    for (const [i, code] of CODES.entries()) {
      const hint = code === 'UNAUTHENTICATED' ? ' (run "pds login")' : '';
      expect({ code, exit: runs[i]!.code, stderr: runs[i]!.stderr }).toEqual({
        code,
        exit: code === 'UNAUTHENTICATED' ? 3 : 1,
        stderr: `pds: ${FAULTS[code]().message}${hint}\n`,
      });
    }
  }, 120_000);
});
