/**
 * The MCP Inspector CLI 0.17.2 (the last release that runs on Node 20) against a started pds, over Streamable HTTP
 * and over `pds mcp` on stdio. `npx @modelcontextprotocol/inspector@0.17.2 --cli …` runs exactly this entry point of
 * its `@modelcontextprotocol/inspector-cli` package, pinned here as a devDependency so the test needs no download.
 * The README's Inspector command (`npm run -s inspector -- …`, issue 19 item 8) is run as written, in bash, from the
 * checkout, with only its base URL pointed at the test's pds.
 */
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { registerRepository, startTestServer, waitForWorkflow, type TestServer } from '../helpers/server.js';

const run = promisify(execFile);
const inspectorBuild = path.join(path.dirname(createRequire(import.meta.url).resolve('@modelcontextprotocol/inspector-cli/package.json')), 'build');
const pdsBin = path.resolve('bin/pds-src.js');

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

it("runs the README's Inspector command as written, from the checkout, offline", async () => {
  const readme = await readFile('README.md', 'utf8');
  const commands = [...readme.matchAll(/`([^`]*--method tools\/list[^`]*)`/g)].map((m) => m[1]!);
  expect(commands).toHaveLength(1);
  const command = commands[0]!;
  expect(command).toContain('http://localhost:8080/mcp');
  const { stdout } = await run('bash', ['-c', command.replace('http://localhost:8080', pds.url)], {
    timeout: 30_000,
    env: { ...process.env, PDS_TOKEN: await pds.token('root'), npm_config_offline: 'true' },
  });
  expect(JSON.parse(stdout).tools.map((t: any) => t.name)).toContain('platform_deploy_service');
});

it('runs a stdio command given with a relative path through the same script', async () => {
  const { stdout } = await run(process.execPath, ['scripts/inspector.js', '--method', 'tools/list', '--', process.execPath, 'bin/pds-src.js', 'mcp', '--toolsets', 'tenants'], {
    timeout: 30_000,
    env: { ...process.env, PDS_BASE_URL: pds.url, PDS_TOKEN: await pds.token('root') },
  });
  expect(JSON.parse(stdout).tools.map((t: any) => t.name)).toContain('platform_create_tenant');
});

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
  expect(listed.tools.map((t: any) => t.name)).toEqual(['platform_list_tenants', 'platform_get_tenant', 'platform_get_tenant_policy', 'platform_set_tenant_policy', 'platform_list_tenant_events', 'platform_list_approvals', 'platform_review_approval', 'platform_get_tenant_webhooks', 'platform_set_tenant_webhooks', 'platform_list_webhook_deliveries', 'platform_create_tenant', 'platform_delete_tenant']);
});

it('sends a numeric --tool-arg as a number, which the operation accepts and records as text (issue 11 item 9)', async () => {
  const created = await pds.api('root', 'POST', '/api/v1/operations/create-tenant/execute', { team_name: 'insp', admins: 'root' });
  await waitForWorkflow(pds, 'root', created.body.workflowName);
  await registerRepository(pds, 'root', 'insp', 'insp/web');
  const auth = `Authorization: Bearer ${await pds.token('root')}`;
  const called = await inspector([
    `${pds.url}/mcp`, '--method', 'tools/call', '--tool-name', 'platform_deploy_service', '--header', auth,
    '--tool-arg', 'action=onboard', 'team_name=insp', 'component_name=web', 'dockerfile_repo=insp/web', 'git_tag="0.1.0"', 'port=8080',
  ]);
  expect(called.isError, JSON.stringify(called)).toBeFalsy();
  const done = await waitForWorkflow(pds, 'root', called.structuredContent.workflowName);
  expect(done.audit.parameters.port).toBe('8080');

  // A confirmation request: an isError result whose structuredContent the Inspector's v1 client validates against the
  // listed output schema (it lists tools before calling) — and accepts.
  const asked = await inspector([
    `${pds.url}/mcp`, '--method', 'tools/call', '--tool-name', 'platform_retire_service', '--header', auth,
    '--tool-arg', 'team_name=insp', 'component_name=web',
  ]);
  expect(asked.isError).toBe(true);
  expect(asked.structuredContent).toEqual({ confirm: expect.any(String), expiresAt: expect.any(String), plan: expect.stringContaining('insp/web') });
});

it('lists resources, resource templates and prompts (issue 11 item 7)', async () => {
  const auth = `Authorization: Bearer ${await pds.token('root')}`;
  const resources = await inspector([`${pds.url}/mcp`, '--method', 'resources/list', '--header', auth]);
  expect(resources.resources.map((r: any) => r.uri)).toContain('pds://operations');
  const templates = await inspector([`${pds.url}/mcp`, '--method', 'resources/templates/list', '--header', auth]);
  expect(templates.resourceTemplates.map((t: any) => t.uriTemplate)).toContain('pds://workflows/{name}');
  const read = await inspector([`${pds.url}/mcp`, '--method', 'resources/read', '--uri', 'pds://operations', '--header', auth]);
  expect(JSON.parse(read.contents[0].text).count).toBe(8);
  const prompts = await inspector([`${pds.url}/mcp`, '--method', 'prompts/list', '--header', auth]);
  expect(prompts.prompts.map((p: any) => p.name)).toEqual(['onboard-repository', 'diagnose-service', 'rollback-service']);
});
