import { sql } from '../../adapters/sql/kysely.js';
import { describe, expect, it } from 'vitest';
import { migrations } from '../../adapters/sql/migrations.js';
import { ENGINES, openStore, testLocation } from './helpers.js';

const TABLES = [
  'approval_votes',
  'approvals',
  'audit_entries',
  'image_observations',
  'images',
  'installations',
  'log_lines',
  'oauth_records',
  'once_claims',
  'pds_meta',
  'repositories',
  'services',
  'tenant_events',
  'tenant_members',
  'tenant_policies',
  'tenants',
  'webhook_deliveries',
  'webhooks',
  'workflow_arguments',
  'workflows',
];

const INDEXES = [
  'approvals_by_release',
  'approvals_by_state_expiry',
  'approvals_by_tenant',
  'audit_by_tenant',
  'audit_by_tenant_uid',
  'audit_by_user',
  'image_observations_by_image',
  'image_observations_open',
  'log_lines_by_service_time',
  'oauth_records_by_grant',
  'oauth_records_by_uid',
  'oauth_records_by_user_code',
  'oauth_records_expiry',
  'once_claims_expiry',
  'services_by_team',
  'services_preview_expiry',
  'tenant_events_by_tenant',
  'tenant_members_by_user',
  'webhook_deliveries_by_tenant',
  'webhook_deliveries_due',
  'webhooks_by_tenant',
  'workflows_by_service',
  'workflows_by_tenant_uid',
  'workflows_by_user',
  'workflows_unfinished',
  'workflows_unfinished_by_tenant',
];

describe.each(ENGINES)('migrations on %s', (engine) => {
  it('create every table and index, and record every migration once', async () => {
    const location = await testLocation(engine);
    const store = await openStore(location);
    const tables = (await store.db.introspection.getTables()).map((t) => t.name).sort();
    expect(tables).toEqual(TABLES);

    const indexes =
      engine === 'sqlite'
        ? await sql<{ name: string }>`select name from sqlite_master where type = 'index' and name not like 'sqlite_%'`.execute(store.db)
        : await sql<{ name: string }>`select indexname as name from pg_indexes where schemaname = 'public'`.execute(store.db);
    const names = indexes.rows.map((r) => r.name);
    for (const index of INDEXES) expect(names).toContain(index);
    expect(names).not.toContain('log_lines_by_service'); // replaced by 0013's covering index

    const applied = await sql<{ name: string }>`select name from kysely_migration order by name`.execute(store.db);
    expect(applied.rows.map((r) => r.name)).toEqual(Object.keys(migrations(engine)));
  });

  it('run again at the next open without changing anything, and keep the records', async () => {
    const location = await testLocation(engine);
    const first = await openStore(location);
    await first.meta.put('probe', 'kept');
    await first.close();
    const second = await openStore(location);
    expect(await second.meta.get('probe')).toBe('kept');
    const applied = await sql<{ n: number }>`select count(*) as n from kysely_migration`.execute(second.db);
    expect(Number(applied.rows[0]!.n)).toBe(Object.keys(migrations(engine)).length);
  });

  it('migrate once when two processes open one PostgreSQL database together', async () => {
    if (engine !== 'postgres') return;
    const location = await testLocation(engine);
    const [a, b] = await Promise.all([openStore(location), openStore(location)]);
    const applied = await sql<{ n: number }>`select count(*) as n from kysely_migration`.execute(a.db);
    expect(Number(applied.rows[0]!.n)).toBe(Object.keys(migrations(engine)).length);
    expect(await b.ping()).toBe(true);
  });
});

describe('SQLite settings', () => {
  it('are WAL with synchronous=FULL and foreign keys on', async () => {
    const store = await openStore(await testLocation('sqlite'));
    const journal = await sql<{ journal_mode: string }>`pragma journal_mode`.execute(store.db);
    const synchronous = await sql<{ synchronous: number }>`pragma synchronous`.execute(store.db);
    const foreignKeys = await sql<{ foreign_keys: number }>`pragma foreign_keys`.execute(store.db);
    expect(journal.rows[0]!.journal_mode).toBe('wal');
    expect(synchronous.rows[0]!.synchronous).toBe(2); // FULL
    expect(foreignKeys.rows[0]!.foreign_keys).toBe(1);
  });
});
