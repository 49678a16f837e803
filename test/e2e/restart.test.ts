/**
 * Issue 2 §11: sandbox state survives a restart. A real `pds serve` process is killed with SIGKILL in the middle of a
 * deploy; a new process on the same data dir finishes (or fails) that workflow, and nothing acknowledged is lost.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { issueSelfToken, loadOrCreateSecret } from '../../auth/self-issued.js';
import { freePort } from '../fixtures/free-port.js';

let dataDir: string;
let port: number;
let child: ChildProcess | undefined;
const base = () => `http://127.0.0.1:${port}`;

function start(): ChildProcess {
  const proc = spawn(process.execPath, ['bin/pds-src.js', 'serve'], {
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      PDS_BASE_URL: base(),
      PDS_DATA_DIR: dataDir,
      PDS_ADMINS: 'root',
      PDS_SANDBOX_STEP_MS: '250',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  return proc;
}

async function untilHealthy(): Promise<void> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    try {
      if ((await fetch(`${base()}/readyz`)).ok) return;
    } catch {
      /* not listening yet */
    }
    if (Date.now() > deadline) throw new Error('pds did not become ready');
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function call(method: string, p: string, body?: unknown): Promise<any> {
  const secret = await loadOrCreateSecret(undefined, dataDir);
  const token = await issueSelfToken(secret, base(), { sub: 'root', groups: [] }, 600);
  const res = await fetch(base() + p, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

async function settled(name: string): Promise<any> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const wf = await call('GET', `/api/v1/workflows/${name}`);
    if (wf.body.audit?.status && wf.body.audit.status !== 'submitted') return wf.body;
    if (Date.now() > deadline) throw new Error(`${name} never settled`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

function kill(proc: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    proc.once('exit', () => resolve());
    proc.kill('SIGKILL');
  });
}

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(tmpdir(), 'pds-restart-'));
  port = await freePort();
});

afterAll(async () => {
  if (child && child.exitCode === null) await kill(child);
  await rm(dataDir, { recursive: true, force: true });
});

it('finishes a workflow interrupted by SIGKILL and keeps everything acknowledged', async () => {
  child = start();
  await untilHealthy();
  const tenant = await call('POST', '/api/v1/operations/create-tenant/execute', { team_name: 'acme' });
  expect((await settled(tenant.body.workflowName)).audit.status).toBe('succeeded');
  expect((await call('POST', '/api/v1/repos/grant-access', { team_name: 'acme', repo: 'acme/web' })).status).toBe(200);
  expect((await call('POST', '/api/v1/repos/sync', { team: 'acme' })).status).toBe(200);
  const onboard = await call('POST', '/api/v1/operations/deploy-service/execute', {
    action: 'onboard', team_name: 'acme', component_name: 'web', dockerfile_repo: 'acme/web', git_tag: '0.1.0', port: '8787',
  });
  expect((await settled(onboard.body.workflowName)).audit.status).toBe('succeeded');

  const deploy = await call('POST', '/api/v1/operations/deploy-service/execute', {
    action: 'deploy', team_name: 'acme', component_name: 'web', dockerfile_repo: 'acme/web', git_tag: '0.1.1',
  });
  expect(deploy.status).toBe(200);
  // Its first step done, the others still to run (each takes 250 ms): the moment to look at it and to kill pds.
  const deadline = Date.now() + 20_000;
  for (;;) {
    const wf = await call('GET', `/api/v1/workflows/${deploy.body.workflowName}`);
    expect(wf.body.audit.status).toBe('submitted');
    if (wf.body.steps?.[0]?.status === 'succeeded') break;
    if (Date.now() > deadline) throw new Error(`${deploy.body.workflowName} never finished its first step`);
    await new Promise((r) => setTimeout(r, 10));
  }
  const during = await call('GET', '/api/v1/status/acme/web');
  expect(during.body.argocd).toMatchObject({ syncStatus: 'OutOfSync', healthStatus: 'Progressing' });
  await kill(child);

  child = start();
  await untilHealthy();
  const after = await settled(deploy.body.workflowName);
  expect(after.audit.status).toBe('succeeded');
  const service = await call('GET', '/api/v1/services/acme/web');
  expect(service.body.imageTag).toBe('0.1.1');
  const status = await call('GET', '/api/v1/status/acme/web');
  expect(status.body.argocd).toMatchObject({ syncStatus: 'Synced', healthStatus: 'Healthy' });
  const audit = await call('GET', '/api/v1/audit');
  expect(audit.body.items.map((e: any) => e.workflowName)).toEqual([
    deploy.body.workflowName,
    onboard.body.workflowName,
    tenant.body.workflowName,
  ]);
  expect(audit.body.items.every((e: any) => e.status === 'succeeded')).toBe(true);
  const logs = await call('GET', '/api/v1/logs/acme/web?lines=1000');
  expect(logs.body.lines.some((l: any) => l.labels.workflow === deploy.body.workflowName)).toBe(true);
});
