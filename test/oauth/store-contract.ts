/**
 * The contract of the {@link OAuthStore} port, run against every implementation (the sandbox's durable state, SQL on
 * SQLite and PostgreSQL): what oidc-provider relies on — a record found after it is written and not after it expires
 * or is destroyed, payloads kept exactly, sessions by uid and device codes by user code, `consume` marking a record
 * used (what makes a replayed code or refresh token visible), and `revokeGrant` removing every record of a grant
 * (a refresh-token family) and nothing else.
 */
import { expect, it } from 'vitest';
import type { OAuthStore } from '../../core/ports.js';

/** Make a fresh store whose clock is `now()` (milliseconds since the epoch). */
export type MakeStore = (now: () => number) => Promise<OAuthStore>;

export function oauthStoreContract(make: MakeStore): void {
  it('finds what was written, exactly, until it expires or is destroyed', async () => {
    let now = Date.parse('2026-11-01T12:00:00Z');
    const store = await make(() => now);
    const payload = { jti: 'c1', grantId: 'g1', scope: 'pds:read', nested: { list: [1, 'two', null], ü: '__proto__' } };
    await store.upsert('AuthorizationCode', 'c1', payload, 60);
    await store.upsert('Client', 'cli', { client_id: 'cli', redirect_uris: ['http://127.0.0.1/cb'] });
    expect(await store.find('AuthorizationCode', 'c1')).toEqual(payload);
    expect(await store.find('RefreshToken', 'c1')).toBeUndefined();
    now += 59_999;
    expect(await store.find('AuthorizationCode', 'c1')).toEqual(payload);
    now += 1;
    expect(await store.find('AuthorizationCode', 'c1')).toBeUndefined();
    // No expiry: kept until destroyed.
    now += 86_400_000;
    expect(await store.find('Client', 'cli')).toMatchObject({ client_id: 'cli' });
    await store.destroy('Client', 'cli');
    expect(await store.find('Client', 'cli')).toBeUndefined();
    await store.destroy('Client', 'never-there');
  });

  it('replaces a record on upsert, and finds sessions by uid and device codes by user code', async () => {
    const store = await make(() => Date.now());
    await store.upsert('Session', 's1', { uid: 'u-old', accountId: 'alice' }, 600);
    await store.upsert('Session', 's1', { uid: 'u-new', accountId: 'alice' }, 600);
    expect(await store.findBy('Session', 'uid', 'u-old')).toBeUndefined();
    expect(await store.findBy('Session', 'uid', 'u-new')).toEqual({ uid: 'u-new', accountId: 'alice' });
    expect(await store.findBy('Interaction', 'uid', 'u-new')).toBeUndefined();
    await store.upsert('DeviceCode', 'd1', { userCode: 'ABCD-EFGH', grantId: 'g9' }, 600);
    expect(await store.findBy('DeviceCode', 'userCode', 'ABCD-EFGH')).toMatchObject({ grantId: 'g9' });
  });

  it('marks a consumed record, once, with the time in epoch seconds', async () => {
    let now = Date.parse('2026-11-01T12:00:00Z');
    const store = await make(() => now);
    await store.upsert('RefreshToken', 'r1', { grantId: 'g1' }, 3600);
    expect((await store.find('RefreshToken', 'r1'))!.consumed).toBeUndefined();
    await store.consume('RefreshToken', 'r1');
    const first = (await store.find('RefreshToken', 'r1'))!.consumed;
    expect(first).toBe(now / 1000);
    now += 5_000;
    await store.consume('RefreshToken', 'r1');
    expect((await store.find('RefreshToken', 'r1'))!.consumed).toBe(first);
    await store.consume('RefreshToken', 'unknown');
  });

  it('extends a live record on touch (a registered client used), at most once per slack, and never revives one', async () => {
    const DAY = 86_400_000;
    let now = Date.parse('2026-11-01T12:00:00Z');
    const store = await make(() => now);
    await store.upsert('Client', 'c1', { client_id: 'c1' }, 30 * 86_400);
    await store.upsert('Client', 'gone', { client_id: 'gone' }, 60);
    // Used on day 20: kept until day 50, not day 30.
    now += 20 * DAY;
    await store.touch('Client', 'c1', 30 * 86_400, 86_400);
    now += 29 * DAY;
    expect(await store.find('Client', 'c1')).toEqual({ client_id: 'c1' });
    // Used twice within the slack: the second use does not move the expiry (day 49 + 30 = day 79).
    await store.touch('Client', 'c1', 30 * 86_400, 86_400);
    now += DAY / 2;
    await store.touch('Client', 'c1', 30 * 86_400, 86_400);
    now += 30 * DAY - DAY / 2 - 1;
    expect(await store.find('Client', 'c1')).toBeDefined();
    now += 1;
    expect(await store.find('Client', 'c1')).toBeUndefined();
    // An expired record is not revived, and an unknown one is not made.
    await store.touch('Client', 'gone', 30 * 86_400, 86_400);
    await store.touch('Client', 'never', 30 * 86_400, 86_400);
    expect(await store.find('Client', 'gone')).toBeUndefined();
    expect(await store.find('Client', 'never')).toBeUndefined();
  });

  it('revokes every record of a grant, of any kind, and nothing else', async () => {
    const store = await make(() => Date.now());
    await store.upsert('RefreshToken', 'r1', { grantId: 'family' }, 3600);
    await store.upsert('RefreshToken', 'r2', { grantId: 'family' }, 3600);
    await store.upsert('AuthorizationCode', 'c1', { grantId: 'family' }, 60);
    await store.upsert('RefreshToken', 'other', { grantId: 'other-family' }, 3600);
    await store.revokeGrant('family');
    for (const [kind, id] of [['RefreshToken', 'r1'], ['RefreshToken', 'r2'], ['AuthorizationCode', 'c1']] as const) {
      expect(await store.find(kind, id)).toBeUndefined();
    }
    expect(await store.find('RefreshToken', 'other')).toEqual({ grantId: 'other-family' });
  });
}
