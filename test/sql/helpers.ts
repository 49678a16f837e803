/**
 * Test helpers for the record store: a fresh database per test on either engine — SQLite in a new temp directory, or a
 * new database on the run's PostgreSQL server (`inject('postgresUrl')`) — closed and removed after the test.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, inject } from 'vitest';
import type { Engine } from '../../adapters/sql/database.js';
import { openRecordStore, type RecordStore, type RecordStoreOptions } from '../../adapters/sql/index.js';
import { createTestDatabase } from '../fixtures/postgres.js';

/** Both engines, for `describe.each(ENGINES)`. */
export const ENGINES: Engine[] = ['sqlite', 'postgres'];

const cleanups: Array<() => Promise<void>> = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Run `fn` after the current test (last registered, first run). */
export function afterThisTest(fn: () => Promise<void>): void {
  cleanups.push(fn);
}

/** A new empty directory, removed after the test. */
export async function tempDir(prefix = 'pds-sql-'): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), prefix));
  afterThisTest(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** Where a test's records live: a data directory, and for PostgreSQL a database URL of its own. */
export interface TestLocation {
  dataDir: string;
  databaseUrl?: string;
}

/** A fresh location on `engine` (for PostgreSQL a new database, dropped after the test). */
export async function testLocation(engine: Engine): Promise<TestLocation> {
  const dataDir = await tempDir();
  if (engine === 'sqlite') return { dataDir };
  const database = await createTestDatabase(inject('postgresUrl'));
  afterThisTest(() => database.drop());
  return { dataDir, databaseUrl: database.url };
}

/** Open a record store at `location` (closed after the test). */
export async function openStore(location: TestLocation, options: Partial<RecordStoreOptions> = {}): Promise<RecordStore> {
  const store = await openRecordStore({ ...location, ...options });
  afterThisTest(() => store.close());
  return store;
}

/** A record store on a fresh location of `engine`. */
export async function freshStore(engine: Engine, options: Partial<RecordStoreOptions> = {}): Promise<RecordStore> {
  return openStore(await testLocation(engine), options);
}
