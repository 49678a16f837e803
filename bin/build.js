#!/usr/bin/env node
// `npm run build`, also what the Dockerfile's build stage runs: tsc compiles the TypeScript to dist/, the scaffolding
// template files are copied beside their compiled module (templates/render.ts reads them next to itself), Vite builds
// the web console (console/, into dist/console/, which rest/console.ts serves), the MCP App views are built
// (console/mcp-apps/build.ts) and copied where the compiled tools/mcp-apps.ts reads them (dist/console/mcp-apps/, after
// the console's build, which empties dist/console/ first), and dist/.build-stamp records when the sources were read, so
// bin/pds.js can tell whether dist/ is older than them.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The checkout (or image build directory) this script belongs to, with a trailing slash. */
export const root = fileURLToPath(new URL('..', import.meta.url));
/** Written after a successful build; its modification time is when the build started reading the sources. */
export const stampFile = `${root}dist/.build-stamp`;

/**
 * Build the web console with Vite (`console/vite.config.ts`; Vite is a development dependency, which the image's build
 * stage has). Vite's own output goes to stderr, like tsc's.
 * @returns true when it built.
 */
export function buildConsole() {
  // Vite's package exports do not name its CLI; it sits beside its package.json.
  const vite = `${dirname(createRequire(import.meta.url).resolve('vite/package.json'))}/bin/vite.js`;
  const result = spawnSync(process.execPath, [vite, 'build', '--config', 'console/vite.config.ts'], { cwd: root, stdio: ['ignore', 2, 2] });
  return result.status === 0;
}

/**
 * Compile to `dist/`. Output goes to stderr only (`pds mcp` may build on first use, and its stdout is JSON-RPC).
 * @param options.clean remove `dist/` first (`npm pack`'s prepack: no file of a deleted source may ship).
 * @returns true when tsc, the console's and the views' builds succeeded and the assets were copied.
 */
export function build({ clean = false } = {}) {
  const started = new Date();
  if (clean) rmSync(`${root}dist`, { recursive: true, force: true });
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  const result = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd: root, stdio: ['ignore', 2, 2] });
  if (result.status !== 0) return false;
  cpSync(`${root}templates`, `${root}dist/templates`, { recursive: true, filter: (source) => !source.endsWith('.ts') });
  if (!buildConsole()) return false;
  const views = spawnSync(process.execPath, ['--import', 'tsx', 'console/mcp-apps/build.ts'], { cwd: root, stdio: ['ignore', 2, 2] });
  if (views.status !== 0) return false;
  cpSync(`${root}console/mcp-apps/dist`, `${root}dist/console/mcp-apps/dist`, { recursive: true });
  mkdirSync(`${root}dist`, { recursive: true });
  writeFileSync(stampFile, `${started.toISOString()}\n`);
  utimesSync(stampFile, started, started);
  return true;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  process.exitCode = build({ clean: process.argv.includes('--clean') }) ? 0 : 1;
}
