/**
 * The README's "Try it" block works when pasted (issue 19 item 4): every fenced `sh` block that follows a
 * `<!-- test: try-it -->` line runs, as written, in bash with `set -euo pipefail`, in an empty directory whose
 * `node_modules/.bin/pds` is this checkout's compiled command (so `npx pds` there is this checkout's, as it is inside
 * the checkout), with `PORT` and `PDS_BASE_URL` on a free loopback port and no other `PDS_*` setting from outside.
 * The journey must end with the service Healthy, and the `pds dev` the block started in the background must be gone
 * once the shell has exited (the shell's EXIT trap stops it).
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../fixtures/free-port.js';

const repo = path.resolve('.');
const MARKER = '<!-- test: try-it -->';

/**
 * The `sh` blocks that follow a {@link MARKER} line (blank lines between are allowed), in README order.
 * @throws Error when a marker is not followed by a fenced `sh` block.
 */
export function markedBlocks(markdown: string, marker = MARKER): string[] {
  const lines = markdown.split('\n');
  const blocks: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (lines[i]!.trim() !== marker) continue;
    let j = i + 1;
    while (j < lines.length && lines[j]!.trim() === '') j++;
    if (lines[j]?.trim() !== '```sh') throw new Error(`README line ${i + 1}: ${marker} is not followed by a \`\`\`sh block`);
    const end = lines.findIndex((line, k) => k > j && line.trim() === '```');
    if (end < 0) throw new Error(`README line ${j + 1}: the \`\`\`sh block never closes`);
    blocks.push(lines.slice(j + 1, end).join('\n'));
    i = end;
  }
  return blocks;
}

describe('the README "Try it" block', () => {
  let dir: string;
  beforeAll(() => {
    // The compiled tree, built here when it is missing or stale, so the block's first `npx pds dev` does not spend
    // the test's time compiling (a person's first paste does: the block waits up to 120 s for /healthz).
    const built = spawnSync(process.execPath, ['bin/pds.js', '--version'], { cwd: repo, encoding: 'utf8' });
    expect(built.status, built.stderr).toBe(0);
    dir = mkdtempSync(path.join(tmpdir(), 'pds-try-it-'));
    mkdirSync(path.join(dir, 'node_modules/.bin'), { recursive: true });
    symlinkSync(path.join(repo, 'bin/pds.js'), path.join(dir, 'node_modules/.bin/pds'));
  }, 300_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('is marked in the README, and finds sh blocks only where marked', () => {
    const blocks = markedBlocks(readFileSync(path.join(repo, 'README.md'), 'utf8'));
    expect(blocks.length).toBeGreaterThan(0);
    expect(blocks.join('\n')).toContain('npx pds dev &');
    expect(() => markedBlocks(`${MARKER}\n\n\`\`\`json\n{}\n\`\`\`\n`)).toThrow(/not followed by a ```sh block/);
  });

  it('runs as written against an empty directory and ends with the service Healthy', async () => {
    const blocks = markedBlocks(readFileSync(path.join(repo, 'README.md'), 'utf8'));
    const port = await freePort();
    const baseUrl = `http://127.0.0.1:${port}`;
    const env: Record<string, string> = {};
    for (const [name, value] of Object.entries(process.env)) if (value !== undefined && !name.startsWith('PDS_')) env[name] = value;
    Object.assign(env, { PORT: String(port), PDS_BASE_URL: baseUrl, PDS_SANDBOX_STEP_MS: '50', USER: 'alice', NO_COLOR: '1' });
    // At the end, what `kill %1` does in a person's interactive shell: SIGTERM to the whole job, npx and the pds dev
    // under it (npx does not pass a signal on). The shell is its own process group here, so the EXIT trap signals
    // that group (ignoring the signal itself) and waits for the background jobs to end.
    const script = ['set -euo pipefail', `trap "trap '' TERM; kill -TERM 0; wait" EXIT`, ...blocks].join('\n');
    // Its own process group: the trap's `kill 0` reaches everything the block started, and so does the test's SIGKILL
    // should the block hang or the trap fail.
    const shell = spawn('bash', ['-c', script], { cwd: dir, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    shell.stdout.on('data', (d: Buffer) => (stdout += d));
    shell.stderr.on('data', (d: Buffer) => (stderr += d));
    // The shell's exit, then the end of its output pipes: they close once nothing the block started holds them.
    const exited = new Promise<number | null>((resolve) => shell.on('exit', (code) => resolve(code)));
    const closed = new Promise<void>((resolve) => shell.on('close', () => resolve()));
    const hung = setTimeout(() => process.kill(-shell.pid!, 'SIGKILL'), 150_000);
    const code = await exited;
    clearTimeout(hung);
    const outlived = await Promise.race([closed.then(() => false), new Promise<boolean>((resolve) => setTimeout(() => resolve(true), 20_000))]);
    try {
      expect(code, `the block failed (exit ${code}):\n--- stdout\n${stdout}\n--- stderr\n${stderr.slice(-6000)}`).toBe(0);
      // pds dev's lines, create-tenant answering once settled, and `npx pds status` (JSON, as its stdout is a pipe).
      expect(stdout).toContain(`export PDS_BASE_URL=${baseUrl}`);
      // Piped, the CLI prints JSON: each --wait the settled workflow, pds status the Status.
      expect(stdout).toMatch(/"phase":\s*"succeeded"/);
      expect(stdout).not.toMatch(/"phase":\s*"failed"/);
      expect(stdout).toMatch(/"healthStatus":\s*"Healthy"/);
      expect(stdout).toMatch(/"syncStatus":\s*"Synced"/);
      expect(stdout).toContain('retire-service');
      // The trap stopped pds dev: within 20 s of the shell's exit nothing it started is left, and nothing answers.
      expect(outlived, 'a process the block started outlived the shell').toBe(false);
      expect(await fetch(`${baseUrl}/healthz`).then((r) => r.status, () => 'refused')).toBe('refused');
    } finally {
      try {
        process.kill(-shell.pid!, 'SIGKILL');
      } catch {
        // The group is empty: everything ended.
      }
    }
  }, 180_000);
});
