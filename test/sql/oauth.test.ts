/** The OAuth authorization server's records in SQL, on both engines: the `OAuthStore` contract and the sweep. */
import { describe, expect, it } from 'vitest';
import { oauthStoreContract } from '../oauth/store-contract.js';
import { ENGINES, freshStore } from './helpers.js';

describe.each(ENGINES)('OAuth records on %s', (engine) => {
  oauthStoreContract(async (now) => (await freshStore(engine, { now: () => new Date(now()) })).oauth);

  it('sweeps expired records and keeps the rest', async () => {
    let now = 1_000_000_000;
    const store = await freshStore(engine, { now: () => new Date(now) });
    await store.oauth.upsert('Interaction', 'i1', { uid: 'i1' }, 1);
    await store.oauth.upsert('Client', 'c1', { client_id: 'c1' });
    now += 1_000;
    expect(await store.oauth.sweep()).toBe(1);
    expect(await store.oauth.find('Client', 'c1')).toEqual({ client_id: 'c1' });
  });

  it('is shared by two stores on one database: a code consumed by one is consumed for the other', async () => {
    const { openStore, testLocation } = await import('./helpers.js');
    const location = await testLocation(engine);
    const a = await openStore(location);
    const b = await openStore(location);
    await a.oauth.upsert('AuthorizationCode', 'c', { grantId: 'g' }, 60);
    await b.oauth.consume('AuthorizationCode', 'c');
    expect((await a.oauth.find('AuthorizationCode', 'c'))!.consumed).toEqual(expect.any(Number));
    await a.oauth.revokeGrant('g');
    expect(await b.oauth.find('AuthorizationCode', 'c')).toBeUndefined();
  });
});
