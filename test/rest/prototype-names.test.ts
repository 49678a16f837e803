/**
 * Issue 7 item 7: names of `Object.prototype` members (`constructor`, `__proto__`, `toString`, `hasOwnProperty`,
 * `valueOf`, …) as tenant, service, workflow, operation or template names are names like any other: never a 500 and
 * never "found" when no such thing exists — over every REST endpoint and over MCP — and a tenant may even be called
 * `constructor`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allTools } from '../../tools/registry.js';
import { CLIENTS, connectHttp, textOf, type TestClient } from '../helpers/mcp-clients.js';
import { executeAndWait, registerRepository, startTestServer, waitForWorkflow, type TestServer } from '../helpers/server.js';

/** Every own property name of Object.prototype, and the lowercase ones that pass as DNS labels. */
const NAMES = [...new Set([...Object.getOwnPropertyNames(Object.prototype), '__proto__', 'prototype', 'tostring', 'valueof', 'hasownproperty'])];

let pds: TestServer;

const execute = (user: string, operation: string, params: Record<string, string>) => executeAndWait(pds, user, operation, params);

beforeAll(async () => {
  // Unlimited writes: this test sends far more than 20 executions a minute, and the write limit is not its subject.
  pds = await startTestServer({}, { writeLimiter: { consume: async () => {} } });
  await execute('root', 'create-tenant', { team_name: 'acme', admins: 'alice' });
  await registerRepository(pds, 'alice', 'acme', 'acme/web');
  await execute('alice', 'deploy-service', { action: 'onboard', team_name: 'acme', component_name: 'web', dockerfile_repo: 'acme/web', git_tag: '0.1.0', port: '8787' });
});

afterAll(() => pds.stop());

/** Each REST request a name can reach, as [method, path, body]. */
function requestsFor(name: string): [string, string, unknown?][] {
  const n = encodeURIComponent(name);
  return [
    ['GET', `/api/v1/tenants/${n}`],
    ['GET', `/api/v1/services?team=${n}`],
    ['GET', `/api/v1/services/${n}/web`],
    ['GET', `/api/v1/services/acme/${n}`],
    ['GET', `/api/v1/status/${n}/web`],
    ['GET', `/api/v1/status/acme/${n}`],
    ['GET', `/api/v1/logs/${n}/web`],
    ['GET', `/api/v1/logs/acme/${n}`],
    ['GET', `/api/v1/resources/${n}`],
    ['GET', `/api/v1/workflows/${n}`],
    ['GET', `/api/v1/repos?team=${n}`],
    ['GET', `/api/v1/operations/${n}`],
    ['POST', '/api/v1/repos/sync', { team: name }],
    ['POST', '/api/v1/repos/grant-access', { team_name: name, repo: 'acme/web' }],
    ['POST', `/api/v1/operations/${n}/execute`, { team_name: 'acme' }],
    ['POST', '/api/v1/operations/rollback-service/execute', { team_name: name, component_name: 'web', target_tag: '0.1.0' }],
    ['POST', '/api/v1/operations/rollback-service/execute', { team_name: 'acme', component_name: name, target_tag: '0.1.0' }],
    ['POST', '/api/v1/operations/preview-deploy/execute', { team_name: name, component_name: 'web', image_tag: '0.1.0', ttl_hours: '1' }],
    ['POST', '/api/v1/scaffold', { team_name: name, dockerfile_repo: 'acme/web' }],
    ['POST', '/api/v1/scaffold', { team_name: 'acme', files: ['package.json', name], file_contents: { 'package.json': `{"main":"${name}"}` } }],
    ['POST', '/api/v1/scaffold', { team_name: 'acme', files: ['package.json'], template: name }],
  ];
}

describe('prototype member names over REST', () => {
  it('never answers 500 and never finds what does not exist, for an admin and for a tenant admin', async () => {
    const wrong: string[] = [];
    for (const user of ['root', 'alice']) {
      for (const name of NAMES) {
        for (const [method, path, body] of requestsFor(name)) {
          const res = await pds.api(user, method, path, body);
          const empty = res.status === 200 && res.body.count === 0; // a filter that matches nothing is not "found"
          const scaffolded = res.status === 200 && path === '/api/v1/scaffold'; // renders files, finds nothing
          const submitted = res.status === 200 && res.body.status === 'submitted'; // checked below: it must fail
          const refused = [400, 403, 404].includes(res.status) && typeof res.body.error === 'string';
          if (submitted) {
            const done = await waitForWorkflow(pds, user, res.body.workflowName);
            if (done.audit.status !== 'failed') wrong.push(`${user} ${method} ${path} ${JSON.stringify(body)} → workflow ${done.audit.status}`);
          } else if (!(refused || empty || scaffolded)) {
            wrong.push(`${user} ${method} ${path} ${JSON.stringify(body)} → ${res.status} ${JSON.stringify(res.body).slice(0, 160)}`);
          }
        }
      }
    }
    expect(wrong).toEqual([]);
  });

  it('serves no documentation asset by such a name', async () => {
    for (const name of NAMES) {
      const res = await pds.api(undefined, 'GET', `/docs/assets/${encodeURIComponent(name)}`);
      expect(res, name).toMatchObject({ status: 404, body: { error: expect.any(String) } });
    }
  });

  it('fails an onboarding into the non-existent tenant "constructor"', async () => {
    const res = await pds.api('root', 'POST', '/api/v1/operations/deploy-service/execute', {
      action: 'onboard', team_name: 'constructor', component_name: 'web', dockerfile_repo: 'acme/web', git_tag: '0.1.0', port: '8080',
    });
    if (res.status === 200) expect((await waitForWorkflow(pds, 'root', res.body.workflowName)).audit.status).toBe('failed');
    else expect(res.status).toBe(404);
    expect((await pds.api('root', 'GET', '/api/v1/services/constructor/web')).status).toBe(404);
    expect((await pds.api('root', 'GET', '/api/v1/services')).body.items.map((s: any) => s.team)).toEqual(['acme']);
  });
});

describe.each(CLIENTS)('prototype member names over MCP ($name)', (kind) => {
  let client: TestClient;
  beforeAll(async () => {
    client = await connectHttp(kind, `${pds.url}/mcp?toolsets=all`, { authorization: `Bearer ${await pds.token('alice')}` });
  });
  afterAll(() => client.close());

  it('answers a tool error (not "internal error") from every tool that takes a name', async () => {
    const wrong: string[] = [];
    const calls: [string, Record<string, unknown>][] = [];
    for (const name of NAMES) {
      calls.push(['platform_get_tenant', { name }], ['platform_get_resources', { tenant: name }], ['platform_get_workflow', { name }]);
      calls.push(['platform_get_service', { team: name, app: 'web' }], ['platform_get_status', { team: 'acme', app: name }]);
      calls.push(['platform_get_logs', { team: name, app: 'web' }], ['platform_list_repos', { team: name }]);
      calls.push(['platform_get_operation', { name }], ['platform_execute_operation', { name, parameters: { team_name: 'acme' } }]);
      calls.push(['platform_rollback_service', { team_name: name, component_name: 'web', target_tag: '0.1.0' }]);
    }
    for (const [tool, args] of calls) {
      expect(allTools.map((t) => t.name)).toContain(tool);
      const result = await client.callTool({ name: tool, arguments: args });
      if (!result.isError || textOf(result) === 'internal error' || textOf(result) === '') {
        wrong.push(`${tool} ${JSON.stringify(args)} → ${JSON.stringify(result).slice(0, 160)}`);
      }
    }
    expect(wrong).toEqual([]);
  });
});

describe('a tenant called "constructor"', () => {
  it('can be created, found, deployed into and deleted like any other, without touching other tenants', async () => {
    await execute('root', 'create-tenant', { team_name: 'constructor', admins: 'carol' });
    const tenant = await pds.api('carol', 'GET', '/api/v1/tenants/constructor');
    expect(tenant).toMatchObject({ status: 200, body: { tenant: { name: 'constructor', members: [{ userId: 'carol', role: 'admin' }] } } });
    expect((await pds.api('carol', 'GET', '/api/v1/tenants/acme')).status).toBe(403);
    await registerRepository(pds, 'carol', 'constructor', 'constructor/tostring');
    const done = await execute('carol', 'deploy-service', {
      action: 'onboard', team_name: 'constructor', component_name: 'valueof', dockerfile_repo: 'constructor/tostring', git_tag: '0.1.0', port: '8080',
    });
    expect(done.audit.status).toBe('succeeded');
    expect((await pds.api('carol', 'GET', '/api/v1/services/constructor/valueof')).status).toBe(200);
    expect((await pds.api('carol', 'GET', '/api/v1/services/constructor/tostring')).status).toBe(404);
  });
});
