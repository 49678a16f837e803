/**
 * Tenant policies and the tenant event feed in the record store (issue 20 items 1–2), on SQLite and PostgreSQL: a
 * policy change commits with its event, the feed is newest first and bounded, and both belong to the tenant's identity.
 */
import { describe, expect, it } from 'vitest';
import type { TenantPolicy } from '../../core/governance/policy.js';
import { ENGINES, freshStore } from './helpers.js';

const acme = { name: 'acme', uid: '00000000-0000-4000-8000-000000000001' };
const weekend: TenantPolicy = {
  freezeWindows: [{ name: 'weekend', schedule: '0 18 * * 5', duration: '63h', timeZone: 'Europe/Berlin', operations: ['deploy-service'], reason: 'no one on call' }],
};

describe.each(ENGINES)('governance records on %s', (engine) => {
  it('read {} for a tenant without a policy, then the policy set, with a policy.changed event holding old and new', async () => {
    const store = await freshStore(engine);
    expect(await store.governance.policy(acme)).toEqual({});
    const first = await store.governance.setPolicy(acme, weekend, { userId: 'alice', timestamp: '2026-11-26T06:00:00.000Z' });
    expect(first).toMatchObject({ type: 'policy.changed', team: 'acme', userId: 'alice', data: { old: {}, new: weekend } });
    expect(await store.governance.policy(acme)).toEqual(weekend);
    await store.governance.setPolicy(acme, {}, { userId: 'bob', timestamp: '2026-11-26T06:01:00.000Z' });
    expect(await store.governance.policy(acme)).toEqual({});
    const events = await store.governance.events(acme, 50);
    expect(events.map((e) => [e.userId, e.data])).toEqual([
      ['bob', { old: weekend, new: {} }],
      ['alice', { old: {}, new: weekend }],
    ]);
    expect(events[1]).toEqual(first);
  });

  it('list newest first, at most limit, and only the tenant identity asked for', async () => {
    const store = await freshStore(engine);
    const reborn = { name: 'acme', uid: '00000000-0000-4000-8000-000000000002' };
    for (let i = 0; i < 5; i++) {
      await store.governance.record(acme, {
        type: 'freeze.overridden',
        userId: 'alice',
        timestamp: `2026-11-26T06:0${i}:00.000Z`,
        data: { workflowName: `deploy-service-${i}`, operation: 'deploy-service', window: 'weekend', windowEndsAt: '2026-11-30T06:00:00.000Z', reason: `r${i}` },
      });
    }
    const newest = await store.governance.events(acme, 2);
    expect(newest.map((e) => e.type === 'freeze.overridden' && e.data.reason)).toEqual(['r4', 'r3']);
    expect(await store.governance.events(reborn, 50)).toEqual([]);
    expect(await store.governance.policy(reborn)).toEqual({});
  });

  it('leave the audit trail alone', async () => {
    const store = await freshStore(engine);
    await store.governance.setPolicy(acme, weekend, { userId: 'alice', timestamp: '2026-11-26T06:00:00.000Z' });
    expect(await store.audit.query({ visible: 'all', limit: 50 })).toEqual([]);
  });
});
