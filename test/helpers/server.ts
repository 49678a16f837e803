/** Start a real pds (sandbox backend) on a free loopback port for a test, with tokens for any user. */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { issueSelfToken, loadOrCreateSecret } from '../../auth/self-issued.js';
import { loadConfig, type Config } from '../../config.js';
import { startServer, type RunningServer, type ServerOverrides } from '../../server.js';
import { freePort } from '../fixtures/free-port.js';
import { runLogger } from './run-log.js';

export interface TestServer extends RunningServer {
  dataDir: string;
  /** A self-issued bearer token for `user`. */
  token(user: string, groups?: string[]): Promise<string>;
  /** `fetch` against the server as `user` (JSON in and out). */
  api(user: string | undefined, method: string, path: string, body?: unknown): Promise<{ status: number; body: any; headers: Headers }>;
  /** Close and delete the data dir. */
  stop(): Promise<void>;
}

/** Environment for a test pds; `env` overrides. */
export async function testConfig(env: Record<string, string> = {}): Promise<Config> {
  const port = await freePort();
  const dataDir = env.PDS_DATA_DIR ?? (await mkdtemp(path.join(tmpdir(), 'pds-test-')));
  return loadConfig({
    PORT: String(port),
    HOST: '127.0.0.1',
    PDS_BASE_URL: `http://127.0.0.1:${port}`,
    PDS_DATA_DIR: dataDir,
    PDS_ADMINS: 'root',
    PDS_SANDBOX_STEP_MS: '5',
    PDS_DOMAIN: 'apps.test',
    ...env,
  });
}

/** Start pds with {@link testConfig}; it logs to the run's log (`test/helpers/run-log.ts`) unless `overrides.log` says otherwise. */
export async function startTestServer(env: Record<string, string> = {}, overrides: ServerOverrides = {}): Promise<TestServer> {
  const config = await testConfig(env);
  // No web console unless a test built one (test/helpers/console-build.ts): whether the checkout's dist/console/ exists
  // must not change what GET / answers.
  const server = await startServer(config, { log: runLogger(), consoleDir: path.join(config.dataDir, 'no-console'), ...overrides });
  const secret = await loadOrCreateSecret(config.jwtSecret, config.dataDir);
  const token = (user: string, groups: string[] = []) => issueSelfToken(secret, config.baseUrl, { sub: user, groups }, 3600);
  return {
    ...server,
    dataDir: config.dataDir,
    token,
    async api(user, method, p, body) {
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (user) headers.authorization = `Bearer ${await token(user)}`;
      const res = await fetch(server.url + p, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
      const text = await res.text();
      let parsed: unknown = text;
      try {
        parsed = JSON.parse(text);
      } catch {
        /* not JSON: keep the text */
      }
      return { status: res.status, body: parsed, headers: res.headers };
    },
    async stop() {
      await server.close();
      await rm(config.dataDir, { recursive: true, force: true });
    },
  };
}

/** Poll a workflow until its audit status is final; returns the `GET /api/v1/workflows/{name}` body. */
export async function waitForWorkflow(server: TestServer, user: string, name: string, timeoutMs = 10_000): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await server.api(user, 'GET', `/api/v1/workflows/${name}`);
    if (res.status !== 200) throw new Error(`workflow ${name}: HTTP ${res.status} ${JSON.stringify(res.body)}`);
    if (res.body.audit.status !== 'submitted') return res.body;
    if (Date.now() > deadline) throw new Error(`workflow ${name} still submitted after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * `docs/api.md#first-time-onboarding-sequence` step 3 on the sandbox: ask for the grant-access URL (the sandbox records
 * the app installation it stands for) and sync, so `repo` is registered to `team` and may be onboarded and deployed.
 */
export async function registerRepository(server: TestServer, user: string, team: string, repo: string): Promise<void> {
  const grant = await server.api(user, 'POST', '/api/v1/repos/grant-access', { team_name: team, repo });
  if (grant.status !== 200) throw new Error(`grant-access ${team} ${repo}: HTTP ${grant.status} ${JSON.stringify(grant.body)}`);
  const sync = await server.api(user, 'POST', '/api/v1/repos/sync', { team });
  if (sync.status !== 200 || !sync.body.items.some((r: { fullName: string }) => r.fullName === repo)) {
    throw new Error(`sync ${team}: HTTP ${sync.status} ${JSON.stringify(sync.body)}`);
  }
}

/**
 * Execute an operation as `user`, expect it accepted (200) and wait for its workflow.
 * @returns the final `GET /api/v1/workflows/{name}` body (its `audit.status` says succeeded or failed).
 * @throws Error with the answer when the execution is not accepted.
 */
export async function executeAndWait(server: TestServer, user: string, operation: string, params: Record<string, string>): Promise<any> {
  const res = await server.api(user, 'POST', `/api/v1/operations/${operation}/execute`, params);
  if (res.status !== 200) throw new Error(`${operation} as ${user}: HTTP ${res.status} ${JSON.stringify(res.body)}`);
  return waitForWorkflow(server, user, res.body.workflowName);
}
