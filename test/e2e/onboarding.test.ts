/**
 * `docs/api.md#first-time-onboarding-sequence`, steps 4-6, against a started pds: once over REST (as curl and CI would)
 * and over MCP (as an agent would) with every client of test/helpers/mcp-clients.ts: the v1 and v2 SDK clients over
 * Streamable HTTP, on protocol 2025-11-25 and 2026-07-28.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLIENTS, connectHttp, textOf } from '../helpers/mcp-clients.js';
import { registerRepository, startTestServer, waitForWorkflow, type TestServer } from '../helpers/server.js';

let pds: TestServer;

beforeAll(async () => {
  pds = await startTestServer();
  const created = await pds.api('root', 'POST', '/api/v1/operations/create-tenant/execute', {
    team_name: 'acme',
    display_name: 'Acme',
    admins: 'alice',
  });
  expect(created.status).toBe(200);
  expect((await waitForWorkflow(pds, 'root', created.body.workflowName)).audit.status).toBe('succeeded');
  // Step 3: the platform is given access to the repositories (sandbox: grant-access records the app installation).
  for (const repo of ['acme/web', 'acme/ghost']) await registerRepository(pds, 'alice', 'acme', repo);
});

afterAll(() => pds.stop());

describe('onboarding over REST', () => {
  it('onboards at 0.1.0, verifies health, then the CI deploy job ships 0.1.1', async () => {
    // Step 4: onboard.
    const onboard = await pds.api('alice', 'POST', '/api/v1/operations/deploy-service/execute', {
      action: 'onboard',
      team_name: 'acme',
      component_name: 'web',
      dockerfile_repo: 'acme/web',
      git_tag: '0.1.0',
      port: '8787',
      service_template: 'default',
    });
    expect(onboard.status).toBe(200);
    expect(onboard.body).toMatchObject({ operation: 'deploy-service', status: 'submitted' });
    expect(Object.keys(onboard.body).sort()).toEqual(['message', 'operation', 'status', 'workflowName']);

    // Step 5: when the workflow reports succeeded, the service is synced and healthy on <team>-<service>.<domain>.
    const done = await waitForWorkflow(pds, 'alice', onboard.body.workflowName);
    expect(done.audit).toMatchObject({ status: 'succeeded', userId: 'alice', operation: 'deploy-service', riskLevel: 'medium' });
    expect(done.audit.parameters).toMatchObject({ action: 'onboard', git_tag: '0.1.0', port: '8787' });
    const status = await pds.api('alice', 'GET', '/api/v1/status/acme/web');
    expect(status.body).toEqual({
      argocd: { name: 'acme-web', syncStatus: 'Synced', healthStatus: 'Healthy', message: expect.any(String) },
      service: { team: 'acme', name: 'web', imageTag: '0.1.0', host: 'acme-web.apps.test' },
    });
    const service = await pds.api('alice', 'GET', '/api/v1/services/acme/web');
    expect(service.body).toEqual({
      team: 'acme',
      name: 'web',
      imageTag: '0.1.0',
      host: 'acme-web.apps.test',
      port: '8787',
      componentType: 'base-service',
      hasDatabase: false,
    });

    // Step 6: the CI deploy job's exact request deploys the bumped tag with no human action.
    const deploy = await pds.api('alice', 'POST', '/api/v1/operations/deploy-service/execute', {
      action: 'deploy',
      team_name: 'acme',
      component_name: 'web',
      dockerfile_repo: 'acme/web',
      git_tag: '0.1.1',
    });
    expect(deploy.status).toBe(200);
    expect((await waitForWorkflow(pds, 'alice', deploy.body.workflowName)).audit.status).toBe('succeeded');
    expect((await pds.api('alice', 'GET', '/api/v1/services/acme/web')).body.imageTag).toBe('0.1.1');

    // The audit trail has both, newest first, without `message`.
    const audit = await pds.api('alice', 'GET', '/api/v1/audit');
    expect(audit.body.items.slice(0, 2).map((e: any) => e.workflowName)).toEqual([
      deploy.body.workflowName,
      onboard.body.workflowName,
    ]);
    expect(audit.body.items[0]).not.toHaveProperty('message');
  });

  it('refuses at once, auditing nothing, a deploy of a service that was never onboarded, naming the onboarding path', async () => {
    // Issue 11 item 4: this used to be accepted and fail inside its workflow; now the preflight refuses it with 404.
    const before = (await pds.api('alice', 'GET', '/api/v1/audit')).body.count;
    const res = await pds.api('alice', 'POST', '/api/v1/operations/deploy-service/execute', {
      action: 'deploy',
      team_name: 'acme',
      component_name: 'ghost',
      dockerfile_repo: 'acme/ghost',
      git_tag: '0.1.0',
    });
    expect(res.status).toBe(404);
    expect(res.body.error).toMatch(/^service not found: acme\/ghost; onboard it first: POST \/api\/v1\/operations\/deploy-service\/execute \{"action":"onboard"/);
    expect((await pds.api('alice', 'GET', '/api/v1/audit')).body.count).toBe(before);
  });
});

describe.each(CLIENTS)('onboarding over MCP (Streamable HTTP), $name', (kind) => {
  // Each client onboards a service of its own, so the three runs do not see each other's work.
  const app = `api${CLIENTS.indexOf(kind) + 1}`;
  const connect = async (user: string, toolsets = 'all') =>
    connectHttp(kind, `${pds.url}/mcp?toolsets=${toolsets}`, { Authorization: `Bearer ${await pds.token(user)}` });

  it('runs onboarding with tools and gets structured results equal to the REST bodies', async () => {
    const client = await connect('alice', 'observe,deploy,repos');
    try {
      expect(client.protocol).toBe(kind.protocol);
      const { tools } = await client.listTools();
      const names = tools.map((t) => t.name);
      for (const expected of ['platform_deploy_service', 'platform_grant_repo_access', 'platform_sync_repos', 'platform_get_status']) {
        expect(names).toContain(expected);
      }

      // Step 3: grant access and sync.
      const grant = await client.callTool({ name: 'platform_grant_repo_access', arguments: { team_name: 'acme', repo: `acme/${app}` } });
      expect(grant.isError).toBeFalsy();
      expect(grant.structuredContent.url).toMatch(/^https:\/\/github\.com\/apps\/[^/]+\/installations\/new/);
      const sync = await client.callTool({ name: 'platform_sync_repos', arguments: { team: 'acme' } });
      expect(sync.structuredContent.added).toEqual([`acme/${app}`]);

      // Step 4.
      const onboard = await client.callTool({
        name: 'platform_deploy_service',
        arguments: {
          action: 'onboard',
          team_name: 'acme',
          component_name: app,
          dockerfile_repo: `acme/${app}`,
          git_tag: '0.1.0',
          port: '8000',
          service_template: 'default',
          health_check_path: '/api/health',
        },
      });
      expect(onboard.isError).toBeFalsy();
      const { workflowName, status } = onboard.structuredContent as { workflowName: string; status: string };
      expect(status).toBe('submitted');

      // Step 5: poll the workflow tool until it is final.
      let audit: any;
      const deadline = Date.now() + 20_000;
      for (;;) {
        const wf = await client.callTool({ name: 'platform_get_workflow', arguments: { name: workflowName } });
        audit = wf.structuredContent.audit;
        if (audit.status !== 'submitted' || Date.now() > deadline) break;
        await new Promise((r) => setTimeout(r, 20));
      }
      expect(audit.status).toBe('succeeded');
      const mcpStatus = await client.callTool({ name: 'platform_get_status', arguments: { team: 'acme', app } });
      const restStatus = await pds.api('alice', 'GET', `/api/v1/status/acme/${app}`);
      expect(mcpStatus.structuredContent).toEqual(restStatus.body);
      expect(JSON.parse(textOf(mcpStatus))).toEqual(restStatus.body);
      expect(restStatus.body.argocd).toMatchObject({ syncStatus: 'Synced', healthStatus: 'Healthy' });

      // The health check path was used by the sandbox's verification step.
      const logs = await client.callTool({ name: 'platform_get_logs', arguments: { team: 'acme', app, lines: 1000 } });
      expect(logs.structuredContent.lines.map((l: any) => l.line).join('\n')).toContain('/api/health');
    } finally {
      await client.close();
    }
  });

  it('answers bad arguments, unknown names and forbidden calls as isError results with the REST message', async () => {
    const alice = await connect('alice');
    const mallory = await connect('mallory');
    try {
      const args = { action: 'deploy', team_name: 'acme', component_name: 'web', git_tag: 'v1.0', dockerfile_repo: 'acme/web' };
      const bad = await alice.callTool({ name: 'platform_deploy_service', arguments: args });
      const rest = await pds.api('alice', 'POST', '/api/v1/operations/deploy-service/execute', args);
      expect(rest.status).toBe(400);
      expect(bad.isError).toBe(true);
      expect(textOf(bad)).toBe(rest.body.error);
      expect(rest.body.error).toMatch(/git_tag: must be a SemVer tag/);

      const missing = await alice.callTool({ name: 'platform_get_status', arguments: { team: 'acme', app: 'nope' } });
      expect(missing.isError).toBe(true);
      expect(textOf(missing)).toBe('GitOps application not found: acme-nope');

      const denied = await mallory.callTool({ name: 'platform_rollback_service', arguments: { team_name: 'acme', component_name: 'web', target_tag: '0.1.0' } });
      expect(denied.isError).toBe(true);
      expect(textOf(denied)).toBe('access denied to this tenant: acme');

      const generic = await alice.callTool({ name: 'platform_execute_operation', arguments: { name: 'nope', parameters: {} } });
      expect(generic.isError).toBe(true);
      expect(textOf(generic)).toMatch(/^operation not found: "nope"/);
    } finally {
      await alice.close();
      await mallory.close();
    }
  });
});

describe('MCP without a token', () => {
  it('refuses MCP without a token with 401 and a WWW-Authenticate challenge', async () => {
    const res = await fetch(`${pds.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toMatch(/^Bearer /);
    expect(await res.json()).toEqual({ error: expect.stringMatching(/missing bearer token/) });
  });
});
