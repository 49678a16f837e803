/**
 * Issue 7 item 14: the HS256 secret kept in `PDS_DATA_DIR/jwt-secret` obeys the rule of `PDS_JWT_SECRET` (at least 32
 * characters): a shorter or empty file stops start-up with a message naming the file and how to fix it.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadOrCreateSecret } from '../../auth/self-issued.js';
import { startTestServer } from '../helpers/server.js';

const dirs: string[] = [];
async function dataDirWithSecret(content: string | undefined): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'pds-secret-'));
  dirs.push(dir);
  if (content !== undefined) await writeFile(path.join(dir, 'jwt-secret'), content, { mode: 0o600 });
  return dir;
}

afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

describe('PDS_DATA_DIR/jwt-secret', () => {
  it.each([
    ['empty', ''],
    ['only whitespace', '   \n'],
    ['5 characters', 'short\n'],
    ['31 characters', `${'x'.repeat(31)}\n`],
  ])('refuses a %s secret file, naming the file and the fix, and leaves the file alone', async (_label, content) => {
    const dir = await dataDirWithSecret(content);
    const file = path.join(dir, 'jwt-secret');
    const err = await loadOrCreateSecret(undefined, dir).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(err).toBeInstanceOf(Error);
    expect(err!.message).toContain(file);
    expect(err!.message).toContain('32');
    expect(await readFile(file, 'utf8')).toBe(content);
  });

  it('stops a server from starting on such a file', async () => {
    const dir = await dataDirWithSecret('tiny');
    await expect(startTestServer({ PDS_DATA_DIR: dir })).rejects.toThrow(path.join(dir, 'jwt-secret'));
  });

  it('accepts a file of 32 characters or more, and creates one of 43 when there is none', async () => {
    const given = 'y'.repeat(32);
    expect(new TextDecoder().decode(await loadOrCreateSecret(undefined, await dataDirWithSecret(`${given}\n`)))).toBe(given);
    const fresh = await dataDirWithSecret(undefined);
    const created = await loadOrCreateSecret(undefined, fresh);
    expect(created.length).toBeGreaterThanOrEqual(32);
    expect((await readFile(path.join(fresh, 'jwt-secret'), 'utf8')).trim()).toBe(new TextDecoder().decode(created));
  });

  it('does not read the file when PDS_JWT_SECRET is set', async () => {
    const dir = await dataDirWithSecret('tiny');
    const configured = 'z'.repeat(40);
    expect(new TextDecoder().decode(await loadOrCreateSecret(configured, dir))).toBe(configured);
  });
});
