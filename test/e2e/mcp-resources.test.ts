/**
 * Resources, links, completions and prompts (issue 11 item 7), against a started pds with every client of
 * test/helpers/mcp-clients.ts over HTTP, and through `pds mcp` on stdio: resources read through the read tools with
 * the caller's access (a forbidden resource is an error, never data), an operation result links its workflow,
 * completions offer only what the caller may see, and the prompts name the tools in order.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLIENTS, connectHttp, connectStdio, type TestClient } from '../helpers/mcp-clients.js';
import { registerRepository, startTestServer, waitForWorkflow, type TestServer } from '../helpers/server.js';

let pds: TestServer;
/** The onboarding workflow of acme/web. */
let workflow: string;

async function run(user: string, operation: string, params: Record<string, string>): Promise<string> {
  const res = await pds.api(user, 'POST', `/api/v1/operations/${operation}/execute`, params);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  await waitForWorkflow(pds, user, res.body.workflowName);
  return res.body.workflowName;
}

beforeAll(async () => {
  pds = await startTestServer();
  await run('root', 'create-tenant', { team_name: 'acme', admins: 'alice' });
  await run('root', 'create-tenant', { team_name: 'bobco', admins: 'bob' });
  await registerRepository(pds, 'alice', 'acme', 'acme/web');
  await registerRepository(pds, 'bob', 'bobco', 'bob/api');
  workflow = await run('alice', 'deploy-service', { action: 'onboard', team_name: 'acme', component_name: 'web', dockerfile_repo: 'acme/web', git_tag: '0.1.0', port: '8080' });
  await run('alice', 'deploy-service', { action: 'deploy', team_name: 'acme', component_name: 'web', dockerfile_repo: 'acme/web', git_tag: '0.1.1' });
  await run('bob', 'deploy-service', { action: 'onboard', team_name: 'bobco', component_name: 'api', dockerfile_repo: 'bob/api', git_tag: '2.0.0', port: '8080' });
});
afterAll(() => pds.stop());

const connect = async (kind: (typeof CLIENTS)[number], user: string) =>
  connectHttp(kind, `${pds.url}/mcp`, { Authorization: `Bearer ${await pds.token(user)}` });
const json = (read: { contents: { text?: string }[] }) => JSON.parse(read.contents[0]!.text!);

describe.each(CLIENTS)('resources with the $name', (kind) => {
  let alice: TestClient;
  let bob: TestClient;
  beforeAll(async () => {
    alice = await connect(kind, 'alice');
    bob = await connect(kind, 'bob');
  });
  afterAll(async () => {
    await alice?.close();
    await bob?.close();
  });

  it('declares resources, prompts and completions, and lists the fixed resources and the templates', async () => {
    expect(alice.capabilities()).toMatchObject({ tools: expect.any(Object), resources: expect.any(Object), prompts: expect.any(Object), completions: expect.any(Object) });
    expect((await alice.listResources()).resources.map((r) => r.uri)).toEqual(['pds://operations', 'pds://templates']);
    expect((await alice.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate)).toEqual([
      'pds://workflows/{name}',
      'pds://services/{team}/{app}/status',
      'pds://services/{team}/{app}/logs',
      'pds://operations/{name}',
    ]);
  });

  it('reads each resource as the REST body of the same read', async () => {
    for (const [uri, path] of [
      [`pds://workflows/${workflow}`, `/api/v1/workflows/${workflow}`],
      ['pds://services/acme/web/status', '/api/v1/status/acme/web'],
      ['pds://operations', '/api/v1/operations'],
      ['pds://operations/rollback-service', '/api/v1/operations/rollback-service'],
      ['pds://templates', '/api/v1/templates'],
    ]) {
      const read = await alice.readResource({ uri: uri! });
      expect(read.contents[0], uri).toMatchObject({ uri, mimeType: 'application/json' });
      expect(json(read), uri).toEqual((await pds.api('alice', 'GET', path!)).body);
    }
    const logs = json(await alice.readResource({ uri: 'pds://services/acme/web/logs' }));
    expect(logs).toMatchObject({ team: 'acme', app: 'web', count: expect.any(Number) });
  });

  it('answers a resource the caller may not see, or that does not exist, with an error and no data', async () => {
    await expect(bob.readResource({ uri: 'pds://services/acme/web/status' })).rejects.toMatchObject({ code: -32602, message: expect.stringMatching(/access denied to this tenant/) });
    await expect(bob.readResource({ uri: `pds://workflows/${workflow}` })).rejects.toMatchObject({ code: -32602 });
    await expect(alice.readResource({ uri: 'pds://workflows/nope-12345' })).rejects.toMatchObject({ code: -32602, message: expect.stringMatching(/workflow not found/) });
    await expect(alice.readResource({ uri: 'pds://elsewhere/x' })).rejects.toMatchObject({ code: -32602 });
  });

  it('completes team, service, tag, workflow and operation names with what the caller may see', async () => {
    const values = async (client: TestClient, ref: any, name: string, value = '', context?: Record<string, string>) =>
      (await client.complete({ ref, argument: { name, value }, ...(context && { context: { arguments: context } }) })).completion.values;
    const status = { type: 'ref/resource', uri: 'pds://services/{team}/{app}/status' } as const;
    const rollback = { type: 'ref/prompt', name: 'rollback-service' } as const;
    expect(await values(alice, status, 'team')).toEqual(['acme']);
    expect(await values(bob, status, 'team')).toEqual(['bobco']);
    const root = await connect(kind, 'root');
    expect((await values(root, status, 'team')).sort()).toEqual(['acme', 'bobco']);
    await root.close();
    expect(await values(alice, status, 'app', 'w', { team: 'acme' })).toEqual(['web']);
    expect(await values(bob, status, 'app', '', { team: 'acme' })).toEqual([]); // not bob's tenant: nothing, no error
    // Tags the service ran, the running one first (earlier clients' runs may have rolled it back).
    const tags = await values(alice, rollback, 'tag', '', { team: 'acme', app: 'web' });
    expect(tags[0]).toBe((await pds.api('alice', 'GET', '/api/v1/services/acme/web')).body.imageTag);
    expect([...tags].sort()).toEqual(['0.1.0', '0.1.1']);
    expect(await values(alice, rollback, 'tag', '0.1.0', { team: 'acme', app: 'web' })).toEqual(['0.1.0']);
    expect(await values(bob, rollback, 'tag', '', { team: 'acme', app: 'web' })).toEqual([]);
    expect(await values(alice, { type: 'ref/resource', uri: 'pds://workflows/{name}' }, 'name', 'deploy-service-')).toContain(workflow);
    expect(await values(bob, { type: 'ref/resource', uri: 'pds://workflows/{name}' }, 'name')).not.toContain(workflow);
    expect(await values(alice, { type: 'ref/resource', uri: 'pds://operations/{name}' }, 'name', 'pre')).toEqual(['preview-deploy', 'preview-delete']);
    expect(await values(alice, { type: 'ref/prompt', name: 'onboard-repository' }, 'repo', '', { team: 'acme' })).toEqual(['acme/web']);
  });

  it('lists the three prompts and renders them with their arguments; a missing one is an error', async () => {
    expect((await alice.listPrompts()).prompts.map((p) => p.name)).toEqual(['onboard-repository', 'diagnose-service', 'rollback-service']);
    const onboard = await alice.getPrompt({ name: 'onboard-repository', arguments: { team: 'acme', repo: 'acme/shop' } });
    const text = onboard.messages[0]!.content.text!;
    expect(onboard.messages[0]!.role).toBe('user');
    for (const call of [
      'platform_grant_repo_access {"team_name":"acme","repo":"acme/shop"}',
      'platform_scaffold_repository {"team_name":"acme","component_name":"shop","dockerfile_repo":"acme/shop"}',
      'platform_deploy_service {"action":"onboard","team_name":"acme","component_name":"shop"',
    ]) expect(text).toContain(call);
    const diagnose = (await alice.getPrompt({ name: 'diagnose-service', arguments: { team: 'acme', app: 'web' } })).messages[0]!.content.text!;
    expect(diagnose).toContain('platform_diagnose_service {"team":"acme","app":"web"}');
    expect(diagnose).toContain('platform_get_logs {"team":"acme","app":"web","since":"1h"}');
    const back = (await alice.getPrompt({ name: 'rollback-service', arguments: { team: 'acme', app: 'web', tag: '0.1.0' } })).messages[0]!.content.text!;
    // The prompts wait for the outcome instead of polling (issue 11 item 2).
    expect(back).toContain('platform_rollback_service {"team_name":"acme","component_name":"web","target_tag":"0.1.0","wait_seconds":45}');
    await expect(alice.getPrompt({ name: 'rollback-service', arguments: { team: 'acme' } })).rejects.toMatchObject({ code: -32602, message: expect.stringMatching(/needs app/) });
  });

  it('links an operation result to its workflow resource, which reads as the workflow', async () => {
    // Waits for the rollback (wait_seconds), so the next client's reads do not race its rollout.
    const res = await alice.callTool({ name: 'platform_rollback_service', arguments: { team_name: 'acme', component_name: 'web', target_tag: '0.1.0', wait_seconds: 30 } });
    expect(res.isError).toBeFalsy();
    expect(res.structuredContent).toMatchObject({ settled: true });
    const link = res.content.find((c) => c.type === 'resource_link')!;
    expect(link).toMatchObject({ uri: `pds://workflows/${res.structuredContent.workflowName}`, mimeType: 'application/json' });
    expect(json(await alice.readResource({ uri: link.uri! }))).toMatchObject({ workflow: res.structuredContent.workflowName, audit: { operation: 'rollback-service' } });
  });
});

describe('through pds mcp on stdio', () => {
  it('reads resources and completes over the REST bridge, with the same access', async () => {
    const kind = CLIENTS.find((k) => k.protocol === '2026-07-28')!;
    const client = await connectStdio(kind, {
      command: process.execPath,
      args: ['bin/pds-src.js', 'mcp'],
      env: { ...(process.env as Record<string, string>), PDS_BASE_URL: pds.url, PDS_TOKEN: await pds.token('bob') },
    });
    try {
      expect(json(await client.readResource({ uri: 'pds://services/bobco/api/status' }))).toMatchObject({ argocd: { name: 'bobco-api' } });
      await expect(client.readResource({ uri: 'pds://services/acme/web/status' })).rejects.toMatchObject({ code: -32602 });
      const teams = await client.complete({ ref: { type: 'ref/resource', uri: 'pds://services/{team}/{app}/status' }, argument: { name: 'team', value: '' } });
      expect(teams.completion.values).toEqual(['bobco']);
    } finally {
      await client.close();
    }
  });
});
