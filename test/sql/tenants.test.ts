import { describe, expect, it } from 'vitest';
import { ENGINES, freshStore } from './helpers.js';
import { service, tenant } from './records.js';

describe.each(ENGINES)('tenants on %s', (engine) => {
  it('create a tenant with a uid and its members in order, and read it back by name and uid', async () => {
    const store = await freshStore(engine);
    const created = await store.tenants.create(tenant('acme'));
    expect(created.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(await store.tenants.get('acme')).toEqual(created);
    expect(await store.tenants.getByUid(created.uid)).toEqual(created);
    expect(created.members.map((m) => m.userId)).toEqual(['acme-admin', 'acme-dev', 'acme-viewer']);
    expect(await store.tenants.get('nope')).toBeUndefined();
  });

  it('refuse a second tenant of the same name with CONFLICT', async () => {
    const store = await freshStore(engine);
    await store.tenants.create(tenant('acme'));
    await expect(store.tenants.create(tenant('acme'))).rejects.toMatchObject({ code: 'CONFLICT' });
    expect(await store.tenants.list()).toHaveLength(1);
  });

  it('list tenants by name, and the memberships of a user', async () => {
    const store = await freshStore(engine);
    await store.tenants.create(tenant('zeta'));
    const acme = await store.tenants.create(tenant('acme', { members: [{ userId: 'bob', role: 'viewer' }] }));
    const beta = await store.tenants.create(tenant('beta', { members: [{ userId: 'bob', role: 'admin' }] }));
    expect((await store.tenants.list()).map((t) => t.name)).toEqual(['acme', 'beta', 'zeta']);
    expect(await store.tenants.memberships('bob')).toEqual([
      { name: 'acme', uid: acme.uid, role: 'viewer' },
      { name: 'beta', uid: beta.uid, role: 'admin' },
    ]);
    expect(await store.tenants.memberships('nobody')).toEqual([]);
  });

  it('update quotas and members but never the uid, name or creation time', async () => {
    const store = await freshStore(engine);
    const created = await store.tenants.create(tenant('acme'));
    await store.tenants.update({
      ...created,
      name: 'renamed',
      createdAt: '1999-01-01T00:00:00.000Z',
      quotas: { cpu: '8', memory: '16Gi', pods: '40' },
      members: [{ userId: 'carol', role: 'admin' }],
    });
    expect(await store.tenants.get('acme')).toEqual({
      ...created,
      quotas: { cpu: '8', memory: '16Gi', pods: '40' },
      members: [{ userId: 'carol', role: 'admin' }],
    });
  });

  it('delete a tenant with its members and services; a tenant re-created under the name is a new identity', async () => {
    const store = await freshStore(engine);
    const old = await store.tenants.create(tenant('acme'));
    await store.services.put(service('acme', 'web'));
    expect(await store.tenants.delete(old.uid)).toBe(true);
    expect(await store.tenants.delete(old.uid)).toBe(false);
    expect(await store.services.list('acme')).toEqual([]);
    expect(await store.tenants.memberships('acme-admin')).toEqual([]);

    const again = await store.tenants.create(tenant('acme', { members: [{ userId: 'new-admin', role: 'admin' }] }));
    expect(again.uid).not.toBe(old.uid);
    expect(await store.tenants.getByUid(old.uid)).toBeUndefined();
  });
});
