/** The sandbox's OAuth records are the record store's (`adapters/sql/oauth.ts`, contract in test/sql/oauth.test.ts): they survive a restart. */
import { describe, expect, it } from 'vitest';
import { openSandbox, tempDir } from './helpers.js';

describe('sandbox OAuth records', () => {
  it('are in the record store: a reopened sandbox has them', async () => {
    const dir = await tempDir();
    const first = await openSandbox(dir);
    await first.oauth.upsert('RefreshToken', 'r1', { grantId: 'g' }, 3600);
    await first.close();
    const second = await openSandbox(dir);
    expect(await second.oauth.find('RefreshToken', 'r1')).toEqual({ grantId: 'g' });
  });
});
