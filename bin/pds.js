#!/usr/bin/env node
// The `pds` command: runs the compiled tree, dist/bin/main.js. In a checkout (tsconfig.build.json and TypeScript at
// hand) it first compiles when dist/ is missing or older than any source, so `npm ci && npm start` and `npx pds` work
// without a separate build step and never run stale code. Where only dist/ ships (the image) it just runs it.
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const entry = path.join(root, 'dist/bin/main.js');

/** The newest modification time (ms) of what `npm run build` reads: tsconfig.build.json's `include`, and `console/`. */
function newestSource() {
  const config = JSON.parse(readFileSync(path.join(root, 'tsconfig.build.json'), 'utf8'));
  let newest = Math.max(statSync(path.join(root, 'tsconfig.build.json')).mtimeMs, statSync(path.join(root, 'tsconfig.json')).mtimeMs);
  const visit = (file) => {
    const stat = statSync(file, { throwIfNoEntry: false });
    if (!stat) return;
    if (stat.isDirectory()) {
      for (const name of readdirSync(file)) if (name !== 'node_modules' && name !== 'dist') visit(path.join(file, name));
    } else newest = Math.max(newest, stat.mtimeMs);
  };
  // The web console and the MCP App views (console/, built into dist/console/), beside what tsc reads.
  visit(path.join(root, 'console'));
  for (const pattern of config.include) {
    if (pattern.includes('*')) {
      // "*.ts": the root's own files.
      const suffix = pattern.replace(/^\*/, '');
      for (const name of readdirSync(root)) if (name.endsWith(suffix)) visit(path.join(root, name));
    } else visit(path.join(root, pattern));
  }
  return newest;
}

function isCheckout() {
  if (!existsSync(path.join(root, 'tsconfig.build.json'))) return false;
  try {
    createRequire(import.meta.url).resolve('typescript/bin/tsc');
    return true;
  } catch {
    return false;
  }
}

if (isCheckout()) {
  const stamp = statSync(path.join(root, 'dist/.build-stamp'), { throwIfNoEntry: false });
  if (!stamp || !existsSync(entry) || newestSource() > stamp.mtimeMs) {
    process.stderr.write('pds: compiling the sources to dist/ (npm run build)…\n');
    const { build } = await import('./build.js');
    if (!build()) {
      process.stderr.write('pds: the build failed (above); fix it, or run the sources with `npm run dev`\n');
      process.exit(1);
    }
  }
} else if (!existsSync(entry)) {
  process.stderr.write(`pds: ${entry} is missing: run \`npm ci\` (with dev dependencies) and \`npm run build\`\n`);
  process.exit(1);
}
await import(pathToFileURL(entry).href);
