#!/usr/bin/env node
// `npm run build`, also what the Dockerfile's build stage runs: tsc compiles the TypeScript to dist/, the scaffolding
// template files are copied beside their compiled module (templates/render.ts reads them next to itself), Vite builds
// the web console (console/, into dist/console/, which rest/console.ts serves) and any other front-end entry listed in
// FRONT_ENDS, and dist/.build-stamp records when the sources were read, so bin/pds.js can tell whether dist/ is older
// than them.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The checkout (or image build directory) this script belongs to, with a trailing slash. */
export const root = fileURLToPath(new URL('..', import.meta.url));
/** Written after a successful build; its modification time is when the build started reading the sources. */
export const stampFile = `${root}dist/.build-stamp`;

/**
 * The front-end builds: each a Vite config of its own, run in this order when its file exists (the MCP Apps views, in
 * console/mcp-apps once they exist, build on their own entry beside the console's).
 */
export const FRONT_ENDS = ['console/vite.config.ts', 'console/mcp-apps/vite.config.ts'];

/**
 * Build the front ends with Vite (a development dependency; the image's build stage has it). Vite's own output goes
 * to stderr, like tsc's.
 * @returns true when every configured front end built.
 */
export function buildFrontEnds() {
  // Vite's package exports do not name its CLI; it sits beside its package.json.
  const vite = `${dirname(createRequire(import.meta.url).resolve('vite/package.json'))}/bin/vite.js`;
  for (const config of FRONT_ENDS) {
    if (!existsSync(`${root}${config}`)) continue;
    const result = spawnSync(process.execPath, [vite, 'build', '--config', config], { cwd: root, stdio: ['ignore', 2, 2] });
    if (result.status !== 0) return false;
  }
  return true;
}

/**
 * Compile to `dist/`. Output goes to stderr only (`pds mcp` may build on first use, and its stdout is JSON-RPC).
 * @param options.clean remove `dist/` first (`npm pack`'s prepack: no file of a deleted source may ship).
 * @returns true when tsc and Vite succeeded and the assets were copied.
 */
export function build({ clean = false } = {}) {
  const started = new Date();
  if (clean) rmSync(`${root}dist`, { recursive: true, force: true });
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  const result = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd: root, stdio: ['ignore', 2, 2] });
  if (result.status !== 0) return false;
  cpSync(`${root}templates`, `${root}dist/templates`, { recursive: true, filter: (source) => !source.endsWith('.ts') });
  if (!buildFrontEnds()) return false;
  mkdirSync(`${root}dist`, { recursive: true });
  writeFileSync(stampFile, `${started.toISOString()}\n`);
  utimesSync(stampFile, started, started);
  return true;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  process.exitCode = build({ clean: process.argv.includes('--clean') }) ? 0 : 1;
}
