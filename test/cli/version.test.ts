/**
 * `pds --version` reads pds's own package.json wherever the module sits: `bin/cli.ts` in a checkout, and
 * `dist/bin/cli.js` in the image, where package.json is two folders up (issue 18 item 1).
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packageVersion } from '../../bin/cli.js';

let app: string;
beforeAll(async () => {
  app = await mkdtemp(path.join(tmpdir(), 'pds-version-'));
  await mkdir(path.join(app, 'dist/bin'), { recursive: true });
  await mkdir(path.join(app, 'node_modules/other'), { recursive: true });
  await writeFile(path.join(app, 'package.json'), JSON.stringify({ name: 'pds', version: '7.8.9' }));
  await writeFile(path.join(app, 'node_modules/other/package.json'), JSON.stringify({ name: 'other', version: '1.0.0' }));
});
afterAll(() => rm(app, { recursive: true, force: true }));

describe('packageVersion', () => {
  it('finds package.json two folders above the compiled dist/bin/ (the image layout)', () => {
    expect(packageVersion(pathToFileURL(path.join(app, 'dist/bin/')))).toBe('7.8.9');
  });

  it('skips a package.json that is not pds\'s own', () => {
    expect(packageVersion(pathToFileURL(path.join(app, 'node_modules/other/')))).toBe('7.8.9');
  });

  it('reads the checkout\'s version from the sources', async () => {
    const { version } = (await import('../../package.json', { with: { type: 'json' } })).default;
    expect(packageVersion()).toBe(version);
  });

  it('fails with the folder it searched from when there is none', () => {
    expect(() => packageVersion(pathToFileURL(tmpdir() + '/'))).toThrow(/no package.json of pds above/);
  });
});
