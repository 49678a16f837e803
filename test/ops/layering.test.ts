/**
 * The rooms of `DESIGN.md` ("Layout"), checked on the import statements themselves (read with TypeScript's own
 * `preProcessFile`, type-only and dynamic imports included): `core/` imports nothing of ours outside `core/`, and
 * `auth/` imports no adapter (the composition root, `server.ts`, injects what it needs: the GitHub look-up, Redis).
 */
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve('.');

/** Every `.ts` file under `folder` (tests excluded), relative to the repository root. */
async function sourcesIn(folder: string): Promise<string[]> {
  const entries = await readdir(path.join(ROOT, folder), { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile() && e.name.endsWith('.ts') && !e.name.endsWith('.test.ts'))
    .map((e) => path.relative(ROOT, path.join(e.parentPath, e.name)));
}

/** The repository files `file` imports (relative specifiers resolved from its folder), relative to the root. */
async function importsOf(file: string): Promise<string[]> {
  const { importedFiles } = ts.preProcessFile(await readFile(path.join(ROOT, file), 'utf8'), true, true);
  return importedFiles
    .map((i) => i.fileName)
    .filter((spec) => spec.startsWith('.'))
    .map((spec) => path.relative(ROOT, path.resolve(ROOT, path.dirname(file), spec)));
}

/** `file → imported` for each import of a file in `folder` that `refused` says may not be there. */
async function breaches(folder: string, refused: (imported: string) => boolean): Promise<string[]> {
  const found: string[] = [];
  for (const file of await sourcesIn(folder)) {
    for (const imported of await importsOf(file)) if (refused(imported)) found.push(`${file} → ${imported}`);
  }
  return found;
}

const inside = (folder: string) => (imported: string) => imported === folder || imported.startsWith(`${folder}/`);

describe('the rooms of DESIGN.md', () => {
  it('core/ imports nothing of ours outside core/', async () => {
    expect(await sourcesIn('core')).not.toEqual([]);
    expect(await breaches('core', (imported) => !inside('core')(imported))).toEqual([]);
  });

  it('auth/ imports no adapter', async () => {
    expect(await sourcesIn('auth')).not.toEqual([]);
    expect(await breaches('auth', inside('adapters'))).toEqual([]);
  });

  it('reads type-only and re-exporting imports too', async () => {
    const { importedFiles } = ts.preProcessFile("import type { A } from '../adapters/a.js';\nexport { B } from './b.js';\n", true, true);
    expect(importedFiles.map((i) => i.fileName)).toEqual(['../adapters/a.js', './b.js']);
  });
});
