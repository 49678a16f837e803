import { describe, expect, it } from 'vitest';
import { ENGINES, freshStore } from './helpers.js';
import { auditEntry, tenant, workflow } from './records.js';

describe.each(ENGINES)('audit trail on %s', (engine) => {
  it('append an entry owned by the live tenant of its team_name, and read it back by workflow name', async () => {
    const store = await freshStore(engine);
    const acme = await store.tenants.create(tenant('acme'));
    const entry = auditEntry('deploy-1', { team_name: 'acme', component_name: 'web', git_tag: '0.1.0' });
    await store.audit.append(entry);
    expect(await store.audit.get('deploy-1')).toEqual({ ...entry, tenantUid: acme.uid });
    expect(await store.audit.get('nope')).toBeUndefined();
  });

  it('refuse a second entry for the same workflow with CONFLICT', async () => {
    const store = await freshStore(engine);
    await store.audit.append(auditEntry('w1', { team_name: 'acme' }));
    await expect(store.audit.append(auditEntry('w1', { team_name: 'acme' }))).rejects.toMatchObject({ code: 'CONFLICT' });
    expect(await store.audit.count()).toBe(1);
  });

  it('record an entry whose workflow already settled with the final status, never submitted', async () => {
    const store = await freshStore(engine);
    await store.workflows.create(workflow('w1', { team_name: 'acme' }));
    await store.workflows.settle('w1', { phase: 'failed', message: 'tenant acme does not exist', finishedAt: '2026-11-01T12:00:01.000Z' });
    await store.audit.append(auditEntry('w1', { team_name: 'acme' }));
    expect(await store.audit.get('w1')).toMatchObject({ status: 'failed', message: 'tenant acme does not exist' });
  });

  it('settle an entry; unknown names are ignored', async () => {
    const store = await freshStore(engine);
    await store.audit.append(auditEntry('w1', { team_name: 'acme' }));
    await store.audit.settle('w1', 'succeeded', 'deployed');
    await store.audit.settle('unknown', 'failed', 'x');
    expect(await store.audit.get('w1')).toMatchObject({ status: 'succeeded', message: 'deployed' });
  });

  it('answer a query with what the caller may see, newest first, limited', async () => {
    const store = await freshStore(engine);
    const acme = await store.tenants.create(tenant('acme'));
    const beta = await store.tenants.create(tenant('beta'));
    const names: string[] = [];
    for (let i = 0; i < 30; i++) {
      const team = ['acme', 'beta', 'gamma'][i % 3]!;
      const userId = i % 5 === 0 ? 'bob' : 'alice';
      await store.audit.append(auditEntry(`w${i}`, { team_name: team, component_name: i % 2 ? 'web' : 'api' }, { userId }));
      names.push(`w${i}`);
    }
    const newestFirst = [...names].reverse();
    const all = await store.audit.query({ visible: 'all', limit: 50 });
    expect(all.map((e) => e.workflowName)).toEqual(newestFirst);
    expect((await store.audit.query({ visible: 'all', limit: 5 })).map((e) => e.workflowName)).toEqual(newestFirst.slice(0, 5));

    // bob is a member of acme only; he also sees his own entries in other tenants.
    const bob = { userId: 'bob', tenants: [{ name: 'acme', uid: acme.uid }] };
    const expected = newestFirst.filter((n) => {
      const i = Number(n.slice(1));
      return i % 3 === 0 || i % 5 === 0;
    });
    expect((await store.audit.query({ visible: bob, limit: 50 })).map((e) => e.workflowName)).toEqual(expected);
    expect((await store.audit.query({ visible: bob, limit: 3 })).map((e) => e.workflowName)).toEqual(expected.slice(0, 3));

    // Filters: tenant, service, user.
    const betaOnly = await store.audit.query({ visible: 'all', limit: 50, tenant: 'beta' });
    expect(betaOnly.every((e) => e.parameters.team_name === 'beta' && e.tenantUid === beta.uid)).toBe(true);
    expect(betaOnly).toHaveLength(10);
    const web = await store.audit.query({ visible: bob, limit: 50, service: 'web' });
    expect(web.map((e) => e.workflowName)).toEqual(expected.filter((n) => Number(n.slice(1)) % 2 === 1));
    const aliceInAcme = await store.audit.query({ visible: bob, limit: 50, userId: 'alice' });
    expect(aliceInAcme.every((e) => e.userId === 'alice' && e.parameters.team_name === 'acme')).toBe(true);
    expect(await store.audit.query({ visible: bob, limit: 50, tenant: 'beta', userId: 'alice' })).toEqual([]);
    expect(await store.audit.query({ visible: { userId: 'nobody', tenants: [] }, limit: 50 })).toEqual([]);
    expect(await store.audit.query({ visible: 'all', limit: 0 })).toEqual([]);
  });

  it("hide a deleted tenant's entries from the members of a tenant re-created under its name", async () => {
    const store = await freshStore(engine);
    const old = await store.tenants.create(tenant('acme'));
    await store.audit.append(auditEntry('old-config', { team_name: 'acme', component_name: 'web', env_vars: 'TOKEN=***' }, { userId: 'old-admin' }));
    await store.tenants.delete(old.uid);
    const current = await store.tenants.create(tenant('acme', { members: [{ userId: 'new-admin', role: 'admin' }] }));
    await store.audit.append(auditEntry('new-deploy', { team_name: 'acme', component_name: 'web' }, { userId: 'new-admin' }));

    const visible = { userId: 'new-admin', tenants: [{ name: 'acme', uid: current.uid }] };
    expect((await store.audit.query({ visible, limit: 50 })).map((e) => e.workflowName)).toEqual(['new-deploy']);
    expect((await store.audit.query({ visible, limit: 50, tenant: 'acme' })).map((e) => e.workflowName)).toEqual(['new-deploy']);
    // Platform admins still read the whole history of the name.
    expect((await store.audit.query({ visible: 'all', limit: 50, tenant: 'acme' })).map((e) => e.workflowName)).toEqual([
      'new-deploy',
      'old-config',
    ]);
    expect(await store.audit.get('old-config')).toMatchObject({ tenantUid: old.uid });
  });

});
