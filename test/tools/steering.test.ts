/**
 * How results and refusals steer an agent (issue 19 item 5), over invoke() on the real sandbox: a result that settled
 * while the call waited says so (keeping the execute response's `status: "submitted"`), hints name numbers as numbers, and
 * not-found and access refusals suggest close names the caller may see — and none it may not.
 */
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../config.js';
import type { Identity } from '../../auth/identity.js';
import { invoke, type InvokeDeps } from '../../tools/invoke.js';
import { restDoor } from '../../tools/door.js';
import { allTools } from '../../tools/registry.js';
import { TOOLSETS, unknownToolMessage, type Toolset } from '../../tools/toolsets.js';
import { didYouMean, editDistance, nearNames } from '../../core/near.js';
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

describe('close names in refusals', () => {
  /** acme (alice admin, carol member) with web; gamma (alice admin) and gamma-prod (bob only, not alice's). */
  async function tenants() {
    const { platform, deps } = await setUp();
    await run(platform, 'create-tenant', { team_name: 'gamma', admins: 'alice' });
    await run(platform, 'create-tenant', { team_name: 'gamma-prod', admins: 'bob' }, 'bob');
    return { platform, deps };
  }
  const root = who('root', true);

  it('suggests a close tenant before suggesting to create one', async () => {
    const { deps } = await tenants();
    const refusal = invoke(tool('platform_rollback_service'), { team_name: 'gamma-team', component_name: 'web', target_tag: '0.1.0' }, root, deps);
    const err = (await refusal.catch((e: unknown) => e)) as { code: string; message: string };
    expect(err.code).toBe('NOT_FOUND');
    expect(err.message).toMatch(/^tenant not found: gamma-team; did you mean "gamma"\? Otherwise a platform admin creates it with platform_create_tenant/);
    await expect(invoke(tool('platform_get_tenant'), { name: 'acm' }, root, deps)).rejects.toMatchObject({ code: 'NOT_FOUND', message: 'tenant not found: acm; did you mean "acme"?' });
    // Nothing close: the creation hint alone, as before.
    await expect(invoke(tool('platform_create_tenant'), { team_name: 'zeta', wait_seconds: 0 }, root, deps)).resolves.toBeDefined();
    await expect(invoke(tool('platform_get_tenant'), { name: 'omega' }, root, deps)).rejects.toMatchObject({ code: 'NOT_FOUND', message: 'tenant not found: omega' });
  });

  it('names the tenant in an access refusal, suggesting only tenants the caller belongs to', async () => {
    const { deps } = await tenants();
    // alice belongs to gamma, not to gamma-prod: "gamma-prd" is closest to gamma-prod, which she is never told of.
    const denied = invoke(tool('platform_get_tenant'), { name: 'gamma-prd' }, who('alice'), deps);
    await expect(denied).rejects.toMatchObject({ code: 'FORBIDDEN', message: 'access denied to this tenant: gamma-prd; did you mean "gamma"?' });
    const nothingClose = invoke(tool('platform_get_tenant'), { name: 'gamma-prod' }, who('carol'), deps);
    await expect(nothingClose).rejects.toMatchObject({ code: 'FORBIDDEN', message: 'access denied to this tenant: gamma-prod' });
    const mistyped = invoke(tool('platform_get_status'), { team: 'gama', app: 'web' }, who('alice'), deps);
    await expect(mistyped).rejects.toMatchObject({ code: 'FORBIDDEN', message: 'access denied to this tenant: gama; did you mean "gamma"?' });
    // A non-member of everything close is told nothing of gamma or gamma-prod.
    const stranger = invoke(tool('platform_get_tenant'), { name: 'gamma-team' }, who('mallory'), deps);
    await expect(stranger).rejects.toMatchObject({ code: 'FORBIDDEN', message: 'access denied to this tenant: gamma-team' });
    // bob is told of his own.
    await expect(invoke(tool('platform_get_tenant'), { name: 'gamma-prd' }, who('bob'), deps)).rejects.toMatchObject({
      message: 'access denied to this tenant: gamma-prd; did you mean "gamma-prod"?',
    });
  });

  it('suggests close services of the tenant, keeping the documented message first', async () => {
    const { deps } = await tenants();
    for (const [name, args, start] of [
      ['platform_get_service', { team: 'acme', app: 'wbe' }, 'service not found: acme/wbe'],
      ['platform_get_status', { team: 'acme', app: 'wbe' }, 'GitOps application not found: acme-wbe'],
      ['platform_get_logs', { team: 'acme', app: 'wbe' }, 'service not found: acme/wbe'],
      ['platform_diagnose_service', { team: 'acme', app: 'wbe' }, 'service not found: acme/wbe'],
      ['platform_rollback_service', { team_name: 'acme', component_name: 'wbe', target_tag: '0.1.0' }, 'service not found: acme/wbe'],
    ] as const) {
      const refusal = invoke(tool(name), args, who('carol'), deps);
      await expect(refusal, name).rejects.toMatchObject({ code: 'NOT_FOUND', message: expect.stringContaining(`${start}; did you mean "web"?`) });
      await expect(invoke(tool(name), args, who('carol'), deps), name).rejects.toMatchObject({ message: expect.stringMatching(new RegExp(`^${start}`)) });
    }
  });

  it('suggests close workflows the caller may read, and none of another tenant', async () => {
    const { platform, deps } = await tenants();
    // The sandbox helpers ran acme's and gamma's workflows as alice, gamma-prod's as bob.
    const mine = (await platform.workflows.list({ visible: 'all', tenant: 'acme', limit: 1 }))[0]!.name;
    const theirs = (await platform.workflows.list({ visible: 'all', tenant: 'gamma-prod', limit: 1 }))[0]!.name;
    const typo = (name: string) => `${name.slice(0, -1)}${name.endsWith('b') ? 'c' : 'b'}`;
    await expect(invoke(tool('platform_get_workflow'), { name: typo(mine) }, who('alice'), deps)).rejects.toMatchObject({
      code: 'NOT_FOUND',
      message: `workflow not found: ${typo(mine)}; did you mean "${mine}"?`,
    });
    // alice may not read gamma-prod's workflow: its own name and a near miss answer alike, suggesting nothing of it.
    for (const name of [theirs, typo(theirs)]) {
      const refusal = (await invoke(tool('platform_get_workflow'), { name }, who('alice'), deps).catch((err: unknown) => err)) as { code: string; message: string };
      expect(refusal.code).toBe('NOT_FOUND');
      expect(refusal.message).not.toContain(`"${theirs}"`);
    }
    // bob is told of his.
    await expect(invoke(tool('platform_get_workflow'), { name: typo(theirs) }, who('bob'), deps)).rejects.toMatchObject({
      message: expect.stringContaining(`did you mean "${theirs}"`),
    });
  });
});

describe('the pieces', () => {
  it('measures edit distance with transpositions, and finds close names', () => {
    expect(editDistance('acm', 'acme')).toBe(1);
    expect(editDistance('wbe', 'web')).toBe(1);
    expect(editDistance('kitten', 'sitting')).toBe(3);
    expect(nearNames('gamma-team', ['gamma', 'delta', 'gamma-team'])).toEqual(['gamma']);
    expect(nearNames('web', ['acme-web', 'api', 'www'])).toEqual(['acme-web']);
    expect(nearNames('x', ['y', 'z', 'xy', 'xz'])).toEqual(['xy', 'xz', 'y']);
    expect(didYouMean('omega', ['acme'])).toBe('');
  });

  it('names the toolset of a tool outside the selection, and how this door selects it', () => {
    const selection = { inventory: allTools, selected: ['observe', 'deploy'] as Toolset[], allowed: [...TOOLSETS], howToSelect: (s: string) => `pds mcp --toolsets ${s}` };
    expect(unknownToolMessage('platform_create_tenant', selection)).toMatch(/"tenants" toolset, which this session did not select .*pds mcp --toolsets observe,deploy,tenants/);
    expect(unknownToolMessage('platform_create_tenant', { ...selection, allowed: ['observe', 'deploy'] })).toMatch(/"tenants" toolset, which this pds does not enable \(PDS_TOOLSETS/);
    expect(unknownToolMessage('platform_make_coffee', selection)).toBe('unknown tool "platform_make_coffee"; see tools/list');
  });
});
