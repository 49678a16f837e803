import { describe, expect, it } from 'vitest';
import { LeaseLost } from '../../adapters/sql/index.js';
import { ENGINES, freshStore } from './helpers.js';
import { auditEntry, service, tenant, workflow } from './records.js';

const T0 = Date.parse('2026-11-01T12:00:00.000Z');
const LEASE = 30_000;

describe.each(ENGINES)('workflow records on %s', (engine) => {
  it('create a workflow with pending steps, its queue and tenant, and its arguments apart', async () => {
    const store = await freshStore(engine);
    const acme = await store.tenants.create(tenant('acme'));
    const created = await store.workflows.create(
      workflow('cfg-1', { action: 'update-config', team_name: 'acme', component_name: 'web', env_vars: 'TOKEN=***' }, {
        arguments: { action: 'update-config', env_vars: [{ key: 'TOKEN', value: 's3cret' }] },
        dueAt: T0 + 1500,
      }),
    );
    expect(created).toMatchObject({
      name: 'cfg-1',
      phase: 'submitted',
      tenant: 'acme',
      service: 'web',
      tenantUid: acme.uid,
      nextStep: 0,
      dueAt: T0 + 1500,
      parameters: { env_vars: 'TOKEN=***' },
      steps: [
        { name: 'validate', status: 'pending' },
        { name: 'build', status: 'pending' },
        { name: 'deploy', status: 'pending' },
      ],
    });
    expect(created.seq).toBeGreaterThan(0);
    expect(await store.workflows.get('cfg-1')).toEqual(created);
    expect(await store.workflows.arguments('cfg-1')).toEqual({ action: 'update-config', env_vars: [{ key: 'TOKEN', value: 's3cret' }] });
    await expect(store.workflows.create(workflow('cfg-1', { team_name: 'acme' }))).rejects.toMatchObject({ code: 'CONFLICT' });
  });

  it('list workflows of a tenant or a service, newest first, with paging', async () => {
    const store = await freshStore(engine);
    for (let i = 0; i < 6; i++) {
      await store.workflows.create(workflow(`w${i}`, { team_name: 'acme', component_name: i % 2 ? 'web' : 'api' }));
    }
    await store.workflows.create(workflow('other', { team_name: 'beta', component_name: 'web' }));
    expect((await store.workflows.list({ tenant: 'acme', limit: 10 })).map((w) => w.name)).toEqual(['w5', 'w4', 'w3', 'w2', 'w1', 'w0']);
    const web = await store.workflows.list({ tenant: 'acme', service: 'web', limit: 2 });
    expect(web.map((w) => w.name)).toEqual(['w5', 'w3']);
    const next = await store.workflows.list({ tenant: 'acme', service: 'web', limit: 2, before: web.at(-1)!.seq });
    expect(next.map((w) => w.name)).toEqual(['w1']);
  });

  it('run one step: hold, change state, advance — all in one transaction', async () => {
    const store = await freshStore(engine);
    await store.tenants.create(tenant('acme'));
    await store.workflows.create(workflow('w1', { team_name: 'acme', component_name: 'web' }));
    const [claimed] = await store.workflows.claim({ owner: 'p1', now: T0, leaseMs: LEASE });
    expect(claimed).toMatchObject({ name: 'w1', leaseOwner: 'p1', leaseExpiresAt: T0 + LEASE, nextStep: 0 });

    await store.transaction(async (tx) => {
      const run = await tx.workflows.hold('w1', 'p1', 0);
      await tx.services.put(service('acme', 'web', { activeWorkflow: run.name }));
      const steps = run.steps.map((s, i) => (i === 0 ? { ...s, status: 'succeeded' as const, finishedAt: '2026-11-01T12:00:00.010Z' } : s));
      await tx.workflows.advance('w1', 'p1', { steps, nextStep: 1, message: 'step 2/3: build', dueAt: T0 + 1510, leaseUntil: T0 + 1510 + LEASE });
    });
    expect(await store.workflows.get('w1')).toMatchObject({ nextStep: 1, message: 'step 2/3: build', dueAt: T0 + 1510, leaseExpiresAt: T0 + 1510 + LEASE });
    expect((await store.workflows.get('w1'))!.steps[0]).toEqual({ name: 'validate', status: 'succeeded', finishedAt: '2026-11-01T12:00:00.010Z' });
    expect(await store.services.get('acme', 'web')).toMatchObject({ activeWorkflow: 'w1' });
  });

  it("roll a step's changes back when its lease was lost meanwhile (the step's effects commit once)", async () => {
    const store = await freshStore(engine);
    await store.tenants.create(tenant('acme'));
    await store.workflows.create(workflow('w1', { team_name: 'acme', component_name: 'web' }));
    await store.workflows.claim({ owner: 'p1', now: T0, leaseMs: LEASE });
    // p1 pauses past its lease; p2 takes the workflow over.
    const [taken] = await store.workflows.claim({ owner: 'p2', now: T0 + LEASE, leaseMs: LEASE });
    expect(taken).toMatchObject({ name: 'w1', leaseOwner: 'p2' });

    await expect(store.workflows.hold('w1', 'p1', 0)).rejects.toBeInstanceOf(LeaseLost);
    await expect(
      store.transaction(async (tx) => {
        await tx.services.put(service('acme', 'web', { message: 'written by p1' }));
        await tx.workflows.advance('w1', 'p1', { steps: [], nextStep: 1, message: 'p1 was here', dueAt: 0, leaseUntil: 0 });
      }),
    ).rejects.toMatchObject({ code: 'CONFLICT', workflow: 'w1', owner: 'p1' });
    expect(await store.services.get('acme', 'web')).toBeUndefined();
    expect(await store.workflows.get('w1')).toMatchObject({ nextStep: 0, leaseOwner: 'p2' });
    // p2 holds it; a step index that moved on is refused too.
    await expect(store.workflows.hold('w1', 'p2', 1)).rejects.toBeInstanceOf(LeaseLost);
    expect(await store.workflows.hold('w1', 'p2', 0)).toMatchObject({ name: 'w1' });
  });

  it('settle a workflow with its audit entry, drop its arguments, free its queue', async () => {
    const store = await freshStore(engine);
    await store.tenants.create(tenant('acme'));
    await store.audit.append(auditEntry('cfg-1', { team_name: 'acme', component_name: 'web', env_vars: 'A=***' }));
    await store.workflows.create(workflow('cfg-1', { team_name: 'acme', component_name: 'web', env_vars: 'A=***' }, { arguments: { env_vars: [{ key: 'A', value: '1' }] } }));
    await store.workflows.create(workflow('next', { team_name: 'acme', component_name: 'web' }));
    await store.workflows.claim({ owner: 'p1', now: T0, leaseMs: LEASE });

    await expect(
      store.workflows.settle('cfg-1', { phase: 'succeeded', message: 'config updated', finishedAt: '2026-11-01T12:00:05.000Z' }, 'p2'),
    ).rejects.toBeInstanceOf(LeaseLost);
    expect(await store.workflows.settle('cfg-1', { phase: 'succeeded', message: 'config updated', finishedAt: '2026-11-01T12:00:05.000Z' }, 'p1')).toBe(true);
    expect(await store.workflows.get('cfg-1')).toMatchObject({ phase: 'succeeded', message: 'config updated', finishedAt: '2026-11-01T12:00:05.000Z' });
    expect(await store.audit.get('cfg-1')).toMatchObject({ status: 'succeeded', message: 'config updated' });
    expect(await store.workflows.arguments('cfg-1')).toBeUndefined();
    // An outside engine (Argo) reporting again changes nothing.
    expect(await store.workflows.settle('cfg-1', { phase: 'failed', message: 'late', finishedAt: '2026-11-01T12:00:06.000Z' })).toBe(false);
    expect((await store.workflows.claim({ owner: 'p1', now: T0 + 1, leaseMs: LEASE })).map((w) => w.name)).toEqual(['next']);
    expect((await store.workflows.unfinished()).map((w) => w.name)).toEqual(['next']);
  });

  it('give create-tenant and its audit entry the identity of the tenant it created', async () => {
    const store = await freshStore(engine);
    await store.audit.append(auditEntry('ct-1', { team_name: 'acme' }, { operation: 'create-tenant' }));
    await store.workflows.create(workflow('ct-1', { team_name: 'acme' }, { operation: 'create-tenant' }));
    expect(await store.audit.get('ct-1')).not.toHaveProperty('tenantUid');
    await store.workflows.claim({ owner: 'p1', now: T0, leaseMs: LEASE });
    const acme = await store.transaction(async (tx) => {
      const created = await tx.tenants.create(tenant('acme'));
      await tx.workflows.settle('ct-1', { phase: 'succeeded', message: 'tenant acme created', finishedAt: '2026-11-01T12:00:05.000Z' }, 'p1');
      return created;
    });
    expect(await store.workflows.get('ct-1')).toMatchObject({ tenantUid: acme.uid });
    expect(await store.audit.get('ct-1')).toMatchObject({ tenantUid: acme.uid, status: 'succeeded' });
    const visible = { userId: 'acme-admin', tenants: [{ name: 'acme', uid: acme.uid }] };
    expect((await store.audit.query({ visible, limit: 50 })).map((e) => e.workflowName)).toEqual(['ct-1']);
  });

  it('claim only due workflows whose lease is free, and hand a released lease over at once', async () => {
    const store = await freshStore(engine);
    await store.workflows.create(workflow('later', { team_name: 'acme', component_name: 'web' }, { dueAt: T0 + 5000 }));
    await store.workflows.create(workflow('now', { team_name: 'acme', component_name: 'api' }, { dueAt: T0 }));
    expect((await store.workflows.claim({ owner: 'p1', now: T0, leaseMs: LEASE })).map((w) => w.name)).toEqual(['now']);
    expect(await store.workflows.claim({ owner: 'p2', now: T0 + 1, leaseMs: LEASE })).toEqual([]);
    expect((await store.workflows.claim({ owner: 'p2', now: T0 + 5000, leaseMs: LEASE })).map((w) => w.name)).toEqual(['later']);
    expect(await store.workflows.release('p1')).toBe(1);
    expect((await store.workflows.claim({ owner: 'p2', now: T0 + 5001, leaseMs: LEASE })).map((w) => w.name)).toEqual(['now']);
  });
});

describe.each(ENGINES)('workflow queues on %s (operations on one service in submission order)', (engine) => {
  async function claimable(store: Awaited<ReturnType<typeof freshStore>>, names: string[]): Promise<string[]> {
    // Claim and give back at once, so the test reads what is runnable without starting anything.
    const claimed = await store.workflows.claim({ owner: 'probe', now: T0, leaseMs: LEASE, limit: 100 });
    await store.db.updateTable('workflows').set({ lease_owner: null, lease_expires_at: null }).where('lease_owner', '=', 'probe').execute();
    return claimed.map((w) => w.name).filter((n) => names.includes(n));
  }
  const all = ['d1', 'r2', 'api', 'beta', 'ct', 'del', 'onb'];

  it('run the oldest unfinished workflow of a service first; other services alongside', async () => {
    const store = await freshStore(engine);
    await store.workflows.create(workflow('d1', { team_name: 'acme', component_name: 'web', git_tag: '0.2.0' }));
    await store.workflows.create(workflow('r2', { team_name: 'acme', component_name: 'web', target_tag: '0.1.0' }, { operation: 'rollback-service' }));
    await store.workflows.create(workflow('api', { team_name: 'acme', component_name: 'api' }));
    await store.workflows.create(workflow('beta', { team_name: 'beta', component_name: 'web' }));
    expect(await claimable(store, all)).toEqual(['d1', 'api', 'beta']);
    await store.workflows.settle('d1', { phase: 'succeeded', message: '', finishedAt: '2026-11-01T12:01:00.000Z' });
    expect(await claimable(store, all)).toEqual(['r2', 'api', 'beta']);
  });

  it('hold a tenant operation behind the tenant’s earlier work, and the tenant’s later work behind it', async () => {
    const store = await freshStore(engine);
    await store.workflows.create(workflow('ct', { team_name: 'acme' }, { operation: 'create-tenant' }));
    await store.workflows.create(workflow('onb', { team_name: 'acme', component_name: 'web', action: 'onboard' }));
    await store.workflows.create(workflow('beta', { team_name: 'beta', component_name: 'web' }));
    expect(await claimable(store, all)).toEqual(['ct', 'beta']);
    await store.workflows.settle('ct', { phase: 'succeeded', message: '', finishedAt: '2026-11-01T12:01:00.000Z' });
    await store.workflows.create(workflow('del', { team_name: 'acme' }, { operation: 'delete-tenant' }));
    expect(await claimable(store, all)).toEqual(['onb', 'beta']);
    await store.workflows.settle('onb', { phase: 'succeeded', message: '', finishedAt: '2026-11-01T12:02:00.000Z' });
    expect(await claimable(store, all)).toEqual(['beta', 'del']);
  });

  it('let a workflow that has begun hold back even earlier submissions of its queue', async () => {
    // On PostgreSQL a submission can commit after a later one was claimed (two processes); the one that began goes on.
    const store = await freshStore(engine);
    await store.workflows.create(workflow('d1', { team_name: 'acme', component_name: 'web' }));
    await store.workflows.create(workflow('r2', { team_name: 'acme', component_name: 'web' }));
    await store.db.updateTable('workflows').set({ lease_owner: 'p9', lease_expires_at: T0 + LEASE }).where('name', '=', 'r2').execute();
    expect(await claimable(store, all)).toEqual([]);
  });

  it('keep a not yet due earlier submission ahead of a later one', async () => {
    const store = await freshStore(engine);
    await store.workflows.create(workflow('d1', { team_name: 'acme', component_name: 'web' }, { dueAt: T0 + 60_000 }));
    await store.workflows.create(workflow('r2', { team_name: 'acme', component_name: 'web' }, { dueAt: T0 }));
    expect(await claimable(store, all)).toEqual([]);
  });
  it('keeps the steps an outside engine reported, once the workflow settled, and never before', async () => {
    const store = await freshStore(engine);
    await store.tenants.create(tenant('acme'));
    await store.workflows.create(workflow('argo-1', { team_name: 'acme', component_name: 'web' }, { steps: [] }));
    const steps = [{ name: 'build', status: 'succeeded' as const, startedAt: '2026-11-01T12:00:01.000Z', finishedAt: '2026-11-01T12:00:09.000Z', message: 'built' }];
    expect(await store.workflows.keepSteps('argo-1', steps)).toBe(false);
    expect((await store.workflows.get('argo-1'))?.steps).toEqual([]);
    await store.workflows.settle('argo-1', { phase: 'succeeded', message: 'done', finishedAt: '2026-11-01T12:00:10.000Z' });
    expect(await store.workflows.keepSteps('argo-1', steps)).toBe(true);
    expect((await store.workflows.get('argo-1'))?.steps).toEqual(steps);
    expect(await store.workflows.keepSteps('nope', steps)).toBe(false);
  });
});
