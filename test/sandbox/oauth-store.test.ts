/** The sandbox's OAuth records (in its durable state): the `OAuthStore` contract, and that they survive a reopen. */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { sandboxOAuthStore } from '../../adapters/sandbox/oauth.js';
import { StateStore } from '../../adapters/sandbox/store.js';
import { oauthStoreContract } from '../oauth/store-contract.js';

const open: { store: StateStore; dir: string }[] = [];
afterEach(async () => {
  for (const { store, dir } of open.splice(0)) {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  }
});

async function openState(dir?: string): Promise<{ store: StateStore; dir: string }> {
  const where = dir ?? (await mkdtemp(path.join(tmpdir(), 'pds-sandbox-oauth-')));
  const store = await StateStore.open(where);
  return { store, dir: where };
}

describe('sandbox OAuth records', () => {
  oauthStoreContract(async (now) => {
    const state = await openState();
    open.push(state);
    return sandboxOAuthStore(state.store, () => new Date(now()));
  });

  it('are on disk: a reopened state has them', async () => {
    const first = await openState();
    await sandboxOAuthStore(first.store, () => new Date()).upsert('RefreshToken', 'r1', { grantId: 'g' }, 3600);
    await first.store.close();
    const second = await openState(first.dir);
    open.push(second);
    expect(await sandboxOAuthStore(second.store, () => new Date()).find('RefreshToken', 'r1')).toEqual({ grantId: 'g' });
  });
});
