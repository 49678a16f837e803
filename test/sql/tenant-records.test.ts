import { describe, expect, it } from 'vitest';
import { draftKey, loadTenantDraft, saveTenantDraft } from '../../adapters/sql/tenant-records.js';
import { ENGINES, freshStore } from './helpers.js';
import { service, tenant } from './records.js';

describe.each(ENGINES)('a tenant draft on %s (a step run against the store)', (engine) => {
  it('create a tenant and a service from an empty draft, then change and remove them', async () => {
    const store = await freshStore(engine);
    const created = await store.transaction(async (tx) => {
      const { draft, before } = await loadTenantDraft(tx, 'acme');
      expect(draft).toEqual({ tenants: {}, services: {} });
      draft.tenants.acme = tenant('acme');
      return saveTenantDraft(tx, 'acme', before, draft);
    });
    expect(created?.uid).toBeDefined();
    expect(await store.tenants.get('acme')).toEqual(created);

    await store.transaction(async (tx) => {
      const { draft, before } = await loadTenantDraft(tx, 'acme');
      draft.services[draftKey('acme', 'web')] = service('acme', 'web');
      draft.services[draftKey('acme', 'api')] = service('acme', 'api');
      draft.tenants.acme!.quotas.cpu = '8';
      await saveTenantDraft(tx, 'acme', before, draft);
    });
    expect((await store.tenants.get('acme'))!.quotas.cpu).toBe('8');
    expect((await store.services.list('acme')).map((s) => s.name)).toEqual(['api', 'web']);

    await store.transaction(async (tx) => {
      const { draft, before } = await loadTenantDraft(tx, 'acme');
      draft.services[draftKey('acme', 'web')]!.imageTag = '0.2.0';
      delete draft.services[draftKey('acme', 'api')];
      await saveTenantDraft(tx, 'acme', before, draft);
    });
    expect((await store.services.list('acme')).map((s) => [s.name, s.imageTag])).toEqual([['web', '0.2.0']]);
  });

  it('delete the tenant with its services and registrations; nothing is written when the step throws', async () => {
    const store = await freshStore(engine);
    const acme = await store.tenants.create(tenant('acme'));
    await store.services.put(service('acme', 'web'));
    await store.repositories.register(acme.uid, 'acme', [{ fullName: 'acme/web', defaultBranch: 'main', private: true, url: 'u' }]);

    await expect(
      store.transaction(async (tx) => {
        const { draft, before } = await loadTenantDraft(tx, 'acme');
        delete draft.tenants.acme;
        await saveTenantDraft(tx, 'acme', before, draft);
        throw new Error('the step failed after writing');
      }),
    ).rejects.toThrow('the step failed after writing');
    expect(await store.tenants.get('acme')).toBeDefined();

    await store.transaction(async (tx) => {
      const { draft, before } = await loadTenantDraft(tx, 'acme');
      delete draft.tenants.acme;
      expect(await saveTenantDraft(tx, 'acme', before, draft)).toBeUndefined();
    });
    expect(await store.tenants.get('acme')).toBeUndefined();
    expect(await store.services.list('acme')).toEqual([]);
    expect(await store.repositories.list(acme.uid)).toEqual([]);
  });
});
