import { readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkDataDirectory, DataDirectoryError } from '../../adapters/sql/index.js';
import { openStore, tempDir } from './helpers.js';

async function refusal(dataDir: string, engine: 'sqlite' | 'postgres'): Promise<DataDirectoryError> {
  const err = await checkDataDirectory({ dataDir, engine }).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(DataDirectoryError);
  return err as DataDirectoryError;
}

describe('refusing a data directory that lost its records', () => {
  it('lets a first start through: no directory, an empty one, or one with only the lock', async () => {
    const dir = await tempDir();
    await checkDataDirectory({ dataDir: path.join(dir, 'missing'), engine: 'sqlite' });
    await checkDataDirectory({ dataDir: dir, engine: 'sqlite' });
    await writeFile(path.join(dir, 'lock'), '123');
    await checkDataDirectory({ dataDir: dir, engine: 'sqlite' });
  });

  it.each(['logs.jsonl', 'state.json.imported', 'logs.jsonl.imported', 'pds.db-wal'])(
    'refuses a directory with %s but neither pds.db nor state.json, names the file, deletes nothing',
    async (trace) => {
      const dir = await tempDir();
      await writeFile(path.join(dir, trace), 'from an earlier pds\n');
      const err = await refusal(dir, 'sqlite');
      expect(err.file).toBe(trace);
      expect(err.dataDir).toBe(dir);
      expect(err.message).toContain(path.join(dir));
      expect(await readdir(dir)).toEqual([trace]);
      expect(await readFile(path.join(dir, trace), 'utf8')).toBe('from an earlier pds\n');
    },
  );

  it('starts beside a jwt-secret alone (pds token writes it before any pds ran there)', async () => {
    const dir = await tempDir();
    await writeFile(path.join(dir, 'jwt-secret'), 'x'.repeat(40));
    await checkDataDirectory({ dataDir: dir, engine: 'sqlite' });
  });

  it('names logs.jsonl first when several traces are there', async () => {
    const dir = await tempDir();
    await writeFile(path.join(dir, 'jwt-secret'), 'x'.repeat(40));
    await writeFile(path.join(dir, 'logs.jsonl'), '');
    expect((await refusal(dir, 'sqlite')).file).toBe('logs.jsonl');
  });

  it('starts when the records are there: pds.db, or a state.json still to import', async () => {
    const dir = await tempDir();
    await writeFile(path.join(dir, 'logs.jsonl'), '');
    await writeFile(path.join(dir, 'state.json'), '{}');
    await checkDataDirectory({ dataDir: dir, engine: 'sqlite' });

    const other = await tempDir();
    await writeFile(path.join(other, 'jwt-secret'), 'x'.repeat(40));
    await (await openStore({ dataDir: other })).close();
    await checkDataDirectory({ dataDir: other, engine: 'sqlite' });
  });

  it('refuses PostgreSQL beside a pds.db whose records it would leave behind', async () => {
    const dir = await tempDir();
    await (await openStore({ dataDir: dir })).close();
    const err = await refusal(dir, 'postgres');
    expect(err.file).toBe('pds.db');
    expect(await readdir(dir)).toContain('pds.db');
    // Without pds.db the PostgreSQL records are the records; the journal and secret may stay beside them.
    const plain = await tempDir();
    await writeFile(path.join(plain, 'logs.jsonl'), '');
    await checkDataDirectory({ dataDir: plain, engine: 'postgres' });
  });
});
