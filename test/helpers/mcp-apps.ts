/**
 * The MCP App views for tests that read them: built (`console/mcp-apps/build.ts`, as `npm run build` does) when missing
 * or older than their sources, so a test never serves a stale view.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '../..');
const sources = path.join(root, 'console/mcp-apps');
const built = ['workflow.html', 'service.html'].map((f) => path.join(sources, 'dist', f));

function newest(dir: string): number {
  let time = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'dist' || entry.name === 'node_modules') continue;
    const full = path.join(dir, entry.name);
    time = Math.max(time, entry.isDirectory() ? newest(full) : statSync(full).mtimeMs);
  }
  return time;
}

/**
 * Build the views unless every one is newer than every source.
 * @throws Error with the build's output when it fails.
 */
export function ensureViewsBuilt(): void {
  const oldest = Math.min(...built.map((f) => statSync(f, { throwIfNoEntry: false })?.mtimeMs ?? 0));
  if (oldest > newest(sources)) return;
  const result = spawnSync(process.execPath, ['--import', 'tsx', 'console/mcp-apps/build.ts'], { cwd: root, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`building the MCP App views failed:\n${result.stdout}\n${result.stderr}`);
}
