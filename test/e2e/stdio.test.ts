/**
 * `pds mcp`: the same tools over stdio, driven by every client of test/helpers/mcp-clients.ts through its stdio
 * transport (as an IDE would: v1 and v2 SDK clients, protocol 2025-11-25 and 2026-07-28), calling a running pds over
 * REST. The raw-wire behaviour (end of input, malformed lines) is in stdio-wire.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLIENTS, connectStdio, textOf, type StdioTarget, type TestClient } from '../helpers/mcp-clients.js';
import { registerRepository, startTestServer, waitForWorkflow, type TestServer } from '../helpers/server.js';

let pds: TestServer;
let target: StdioTarget;

beforeAll(async () => {
  pds = await startTestServer();
  const created = await pds.api('root', 'POST', '/api/v1/operations/create-tenant/execute', { team_name: 'acme', admins: 'alice' });
  await waitForWorkflow(pds, 'root', created.body.workflowName);
  for (const repo of ['acme/web1', 'acme/web2', 'acme/web3']) await registerRepository(pds, 'alice', 'acme', repo);
  target = {
    command: process.execPath,
    args: ['bin/pds-src.js', 'mcp', '--toolsets', 'all'],
    env: { ...(process.env as Record<string, string>), PDS_BASE_URL: pds.url, PDS_TOKEN: await pds.token('alice') },
  };
});

afterAll(() => pds.stop());

describe.each(CLIENTS)('pds mcp with the $name', (kind) => {
  const app = `web${CLIENTS.indexOf(kind) + 1}`;
  let client: TestClient;
  beforeAll(async () => {
    client = await connectStdio(kind, target);
  });
  afterAll(() => client?.close());

  it('lists the same tools and runs an operation through the server', async () => {
    expect(client.protocol).toBe(kind.protocol);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toContain('platform_deploy_service');
    const onboard = await client.callTool({
      name: 'platform_deploy_service',
      arguments: { action: 'onboard', team_name: 'acme', component_name: app, dockerfile_repo: `acme/${app}`, git_tag: '0.1.0', port: '8787' },
    });
    expect(onboard.isError).toBeFalsy();
    const { workflowName, message } = onboard.structuredContent as { workflowName: string; message: string };
    // The bridge asks the server for MCP words (X-PDS-Door: mcp): the agent reads tools, not REST paths.
    expect(message).toContain(`platform_get_workflow {"name":"${workflowName}","wait_seconds":45}`);
    expect(message).not.toMatch(/\/api\/v1\//);
    const done = await waitForWorkflow(pds, 'alice', workflowName);
    expect(done.audit).toMatchObject({ status: 'succeeded', userId: 'alice' });
    const logs = await client.callTool({ name: 'platform_get_logs', arguments: { team: 'acme', app, lines: 2, since: '15m' } });
    expect(logs.structuredContent.count).toBe(2);
  });

  it("passes the server's error message through unchanged", async () => {
    const res = await client.callTool({ name: 'platform_get_tenant', arguments: { name: 'umbrella' } });
    expect(res.isError).toBe(true);
    expect(textOf(res)).toBe('access denied to this tenant: umbrella');
    const bad = await client.callTool({ name: 'platform_rollback_service', arguments: { team_name: 'acme', component_name: app, target_tag: 'latest' } });
    expect(textOf(bad)).toMatch(/^invalid parameters: target_tag: must be a SemVer tag/);
  });
});
