/**
 * A file an earlier pds wrote in its data directory (`state.json`, `logs.jsonl`), read once for its import into the
 * record store (`state-import.ts`, `log-import.ts`).
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';

/** The file's path, its whole text, the SHA-256 of that text (hex) and the path it is renamed to once imported. */
export interface LegacyFile {
  file: string;
  text: string;
  digest: string;
  target: string;
}

/**
 * Read `name` in `dataDir` whole.
 * @param importedName the name the file gets once imported, e.g. `state.json.imported`.
 * @returns the file, or `undefined` when there is none.
 * @throws the file system's error for anything but a missing file (e.g. EACCES).
 */
export async function readLegacyFile(dataDir: string, name: string, importedName: string): Promise<LegacyFile | undefined> {
  const file = path.join(path.resolve(dataDir), name);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  return { file, text, digest: createHash('sha256').update(text).digest('hex'), target: path.join(path.dirname(file), importedName) };
}
