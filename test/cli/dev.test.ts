/**
 * `pds dev` (issue 19 item 4) as a real process: the sandbox on 127.0.0.1 with `--user` as platform admin, the export
 * lines on stdout once `/healthz` answers (and in `<data-dir>/dev.env`, mode 0600, while it runs), a clean stop on
 * SIGTERM. test/readme/try-it.test.ts runs it the way the README does.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/** The environment without any PDS_* setting of the machine running the tests. */
const clean = () => {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) if (value !== undefined && !name.startsWith('PDS_')) env[name] = value;
  return env;
};

describe('pds dev', () => {
  let dataDir: string;
  let child: ReturnType<typeof spawn>;
  let stdout = '';
  let stderr = '';
  let exited: Promise<number | null>;

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'pds-dev-'));
    child = spawn(process.execPath, ['bin/pds-src.js', 'dev', '--port', '0', '--user', 'bob', '--data-dir', dataDir], {
      env: { ...clean(), PDS_SANDBOX_STEP_MS: '20', PORT: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.on('data', (d: Buffer) => (stdout += d));
    child.stderr!.on('data', (d: Buffer) => (stderr += d));
    exited = new Promise((resolve) => child.on('exit', (code) => resolve(code)));
    const deadline = Date.now() + 60_000;
    while (!/export PDS_TOKEN=\S+\n/.test(stdout)) {
      if (child.exitCode !== null || Date.now() > deadline) throw new Error(`pds dev printed no token:\n${stdout}\n${stderr}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }, 90_000);
  afterAll(() => {
    child?.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  });

  const exports = () => Object.fromEntries([...stdout.matchAll(/^export (PDS_[A-Z_]+)=(\S+)$/gm)].map((m) => [m[1]!, m[2]!]));

  it('prints only the two export lines on stdout, for a loopback URL on the port --port 0 found', async () => {
    expect(stdout).toMatch(/^export PDS_BASE_URL=http:\/\/127\.0\.0\.1:\d+\nexport PDS_TOKEN=[\w-]+\.[\w-]+\.[\w-]+\n$/);
    expect(exports().PDS_BASE_URL).not.toBe('http://127.0.0.1:1'); // --port wins over PORT
    expect((await fetch(`${exports().PDS_BASE_URL}/healthz`)).status).toBe(200);
  });

  it('makes --user a platform admin: the token lists tenants', async () => {
    const { PDS_BASE_URL, PDS_TOKEN } = exports();
    const res = await fetch(`${PDS_BASE_URL}/api/v1/tenants`, { headers: { authorization: `Bearer ${PDS_TOKEN}` } });
    expect(res.status).toBe(200);
    const [, claims] = PDS_TOKEN!.split('.');
    expect(JSON.parse(Buffer.from(claims!, 'base64url').toString())).toMatchObject({ sub: 'bob', iss: PDS_BASE_URL });
  });

  it('keeps the same lines in <data-dir>/dev.env, readable by its owner only', () => {
    const file = path.join(dataDir, 'dev.env');
    expect(readFileSync(file, 'utf8')).toBe(stdout);
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });

  it('stops on SIGTERM with exit 0 and removes dev.env', async () => {
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(existsSync(path.join(dataDir, 'dev.env'))).toBe(false);
  });

  it('refuses a bad --port with exit 2, naming it', () => {
    const result = spawnSync(process.execPath, ['bin/pds-src.js', 'dev', '--port', 'http'], { env: clean(), encoding: 'utf8' });
    expect(result.status).toBe(2);
    expect(result.stderr).toContain('--port (or PORT) must be a port number from 0 to 65535');
  });
});
