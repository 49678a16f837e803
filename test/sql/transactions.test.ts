import { describe, expect, it } from 'vitest';
import { NotFound } from '../../core/errors.js';
import { ENGINES, freshStore } from './helpers.js';
import { auditEntry, tenant, workflow } from './records.js';

describe.each(ENGINES)('units of work on %s', (engine) => {
  it('commit an audit entry and its workflow together (what execute does)', async () => {
    const store = await freshStore(engine);
    await store.transaction(async (tx) => {
      await tx.audit.append(auditEntry('w1', { team_name: 'acme' }));
      await tx.workflows.create(workflow('w1', { team_name: 'acme' }));
    });
    expect(await store.audit.get('w1')).toBeDefined();
    expect(await store.workflows.get('w1')).toBeDefined();
  });

  it('leave nothing behind when the work throws — no audit entry without its workflow', async () => {
    const store = await freshStore(engine);
    await store.workflows.create(workflow('taken', { team_name: 'acme' }));
    await expect(
      store.transaction(async (tx) => {
        await tx.audit.append(auditEntry('taken', { team_name: 'acme' }));
        await tx.tenants.create(tenant('acme'));
        await tx.workflows.create(workflow('taken', { team_name: 'acme' })); // CONFLICT
      }),
    ).rejects.toMatchObject({ code: 'CONFLICT' });
    expect(await store.audit.get('taken')).toBeUndefined();
    expect(await store.tenants.get('acme')).toBeUndefined();
  });

  it('pass the work’s own errors through unchanged', async () => {
    const store = await freshStore(engine);
    const own = new NotFound('service acme/web does not exist');
    await expect(store.transaction(async () => Promise.reject(own))).rejects.toBe(own);
    const bug = new TypeError('x is not a function');
    await expect(store.transaction(async () => Promise.reject(bug))).rejects.toBe(bug);
  });

  it('see its own uncommitted writes inside, and nothing of them outside until commit', async () => {
    const store = await freshStore(engine);
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const work = store.transaction(async (tx) => {
      await tx.tenants.create(tenant('acme'));
      expect(await tx.tenants.get('acme')).toBeDefined();
      await gate;
    });
    if (engine === 'postgres') {
      // Another connection does not see it yet (SQLite runs one transaction at a time on its one connection).
      await new Promise((r) => setTimeout(r, 50));
      expect(await store.tenants.get('acme')).toBeUndefined();
    }
    release();
    await work;
    expect(await store.tenants.get('acme')).toBeDefined();
  });
});
