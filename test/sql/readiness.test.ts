import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { openRecordStore } from '../../adapters/sql/index.js';
import { startPostgres } from '../fixtures/postgres.js';
import { afterThisTest, openStore, tempDir, testLocation } from './helpers.js';
import { auditEntry } from './records.js';
import { until } from '../helpers/until.js';

describe('readiness of the record store', () => {
  it('SQLite: ready while a write commits; not ready while another writer holds the lock; ready again after', async () => {
    const location = await testLocation('sqlite');
    const store = await openStore(location, { busyTimeoutMs: 100 });
    expect(await store.ping()).toBe(true);
    expect(await store.writable()).toBe(true);

    const other = new BetterSqlite3(path.join(location.dataDir, 'pds.db'));
    other.exec('begin immediate');
    try {
      expect(await store.writable()).toBe(false);
      await expect(store.audit.append(auditEntry('w1', { team_name: 'acme' }))).rejects.toMatchObject({ code: 'UNAVAILABLE' });
      expect(await store.ping()).toBe(true); // readers never wait in WAL mode
    } finally {
      other.exec('rollback');
      other.close();
    }
    expect(await store.writable()).toBe(true);
    await store.close();
    expect(await store.ping()).toBe(false);
    expect(await store.writable()).toBe(false);
  });

  it('PostgreSQL: not ready while the server is down or read-only, ready again by itself after', async () => {
    const server = await startPostgres();
    afterThisTest(() => server.stop());
    const dataDir = await tempDir();
    const store = await openRecordStore({ dataDir, databaseUrl: server.url });
    afterThisTest(() => store.close());
    expect(await store.writable()).toBe(true);

    await server.readOnly(true);
    // The server's backends take the reloaded setting when each gets to it: wait for the store to see it.
    await until('the store to see the server read-only', async () => !(await store.writable()), 10);
    expect(await store.ping()).toBe(true);
    await expect(store.audit.append(auditEntry('w1', { team_name: 'acme' }))).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    await server.readOnly(false);
    await until('the store to see the server writable again', () => store.writable(), 10);

    await server.halt();
    expect(await store.ping()).toBe(false);
    expect(await store.writable()).toBe(false);
    await expect(store.audit.append(auditEntry('w2', { team_name: 'acme' }))).rejects.toMatchObject({ code: 'UNAVAILABLE' });

    await server.restart();
    expect(await store.writable()).toBe(true);
    await store.audit.append(auditEntry('w3', { team_name: 'acme' }));
    expect(await store.audit.get('w3')).toBeDefined();
  });
});
