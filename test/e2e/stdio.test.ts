/**
 * `pds mcp`: the same tools over stdio, driven by the SDK's Client through StdioClientTransport (as an IDE would),
 * calling a running pds over REST.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { registerRepository, startTestServer, waitForWorkflow, type TestServer } from '../helpers/server.js';

let pds: TestServer;
let client: Client;

beforeAll(async () => {
  pds = await startTestServer();
  const created = await pds.api('root', 'POST', '/api/v1/operations/create-tenant/execute', { team_name: 'acme', admins: 'alice' });
  await waitForWorkflow(pds, 'root', created.body.workflowName);
  await registerRepository(pds, 'alice', 'acme', 'acme/web');
  client = new Client({ name: 'ide', version: '1.0.0' });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: ['bin/pds.js', 'mcp'],
      env: { ...(process.env as Record<string, string>), PDS_BASE_URL: pds.url, PDS_TOKEN: await pds.token('alice') },
      stderr: 'ignore',
    }),
  );
});

afterAll(async () => {
  await client?.close();
  await pds.stop();
});

it('lists the same tools and runs an operation through the server', async () => {
  const { tools } = await client.listTools();
  expect(tools.map((t) => t.name)).toContain('platform_deploy_service');
  const onboard = await client.callTool({
    name: 'platform_deploy_service',
    arguments: { action: 'onboard', team_name: 'acme', component_name: 'web', dockerfile_repo: 'acme/web', git_tag: '0.1.0', port: '8787' },
  });
  expect(onboard.isError).toBeFalsy();
  const { workflowName } = onboard.structuredContent as { workflowName: string };
  const done = await waitForWorkflow(pds, 'alice', workflowName);
  expect(done.audit).toMatchObject({ status: 'succeeded', userId: 'alice' });
  const logs = await client.callTool({ name: 'platform_get_logs', arguments: { team: 'acme', app: 'web', lines: 2, since: '15m' } });
  expect((logs.structuredContent as any).count).toBe(2);
});

it('passes the server\'s error message through unchanged', async () => {
  const res = await client.callTool({ name: 'platform_get_tenant', arguments: { name: 'umbrella' } });
  expect(res.isError).toBe(true);
  expect((res.content as any)[0].text).toBe('access denied to this tenant');
  const bad = await client.callTool({ name: 'platform_rollback_service', arguments: { team_name: 'acme', component_name: 'web', target_tag: 'latest' } });
  expect((bad.content as any)[0].text).toMatch(/^invalid parameters: target_tag: must be a SemVer tag/);
});
