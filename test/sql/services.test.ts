import { describe, expect, it } from 'vitest';
import { ENGINES, freshStore } from './helpers.js';
import { service, tenant } from './records.js';

describe.each(ENGINES)('services on %s', (engine) => {
  it('store every field of a service and of a preview, and read them back unchanged', async () => {
    const store = await freshStore(engine);
    await store.tenants.create(tenant('acme'));
    const web = service('acme', 'web', {
      env: { LOG_LEVEL: 'debug', TOKEN: 's3cret' },
      deployedTags: ['0.1.0', '0.2.0'],
      hasDatabase: true,
      database: { engine: 'postgres', storage: '1Gi' },
      activeWorkflow: 'deploy-service-abcde',
      syncStatus: 'OutOfSync',
      healthStatus: 'Progressing',
    });
    const preview = service('acme', 'web-preview-0-2-0', {
      componentType: 'preview',
      preview: { base: 'web', imageTag: '0.2.0', ttlHours: '24', expiresAt: '2026-11-02T10:05:00.000Z' },
    });
    await store.services.put(web);
    await store.services.put(preview);
    expect(await store.services.get('acme', 'web')).toEqual(web);
    expect(await store.services.get('acme', 'web-preview-0-2-0')).toEqual(preview);
    expect(await store.services.get('acme', 'nope')).toBeUndefined();
  });

  it('replace a service on put, and remove optional parts that are gone', async () => {
    const store = await freshStore(engine);
    await store.tenants.create(tenant('acme'));
    await store.services.put(service('acme', 'web', { activeWorkflow: 'w1' }));
    const next = service('acme', 'web', { imageTag: '0.2.0', message: 'deployed 0.2.0' });
    await store.services.put(next);
    expect(await store.services.get('acme', 'web')).toEqual(next);
  });

  it('list services by team then name, or of one team', async () => {
    const store = await freshStore(engine);
    await store.tenants.create(tenant('beta'));
    await store.tenants.create(tenant('acme'));
    for (const [team, name] of [['beta', 'api'], ['acme', 'web'], ['acme', 'api']] as const) await store.services.put(service(team, name));
    expect((await store.services.list()).map((s) => `${s.team}/${s.name}`)).toEqual(['acme/api', 'acme/web', 'beta/api']);
    expect((await store.services.list('acme')).map((s) => s.name)).toEqual(['api', 'web']);
    expect(await store.services.list('nobody')).toEqual([]);
  });

  it('refuse a service of a tenant that does not exist with NOT_FOUND', async () => {
    const store = await freshStore(engine);
    await expect(store.services.put(service('ghost', 'web'))).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });

  it('find expired previews soonest first, and the next expiry', async () => {
    const store = await freshStore(engine);
    await store.tenants.create(tenant('acme'));
    const at = (iso: string) => ({ base: 'web', imageTag: '1.0.0', ttlHours: '1', expiresAt: iso });
    await store.services.put(service('acme', 'web'));
    await store.services.put(service('acme', 'p-late', { preview: at('2026-11-01T12:00:00.000Z') }));
    await store.services.put(service('acme', 'p-early', { preview: at('2026-11-01T10:00:00.000Z') }));
    await store.services.put(service('acme', 'p-future', { preview: at('2026-11-03T00:00:00.000Z') }));
    const now = Date.parse('2026-11-01T12:00:00.000Z');
    expect((await store.services.expiredPreviews(now)).map((s) => s.name)).toEqual(['p-early', 'p-late']);
    expect(await store.services.nextPreviewExpiry()).toBe(Date.parse('2026-11-01T10:00:00.000Z'));
    expect(await store.services.delete('acme', 'p-early')).toBe(true);
    expect(await store.services.delete('acme', 'p-early')).toBe(false);
    expect((await store.services.expiredPreviews(now)).map((s) => s.name)).toEqual(['p-late']);
  });
});
