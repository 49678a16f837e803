/**
 * The MCP Inspector CLI 0.17.2 (the last release that runs on Node 20) against a started pds, over Streamable HTTP
 * and over `pds mcp` on stdio. `npx @modelcontextprotocol/inspector@0.17.2 --cli …` runs exactly this entry point of
 * its `@modelcontextprotocol/inspector-cli` package, pinned here as a devDependency so the test needs no download.
 */
import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';

const run = promisify(execFile);
const inspectorBuild = path.join(path.dirname(createRequire(import.meta.url).resolve('@modelcontextprotocol/inspector-cli/package.json')), 'build');
const pdsBin = path.resolve('bin/pds.js');

let pds: TestServer;
beforeAll(async () => {
  pds = await startTestServer();
});
afterAll(() => pds.stop());

/**
 * Run the Inspector CLI; resolves with its parsed JSON output. It runs in its own build directory: 0.17.2 looks for
 * its package.json relative to the working directory (`fs.existsSync('../package.json')`) before importing it
 * relative to itself, and fails from anywhere else.
 */
async function inspector(args: string[]): Promise<any> {
  const { stdout } = await run(process.execPath, [path.join(inspectorBuild, 'cli.js'), '--cli', ...args], { timeout: 20_000, cwd: inspectorBuild });
  return JSON.parse(stdout);
}

it('lists and calls tools over Streamable HTTP', async () => {
  const auth = `Authorization: Bearer ${await pds.token('root')}`;
  const listed = await inspector([`${pds.url}/mcp`, '--method', 'tools/list', '--header', auth]);
  expect(listed.tools.map((t: any) => t.name)).toContain('platform_deploy_service');
  const called = await inspector([`${pds.url}/mcp?toolsets=all`, '--method', 'tools/call', '--tool-name', 'platform_list_operations', '--header', auth]);
  expect(called.isError).toBeFalsy();
  expect(called.structuredContent.count).toBe(8);
});

it('lists tools of pds mcp over stdio', async () => {
  const listed = await inspector([
    '-e', `PDS_BASE_URL=${pds.url}`,
    '-e', `PDS_TOKEN=${await pds.token('root')}`,
    '--method', 'tools/list',
    '--', process.execPath, pdsBin, 'mcp', '--toolsets', 'tenants',
  ]);
  expect(listed.tools.map((t: any) => t.name)).toEqual(['platform_list_tenants', 'platform_get_tenant', 'platform_create_tenant', 'platform_delete_tenant']);
});
