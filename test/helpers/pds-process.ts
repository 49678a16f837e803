/**
 * A real `pds serve` process (bin/pds-src.js) on a free loopback port, for tests that kill it (SIGKILL), run two on one
 * PostgreSQL, or watch what it logs. Tokens are signed with a fixed `PDS_JWT_SECRET`, so every process of a test accepts
 * them. No vitest import.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { issueSelfToken } from '../../auth/self-issued.js';
import { freePort } from '../fixtures/free-port.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** The secret every test process signs with (≥ 32 characters). */
export const TEST_JWT_SECRET = 'records-test-secret-0123456789abcdef';

export interface PdsProcess {
  readonly url: string;
  readonly child: ChildProcess;
  /** Everything the process wrote to stdout and stderr so far (its JSON log lines). */
  output(): string;
  /** `fetch` as `user` (JSON in and out); `user` undefined sends no token. */
  api(user: string | undefined, method: string, path: string, body?: unknown): Promise<{ status: number; body: any }>;
  /** Resolves with the exit code (or signal) once the process ended. */
  readonly exited: Promise<number | NodeJS.Signals | null>;
  /** SIGKILL: no close, no flush. */
  kill9(): Promise<void>;
  /** SIGTERM and wait for the exit. */
  stop(): Promise<void>;
}

export interface PdsProcessOptions {
  dataDir: string;
  databaseUrl?: string;
  stepMs?: number;
  env?: Record<string, string>;
  /** Wait for /readyz 200 (default true); false returns once the process has been spawned. */
  waitReady?: boolean;
}

/** Start `pds serve`; resolves once `/readyz` answers 200 (or the process exited: then it rejects with its output). */
export async function startPds(options: PdsProcessOptions): Promise<PdsProcess> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child = spawn(process.execPath, ['bin/pds-src.js', 'serve'], {
    cwd: repoRoot,
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      PDS_BASE_URL: url,
      PDS_DATA_DIR: options.dataDir,
      PDS_ADMINS: 'root',
      PDS_JWT_SECRET: TEST_JWT_SECRET,
      PDS_SANDBOX_STEP_MS: String(options.stepMs ?? 50),
      PDS_DOMAIN: 'apps.test',
      PDS_LOG_LEVEL: 'debug',
      ...(options.databaseUrl ? { PDS_DATABASE_URL: options.databaseUrl } : {}),
      ...options.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number | NodeJS.Signals | null>((resolve) => child.on('exit', (code, signal) => resolve(signal ?? code)));
  const secret = new TextEncoder().encode(TEST_JWT_SECRET);
  const pds: PdsProcess = {
    url,
    child,
    output: () => output,
    exited,
    async api(user, method, p, body) {
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (user) headers.authorization = `Bearer ${await issueSelfToken(secret, url, { sub: user, groups: [] }, 600)}`;
      const res = await fetch(url + p, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
      const text = await res.text();
      let parsed: unknown = text;
      try {
        parsed = JSON.parse(text);
      } catch {
        /* not JSON */
      }
      return { status: res.status, body: parsed };
    },
    async kill9() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
  if (options.waitReady === false) return pds;
  const deadline = Date.now() + 30_000;
  let gone = false;
  void exited.then(() => (gone = true));
  for (;;) {
    if (gone) throw new Error(`pds exited before it was ready:\n${output}`);
    try {
      if ((await fetch(`${url}/readyz`)).status === 200) return pds;
    } catch {
      /* not listening yet */
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`pds did not become ready within 30 s:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Poll `GET /api/v1/workflows/{name}` as `user` until its status is final; returns the body. */
export async function settledOver(pds: PdsProcess, user: string, name: string, timeoutMs = 30_000): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await pds.api(user, 'GET', `/api/v1/workflows/${name}`);
    if (res.status === 200 && res.body.audit?.status !== 'submitted') return res.body;
    if (Date.now() > deadline) throw new Error(`workflow ${name} did not settle: ${JSON.stringify(res.body)}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
