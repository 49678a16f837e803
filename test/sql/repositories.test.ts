import { describe, expect, it } from 'vitest';
import { ENGINES, freshStore } from './helpers.js';
import { tenant } from './records.js';

const repo = (fullName: string, installationId?: number) => ({
  fullName,
  defaultBranch: 'main',
  private: true,
  url: `https://github.com/${fullName}`,
  ...(installationId !== undefined ? { installationId } : {}),
});

describe.each(ENGINES)('repository registrations and installations on %s', (engine) => {
  it('register repositories per tenant identity, once each, listed by name', async () => {
    const store = await freshStore(engine);
    const acme = await store.tenants.create(tenant('acme'));
    expect(await store.repositories.register(acme.uid, 'acme', [repo('acme/web', 1000), repo('acme/api')])).toEqual(['acme/api', 'acme/web']);
    expect(await store.repositories.register(acme.uid, 'acme', [repo('acme/web'), repo('acme/cli')])).toEqual(['acme/cli']);
    expect(await store.repositories.list(acme.uid)).toEqual([repo('acme/api'), repo('acme/cli'), repo('acme/web', 1000)]);
    expect(await store.repositories.isRegistered(acme.uid, 'acme/web')).toBe(true);
    expect(await store.repositories.isRegistered(acme.uid, 'bob/secret')).toBe(false);
  });

  it('remember who registered a repository and how; a registration from before that rule takes the first registrant (issue 17 item 2)', async () => {
    const store = await freshStore(engine);
    const acme = await store.tenants.create(tenant('acme'));
    const at = '2026-11-26T05:00:00.000Z';
    const by = (login: string, via: string) => ({ registeredBy: login, registeredVia: via, registeredAt: at });
    await store.repositories.register(acme.uid, 'acme', [repo('acme/old'), { ...repo('acme/web'), ...by('alice', 'push-access:write') }]);
    expect(await store.repositories.list(acme.uid)).toEqual([repo('acme/old'), { ...repo('acme/web'), ...by('alice', 'push-access:write') }]);
    // Another registrant does not overwrite the first; a legacy row is given one.
    expect(await store.repositories.register(acme.uid, 'acme', [{ ...repo('acme/web'), ...by('bob', 'push-access:admin') }])).toEqual([]);
    expect(await store.repositories.register(acme.uid, 'acme', [{ ...repo('acme/old'), ...by('bob', 'push-access:admin') }])).toEqual(['acme/old']);
    expect((await store.repositories.list(acme.uid)).map((r) => [r.fullName, r.registeredBy])).toEqual([['acme/old', 'bob'], ['acme/web', 'alice']]);
  });

  it('keep the code host ids of a repository: a registration without them takes them, ids recorded are never replaced (issue 20 item 6)', async () => {
    const store = await freshStore(engine);
    const acme = await store.tenants.create(tenant('acme'));
    const by = { registeredBy: 'alice', registeredVia: 'push-access:write', registeredAt: '2026-11-26T05:00:00.000Z' };
    await store.repositories.register(acme.uid, 'acme', [{ ...repo('acme/web'), ...by }]);
    expect((await store.repositories.list(acme.uid))[0]).not.toHaveProperty('id');
    await store.repositories.register(acme.uid, 'acme', [{ ...repo('acme/web'), ...by, id: '892543218', ownerId: '1342004' }]);
    expect((await store.repositories.list(acme.uid))[0]).toMatchObject({ id: '892543218', ownerId: '1342004' });
    // The same name, re-created on the code host (another id), does not take over the registration.
    await store.repositories.register(acme.uid, 'acme', [{ ...repo('acme/web'), ...by, id: '999', ownerId: '1342004' }]);
    expect((await store.repositories.list(acme.uid))[0]).toMatchObject({ id: '892543218', ownerId: '1342004' });
  });

  it('hand out installation ids from 1000, once per tenant and repository', async () => {
    const store = await freshStore(engine);
    const acme = await store.tenants.create(tenant('acme'));
    const beta = await store.tenants.create(tenant('beta'));
    const at = '2026-11-01T12:00:00.000Z';
    const first = await store.repositories.addInstallation({ tenantUid: acme.uid, team: 'acme', repo: 'acme/web', createdAt: at });
    const again = await store.repositories.addInstallation({ tenantUid: acme.uid, team: 'acme', repo: 'acme/web', createdAt: '2026-11-02T00:00:00.000Z' });
    const other = await store.repositories.addInstallation({ tenantUid: beta.uid, team: 'beta', repo: 'acme/web', createdAt: at });
    const given = await store.repositories.addInstallation({ id: 4242, tenantUid: beta.uid, team: 'beta', repo: 'beta/api', createdAt: at });
    expect([first.id, again.id, other.id, given.id]).toEqual([1000, 1000, 1001, 4242]);
    expect(again.createdAt).toBe(at);
    expect((await store.repositories.installations(beta.uid)).map((i) => i.repo)).toEqual(['acme/web', 'beta/api']);
  });

  it("forget a deleted tenant's registrations: a tenant re-created under its name starts with none", async () => {
    const store = await freshStore(engine);
    const old = await store.tenants.create(tenant('acme'));
    await store.repositories.register(old.uid, 'acme', [repo('acme/private')]);
    await store.repositories.addInstallation({ tenantUid: old.uid, team: 'acme', repo: 'acme/private', createdAt: '2026-11-01T12:00:00.000Z' });
    await store.tenants.delete(old.uid);
    await store.repositories.deleteTenant(old.uid);
    const current = await store.tenants.create(tenant('acme'));
    expect(await store.repositories.list(current.uid)).toEqual([]);
    expect(await store.repositories.installations(current.uid)).toEqual([]);
    expect(await store.repositories.list(old.uid)).toEqual([]);
  });
});
