/**
 * Inputs agents send and words they read (issue 11 items 9 and 10), against a started pds with every client of
 * test/helpers/mcp-clients.ts: numbers for the contract's numeric text parameters are accepted and recorded as text; the
 * per-action required fields of `platform_deploy_service` are in its published JSON Schema, so a client can check a
 * call before sending it; every problem is reported at once; and results name the next call in the words of the
 * door the caller used (MCP tools and arguments, REST paths).
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWriteLimiter } from '../../rest/ratelimit.js';
import { CLIENTS, connectHttp, textOf, type TestClient } from '../helpers/mcp-clients.js';
import { registerRepository, startTestServer, waitForWorkflow, type TestServer } from '../helpers/server.js';

let pds: TestServer;
beforeAll(async () => {
  pds = await startTestServer({}, { writeLimiter: createWriteLimiter({ max: 1000 }) });
  const created = await pds.api('root', 'POST', '/api/v1/operations/create-tenant/execute', { team_name: 'acme', admins: 'alice' });
  await waitForWorkflow(pds, 'root', created.body.workflowName);
});
afterAll(() => pds.stop());

const connect = async (kind: (typeof CLIENTS)[number], user = 'alice') =>
  connectHttp(kind, `${pds.url}/mcp?toolsets=all`, { Authorization: `Bearer ${await pds.token(user)}` });
const recorded = async (workflowName: string) => (await pds.api('root', 'GET', `/api/v1/workflows/${workflowName}`)).body.audit.parameters;

describe.each(CLIENTS)('numbers for numeric parameters, $name', (kind) => {
  const app = `num${CLIENTS.indexOf(kind) + 1}`;
  let client: TestClient;
  beforeAll(async () => {
    await registerRepository(pds, 'alice', 'acme', `acme/${app}`);
    client = await connect(kind);
    await client.listTools();
  });
  afterAll(() => client?.close());

  it('accepts port and ttl_hours as numbers and records them as the contract\'s text', async () => {
    const onboard = await client.callTool({
      name: 'platform_deploy_service',
      arguments: { action: 'onboard', team_name: 'acme', component_name: app, dockerfile_repo: `acme/${app}`, git_tag: '0.1.0', port: 8080 },
    });
    expect(onboard.isError, textOf(onboard)).toBeFalsy();
    expect(await recorded(onboard.structuredContent.workflowName)).toMatchObject({ port: '8080' });
    await waitForWorkflow(pds, 'alice', onboard.structuredContent.workflowName);
    expect((await pds.api('alice', 'GET', `/api/v1/services/acme/${app}`)).body.port).toBe('8080');
    const preview = await client.callTool({
      name: 'platform_deploy_preview',
      arguments: { team_name: 'acme', component_name: app, image_tag: '0.1.0', ttl_hours: 24 },
    });
    expect(preview.isError, textOf(preview)).toBeFalsy();
    expect(await recorded(preview.structuredContent.workflowName)).toMatchObject({ ttl_hours: '24' });
  });

  it('still refuses numbers that break the rule, with the rule\'s own message', async () => {
    for (const [port, message] of [[70000, /port: must be a port number 1-65535/], [80.5, /port: must be a port number/], [0, /port: must be a port number/]] as const) {
      const res = await client.callTool({
        name: 'platform_deploy_service',
        arguments: { action: 'onboard', team_name: 'acme', component_name: 'other', dockerfile_repo: 'acme/other', git_tag: '0.1.0', port },
      });
      expect(res.isError, String(port)).toBe(true);
      expect(textOf(res)).toMatch(message);
    }
  });

  it('reports every missing field at once', async () => {
    const res = await client.callTool({ name: 'platform_deploy_service', arguments: { action: 'onboard', team_name: 'acme' } });
    expect(res.isError).toBe(true);
    for (const field of ['component_name', 'git_tag', 'dockerfile_repo', 'port']) expect(textOf(res)).toMatch(new RegExp(`${field}: is required`));
  });

  it('names the next calls as tools with their arguments, and links the workflow', async () => {
    const rollback = await client.callTool({ name: 'platform_rollback_service', arguments: { team_name: 'acme', component_name: app, target_tag: '0.1.0' } });
    expect(rollback.isError, textOf(rollback)).toBeFalsy();
    const { workflowName, message } = rollback.structuredContent;
    expect(message).toContain(`follow it with platform_get_workflow {"name":"${workflowName}","wait_seconds":45}`);
    expect(message).toContain(`platform_get_status {"team":"acme","app":"${app}"}`);
    expect(message).toMatch(/usually about 1 minute/);
    expect(message).not.toMatch(/\/api\/v1/);
    expect(rollback.content).toContainEqual(expect.objectContaining({ type: 'resource_link', uri: `pds://workflows/${workflowName}`, name: workflowName }));
    const missing = await client.callTool({ name: 'platform_rollback_service', arguments: { team_name: 'acme', component_name: 'nope', target_tag: '0.1.0' } });
    expect(textOf(missing)).toBe('service not found: acme/nope; the tenant\'s services: platform_list_services {"team":"acme"}');
  });
});

describe('REST words', () => {
  it('accepts numbers in a JSON body, and names the next calls as paths', async () => {
    await registerRepository(pds, 'alice', 'acme', 'acme/restnum');
    const res = await pds.api('alice', 'POST', '/api/v1/operations/deploy-service/execute', {
      action: 'onboard', team_name: 'acme', component_name: 'restnum', dockerfile_repo: 'acme/restnum', git_tag: '0.1.0', port: 8787,
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['message', 'operation', 'status', 'workflowName']);
    expect(res.body.message).toContain(`follow it with GET /api/v1/workflows/${res.body.workflowName}?wait_seconds=45 until`);
    expect(res.body.message).toContain('GET /api/v1/status/acme/restnum');
    expect(res.body.message).not.toMatch(/platform_/);
    expect(await recorded(res.body.workflowName)).toMatchObject({ port: '8787' });
    const tenant = await pds.api('root', 'POST', '/api/v1/operations/create-tenant/execute', { team_name: 'numco', cpu: 2, memory: '4Gi', pods: 10 });
    expect(tenant.status, JSON.stringify(tenant.body)).toBe(200);
    expect(await recorded(tenant.body.workflowName)).toMatchObject({ cpu: '2', pods: '10' });
  });

  it('keeps GET /api/v1/operations meaningful: numeric parameters are listed as string, per-action fields not required', async () => {
    const deploy = (await pds.api('alice', 'GET', '/api/v1/operations/deploy-service')).body;
    expect(deploy.parameters.find((p: any) => p.name === 'port')).toMatchObject({ type: 'string', required: false, description: expect.stringMatching(/Required for onboard/) });
    const preview = (await pds.api('alice', 'GET', '/api/v1/operations/preview-deploy')).body;
    expect(preview.parameters.find((p: any) => p.name === 'ttl_hours')).toMatchObject({ type: 'string', required: true });
  });
});

describe('per-action required fields in the published schema (checked before calling)', () => {
  it.each(CLIENTS)('lets a JSON Schema 2020-12 validator refuse what the server would ($name)', async (kind) => {
    const client = await connect(kind);
    const { tools } = await client.listTools();
    await client.close();
    const schema = tools.find((t) => t.name === 'platform_deploy_service')!.inputSchema;
    expect(schema.type).toBe('object');
    const validate = new Ajv2020({ strict: false, allErrors: true }).compile(schema);
    const base = { team_name: 'acme', component_name: 'web' };
    const missing = (args: Record<string, unknown>) => {
      expect(validate(args)).toBe(false);
      return validate.errors!.filter((e: { keyword: string }) => e.keyword === 'required').map((e: { params: Record<string, unknown> }) => e.params.missingProperty as string);
    };
    expect(missing({ action: 'onboard', ...base })).toEqual(expect.arrayContaining(['git_tag', 'dockerfile_repo', 'port']));
    expect(missing({ action: 'update-config', ...base })).toContain('env_vars');
    expect(validate({ action: 'deploy', ...base, git_tag: '0.1.1', dockerfile_repo: 'acme/web' })).toBe(true);
    expect(validate({ action: 'onboard', ...base, git_tag: '0.1.0', dockerfile_repo: 'acme/web', port: '8080' })).toBe(true);
    expect(validate({ action: 'update-config', ...base, env_vars: 'A=1' })).toBe(true);
  });
});
