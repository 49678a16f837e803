/**
 * invoke() itself (issue 8 §7) and the operation contract: a denied call never reaches the platform, a refused write
 * leaves state and audit unchanged, every operation id has an implementation on every backend, and the declarations
 * that derive from one another (readOnlyHint from kind, REST bindings) cannot disagree.
 */
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../config.js';
import { assertImplementsEveryOperation, OPERATION_IDS, OPERATIONS } from '../../core/operations/index.js';
import type { Platform } from '../../core/ports.js';
import { sandboxOperations } from '../../adapters/sandbox/operations.js';
import type { Identity } from '../../auth/identity.js';
import { createWriteLimiter } from '../../rest/ratelimit.js';
import { defineTool } from '../../tools/define.js';
import { invoke, type InvokeDeps } from '../../tools/invoke.js';
import { operationTools } from '../../tools/operations/index.js';
import { allTools, checkedTools } from '../../tools/registry.js';
import { z } from 'zod';
import { ONBOARD, openSandbox, run, tempDir } from '../sandbox/helpers.js';

const who = (userId: string, admin = false): Identity => ({ userId, groups: [], admin, tokenKind: 'self-issued' });
const tool = (name: string) => allTools.find((t) => t.name === name)!;

/**
 * The real sandbox, with every call into its ports recorded on the way through (a spy, not a stand-in: each call
 * still reaches the sandbox).
 */
function recorded(platform: Platform): { platform: Platform; calls: string[] } {
  const calls: string[] = [];
  const spy = <T extends object>(port: T, label: string): T =>
    new Proxy(port, {
      get(target, key, receiver) {
        const value = Reflect.get(target, key, receiver);
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          calls.push(`${label}.${String(key)}`);
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
  return {
    calls,
    platform: {
      ...platform,
      kind: platform.kind,
      backend: spy(platform.backend, 'backend'),
      workflows: spy(platform.workflows, 'workflows'),
      audit: spy(platform.audit, 'audit'),
      codeHost: spy(platform.codeHost, 'codeHost'),
      once: spy(platform.once, 'once'),
      ready: () => platform.ready(),
      close: () => platform.close(),
    },
  };
}

async function setUp() {
  const sandbox = await openSandbox(await tempDir(), { stepMs: 0 });
  await run(sandbox, 'create-tenant', { team_name: 'acme', admins: 'alice', members: 'carol', viewers: 'dave' });
  await run(sandbox, 'deploy-service', ONBOARD);
  const { platform, calls } = recorded(sandbox);
  const deps: InvokeDeps = {
    platform,
    config: loadConfig({ PDS_DOMAIN: 'apps.test' }),
    confirmSecret: new TextEncoder().encode('x'.repeat(32)),
    writeLimiter: createWriteLimiter({ max: 3 }),
  };
  const snapshot = async () => ({
    audit: await sandbox.audit.query({ visible: 'all', limit: 1000 }),
    services: await sandbox.backend.listServices(),
    tenants: await sandbox.backend.listTenants(),
  });
  return { sandbox, calls, deps, snapshot };
}

describe('invoke()', () => {
  it('never reaches the platform for a caller without access, and changes nothing', async () => {
    const { calls, deps, snapshot } = await setUp();
    const before = await snapshot();
    const rollback = { team_name: 'acme', component_name: 'web', target_tag: '0.1.0' };
    await expect(invoke(tool('platform_rollback_service'), rollback, who('mallory'), deps)).rejects.toMatchObject({ code: 'FORBIDDEN' });
    await expect(invoke(tool('platform_create_tenant'), { team_name: 'evil' }, who('alice'), deps)).rejects.toMatchObject({ code: 'FORBIDDEN' });
    await expect(invoke(tool('platform_list_tenants'), {}, who('carol'), deps)).rejects.toMatchObject({ code: 'FORBIDDEN' });
    // The only platform calls are the tenant look-ups that decide access and suggest the caller's own tenants; no
    // workflow, audit, code-host or claim call.
    expect(calls.filter((c) => c !== 'backend.getTenant' && c !== 'backend.listTenants')).toEqual([]);
    expect(await snapshot()).toEqual(before);
  });

  it('refuses invalid input before access checks and before the platform', async () => {
    const { calls, deps, snapshot } = await setUp();
    const before = await snapshot();
    await expect(invoke(tool('platform_rollback_service'), { team_name: 'acme', component_name: 'web', target_tag: 'v1' }, who('alice'), deps)).rejects.toMatchObject({
      code: 'INVALID_PARAMS',
      message: expect.stringMatching(/target_tag/),
    });
    expect(calls).toEqual([]);
    expect(await snapshot()).toEqual(before);
  });

  it('leaves state and audit unchanged when a write is refused: role, write limit, confirmation', async () => {
    const { calls, deps, snapshot } = await setUp();
    const before = await snapshot();
    const retire = { team_name: 'acme', component_name: 'web' };
    // A member may deploy and operate but not retire (issue 7 item 18): only the tenant's admins may destroy.
    await expect(invoke(tool('platform_retire_service'), retire, who('carol'), deps)).rejects.toMatchObject({
      code: 'FORBIDDEN',
      message: expect.stringMatching(/role "member"/),
    });
    // The first call of a destructive operation asks for a person's confirmation, as data.
    const asked = await invoke(tool('platform_retire_service'), retire, who('alice'), deps).catch((e: unknown) => e);
    expect(asked).toMatchObject({ code: 'CONFIRMATION_REQUIRED', data: { confirm: expect.any(String), expiresAt: expect.any(String), plan: expect.stringMatching(/acme\/web/) } });
    expect((asked as { headers: Record<string, string> }).headers['PDS-Confirm']).toBe((asked as { confirm: string }).confirm);
    // The write limit (3 here) refuses the next writes before the handler runs.
    const limiter = createWriteLimiter({ max: 1 });
    const limited = { ...deps, writeLimiter: limiter };
    const rollback = { team_name: 'acme', component_name: 'web', target_tag: '0.1.0', bogus: 1 };
    await expect(invoke(tool('platform_rollback_service'), rollback, who('alice'), limited)).rejects.toMatchObject({ code: 'INVALID_PARAMS' });
    await limiter.consume(who('alice'));
    await expect(invoke(tool('platform_rollback_service'), { team_name: 'acme', component_name: 'web', target_tag: '0.1.0' }, who('alice'), limited)).rejects.toMatchObject({
      code: 'RATE_LIMITED',
    });
    // Reads that decide access, the preflight (tenant and service exist) and the freeze check (the tenant's identity,
    // for its policy), never a write, audit or workflow call.
    expect(calls.filter((c) => !['backend.getTenant', 'backend.getService', 'backend.listServices', 'backend.getTenantRef'].includes(c))).toEqual([]);
    expect(await snapshot()).toEqual(before);
  });

  it('audits and submits an accepted write with the parameters as recorded (secrets redacted)', async () => {
    const { sandbox, deps } = await setUp();
    const result = (await invoke(
      tool('platform_deploy_service'),
      { action: 'update-config', team_name: 'acme', component_name: 'web', env_vars: 'API_KEY=s3cret\nLOG_LEVEL=debug' },
      who('carol'),
      deps,
    )) as { workflowName: string };
    const entry = await sandbox.audit.get(result.workflowName);
    expect(entry?.parameters).toEqual({ action: 'update-config', team_name: 'acme', component_name: 'web', env_vars: 'API_KEY=***\nLOG_LEVEL=***' });
    expect(JSON.stringify(entry)).not.toContain('s3cret');
  });

  it('dispatches platform_execute_operation to the named operation with its own checks, counting one write', async () => {
    const { deps } = await setUp();
    const limiter = createWriteLimiter({ max: 1 });
    const args = { name: 'rollback-service', parameters: { team_name: 'acme', component_name: 'web', target_tag: '0.1.0' } };
    await expect(invoke(tool('platform_execute_operation'), args, who('dave'), { ...deps, writeLimiter: limiter })).rejects.toMatchObject({ code: 'FORBIDDEN' });
    await expect(invoke(tool('platform_execute_operation'), args, who('alice'), { ...deps, writeLimiter: limiter })).resolves.toMatchObject({ status: 'submitted' });
    await expect(invoke(tool('platform_execute_operation'), { name: 'constructor', parameters: {} }, who('alice'), deps)).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });
});

describe('the operation contract', () => {
  it('has an implementation of every operation id on every backend', () => {
    const backends = { sandbox: sandboxOperations };
    for (const [name, table] of Object.entries(backends)) {
      expect(Object.keys(table).sort(), name).toEqual([...OPERATION_IDS].sort());
      expect(() => assertImplementsEveryOperation(name, table)).not.toThrow();
    }
  });

  it('refuses, naming it, a backend that lacks an operation', () => {
    const { 'rollback-service': _missing, ...partial } = sandboxOperations;
    expect(() => assertImplementsEveryOperation('partial', partial)).toThrow(/the partial backend does not implement rollback-service/);
  });

  it('gives every operation its own tool, bound to its own execute path', () => {
    expect(operationTools.map((t) => t.operation!.id)).toEqual(OPERATION_IDS);
    for (const t of operationTools) {
      expect(t.rest).toEqual({ method: 'POST', path: '/api/v1/operations/{name}/execute', pathValues: { name: t.operation!.id }, query: ['wait_seconds'] });
      expect(t.name).toBe(OPERATIONS[t.operation!.id].tool);
      expect(t.annotations.destructiveHint).toBe(t.operation!.destructive);
    }
    expect(tool('platform_execute_operation').rest).toBeUndefined();
  });
});

describe('the inventory', () => {
  it('derives readOnlyHint from kind for every tool, and refuses a definition where they disagree', () => {
    for (const t of allTools) expect(t.annotations.readOnlyHint, t.name).toBe(t.kind === 'read');
    const good = defineTool({
      name: 'platform_get_thing',
      title: 'Get a thing',
      description: 'A test tool.',
      input: z.object({}),
      output: z.object({}),
      access: 'authenticated',
      kind: 'read',
      toolset: 'observe',
      annotations: {},
      handler: async () => ({}),
    });
    expect(() => checkedTools([{ ...good, annotations: { ...good.annotations, readOnlyHint: false } }])).toThrow(/readOnlyHint must be true/);
    expect(() => checkedTools([good, { ...good, name: 'platform_get_other', rest: { method: 'GET', path: '/x' } }, { ...good, name: 'platform_get_third', rest: { method: 'GET', path: '/x' } }])).toThrow(
      /both claim GET \/x/,
    );
  });
});
