/**
 * Issue 7 item 16: a caller who may not see a workflow cannot tell it from one that does not exist — the same 404 and
 * the same body, over REST and MCP.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLIENTS, connectHttp, textOf } from '../helpers/mcp-clients.js';
import { startTestServer, waitForWorkflow, type TestServer } from '../helpers/server.js';

let pds: TestServer;
let secret: string;

beforeAll(async () => {
  pds = await startTestServer();
  for (const [team, admin] of [['acme', 'alice'], ['umbrella', 'uma']]) {
    const res = await pds.api('root', 'POST', '/api/v1/operations/create-tenant/execute', { team_name: team, admins: admin });
    expect(res.status).toBe(200);
    await waitForWorkflow(pds, 'root', res.body.workflowName);
    // umbrella's own workflow, which uma may see and alice may not. (It was a provision-database of a service that
    // does not exist, which the preflight of issue 11 now refuses before any workflow exists.)
    if (team === 'umbrella') secret = res.body.workflowName;
  }
  await waitForWorkflow(pds, 'uma', secret);
});

afterAll(() => pds.stop());

describe("another tenant's workflow", () => {
  it('is answered exactly like a missing one over REST', async () => {
    const missingName = secret.replace(/-[a-z0-9]+$/, '-zzzzz');
    const hidden = await pds.api('alice', 'GET', `/api/v1/workflows/${secret}`);
    const missing = await pds.api('alice', 'GET', `/api/v1/workflows/${missingName}`);
    expect(missing.status).toBe(404);
    expect(hidden.status).toBe(missing.status);
    expect(hidden.body).toEqual({ error: missing.body.error.replace(missingName, secret) });
    // The owner and platform admins still see it.
    expect((await pds.api('uma', 'GET', `/api/v1/workflows/${secret}`)).status).toBe(200);
    expect((await pds.api('root', 'GET', `/api/v1/workflows/${secret}`)).status).toBe(200);
  });

  it.each(CLIENTS)('is answered exactly like a missing one over MCP ($name)', async (kind) => {
    const client = await connectHttp(kind, `${pds.url}/mcp?toolsets=all`, { authorization: `Bearer ${await pds.token('alice')}` });
    try {
      const missingName = secret.replace(/-[a-z0-9]+$/, '-zzzzz');
      const hidden = await client.callTool({ name: 'platform_get_workflow', arguments: { name: secret } });
      const missing = await client.callTool({ name: 'platform_get_workflow', arguments: { name: missingName } });
      expect(hidden.isError).toBe(true);
      expect(textOf(hidden)).toBe(textOf(missing).replace(missingName, secret));
    } finally {
      await client.close();
    }
  });
});
