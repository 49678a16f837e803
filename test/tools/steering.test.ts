/**
 * How results and refusals steer an agent (issue 19 item 5), over invoke() on the real sandbox: a result that settled
 * while the call waited says so (keeping the SPEC's `status: "submitted"`), hints name numbers as numbers, and
 * not-found and access refusals suggest close names the caller may see — and none it may not.
 */
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../config.js';
import type { Identity } from '../../auth/identity.js';
import { invoke, type InvokeDeps } from '../../tools/invoke.js';
import { restDoor } from '../../tools/door.js';
import { allTools } from '../../tools/registry.js';
import { ONBOARD, openSandbox, run, tempDir } from '../sandbox/helpers.js';

const who = (userId: string, admin = false): Identity => ({ userId, groups: [], admin, tokenKind: 'self-issued' });
const tool = (name: string) => allTools.find((t) => t.name === name)!;

async function setUp() {
  const platform = await openSandbox(await tempDir(), { stepMs: 0 });
  await run(platform, 'create-tenant', { team_name: 'acme', admins: 'alice', members: 'carol' });
  await run(platform, 'deploy-service', ONBOARD);
  const deps: InvokeDeps = { platform, config: loadConfig({ PDS_DOMAIN: 'apps.test' }), confirmSecret: new TextEncoder().encode('x'.repeat(32)) };
  return { platform, deps };
}

type Result = { workflowName: string; status: string; phase?: string; settled?: boolean; message: string; failedStep?: { name: string } };
const call = (deps: InvokeDeps, name: string, args: Record<string, unknown>, user = who('alice')) =>
  invoke(tool(name), args, user, deps) as Promise<Result>;

describe('a result that settled while the call waited', () => {
  it('says it succeeded and what to call next, keeping status "submitted"', async () => {
    const { deps } = await setUp();
    const args = { team_name: 'acme', component_name: 'web', engine: 'postgres', storage: '1Gi' };
    const r = await call(deps, 'platform_provision_database', { ...args, wait_seconds: 30 });
    expect(r).toMatchObject({ status: 'submitted', phase: 'succeeded', settled: true });
    expect(r.message).toMatch(new RegExp(`^Workflow ${r.workflowName} succeeded while this call waited: it was submitted to provision`));
    expect(r.message).toContain('Next, see hasDatabase=true with platform_get_service {"team":"acme","app":"web"}');
    expect(r.message).not.toMatch(/in the background|wait_seconds/);
  });

  it('says it failed at which step, and where to read it', async () => {
    const { platform, deps } = await setUp();
    // Another replica created the tenant between the preflight and the run: the preflight is told it is not there
    // yet (a spy on the real backend), so the workflow itself refuses it.
    const backend = new Proxy(platform.backend, {
      get: (target, key, receiver) =>
        key === 'getTenant' ? async (name: string) => (name === 'acme' ? undefined : target.getTenant(name)) : Reflect.get(target, key, receiver),
    });
    const racing: InvokeDeps = { ...deps, platform: { ...platform, kind: platform.kind, backend, ready: () => platform.ready(), close: () => platform.close() } };
    const r = await call(racing, 'platform_create_tenant', { team_name: 'acme', wait_seconds: 30 }, who('root', true));
    expect(r).toMatchObject({ status: 'submitted', phase: 'failed', settled: true });
    expect(r.message).toMatch(new RegExp(`^Workflow ${r.workflowName} failed while this call waited, at step "${r.failedStep!.name}": tenant acme already exists`));
    expect(r.message).toContain(`platform_get_workflow {"name":"${r.workflowName}"}`);
    expect(r.message).not.toMatch(/in the background/);
  });

  it('without waiting, says it runs in the background and names wait_seconds as a number', async () => {
    const { deps } = await setUp();
    const r = await call(deps, 'platform_provision_database', { team_name: 'acme', component_name: 'web', engine: 'postgres', storage: '1Gi' });
    expect(r).toMatchObject({ status: 'submitted' });
    expect(r.phase).toBeUndefined();
    expect(r.message).toContain(`platform_get_workflow {"name":"${r.workflowName}","wait_seconds":45}`);
    // REST words carry the same number as a query value.
    const rest = (await invoke(tool('platform_provision_database'), { team_name: 'acme', component_name: 'web', engine: 'postgres', storage: '2Gi' }, who('alice'), deps, {
      door: restDoor(allTools),
    })) as Result;
    expect(rest.message).toContain(`GET /api/v1/workflows/${rest.workflowName}?wait_seconds=45`);
  });
});
