/**
 * The web console built for a test file (issue 21): Vite's own CLI on `console/vite.config.ts`, into a directory of
 * the file's own, so test files running at once never share or empty one another's output.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** A built console: its directory (for `startTestServer(env, { consoleDir })`) and Vite's manifest. */
export interface BuiltConsole {
  dir: string;
  manifest: Record<string, { file: string; isEntry?: boolean; imports?: string[]; dynamicImports?: string[]; css?: string[] }>;
}

/** Build the console into a fresh temporary directory. */
export async function buildConsole(): Promise<BuiltConsole> {
  const dir = await mkdtemp(path.join(tmpdir(), 'pds-console-'));
  const vite = path.join(path.dirname(createRequire(import.meta.url).resolve('vite/package.json')), 'bin/vite.js');
  await promisify(execFile)(process.execPath, [vite, 'build', '--config', 'console/vite.config.ts', '--outDir', dir, '--emptyOutDir'], {
    cwd: root,
    timeout: 120_000,
  });
  return { dir, manifest: JSON.parse(await readFile(path.join(dir, '.vite/manifest.json'), 'utf8')) };
}
