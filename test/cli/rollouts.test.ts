/**
 * `pds rollouts promote|abort TEAM/APP` as a real process against a real pds (issue 22 item 4): a person onboards a
 * canary service with `pds deploy --onboard --strategy canary`, sees a release paused at 10% in `pds status`, promotes
 * it and waits for it; aborts the next one, which fails saying who aborted it; a viewer and a promote with nothing in
 * progress are refused with the server's message. Under a policy asking approval for deploys, a promote prints the
 * wait and the command that approves it, and another person's `pds approvals approve` performs it.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { runCli } from '../helpers/cli-process.js';
import { executeAndWait, registerRepository, startTestServer, type TestServer } from '../helpers/server.js';

let pds: TestServer;
let home: string;

const run = (args: string[], user: string) => runCli(pds, home, args, { user });

/** Until the release of `tag` holds its first weight (a pause of "1h" lasts 3 minutes here: time to act). */
async function paused(tag: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const s = (await pds.api('alice', 'GET', '/api/v1/status/acme/web')).body;
    if (s.rollout?.canaryTag === tag && s.rollout.phase === 'Paused') return;
    if (Date.now() > deadline) throw new Error(`the release of ${tag} never paused: ${JSON.stringify(s)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

beforeAll(async () => {
  home = await mkdtemp(path.join(tmpdir(), 'pds-cli-rollouts-'));
  pds = await startTestServer({ PDS_SANDBOX_PAUSE_SCALE: '0.05' });
  await executeAndWait(pds, 'root', 'create-tenant', { team_name: 'acme', admins: 'alice', viewers: 'dave' });
  await registerRepository(pds, 'alice', 'acme', 'acme/web');
}, 60_000);

afterAll(async () => {
  await pds?.stop();
  await rm(home, { recursive: true, force: true });
});

it('onboards a canary service, promotes one release and aborts the next, as a person would', async () => {
  const onboard = await run(['deploy', 'acme/web', '--onboard', '--port', '8080', '--tag', '0.1.0', '--repo', 'acme/web', '--strategy', 'canary', '--canary-steps', '10%:1h', '--wait', '-o', 'json'], 'alice');
  expect(onboard.code, onboard.stderr).toBe(0);

  expect((await run(['rollouts', 'promote', 'acme/web'], 'alice'))).toMatchObject({ code: 1, stderr: expect.stringMatching(/no canary or blue-green release of acme\/web is in progress/) });

  const deploy = await run(['deploy', 'acme/web', '--tag', '0.2.0', '-o', 'json'], 'alice');
  expect(deploy.code, deploy.stderr).toBe(0);
  await paused('0.2.0');
  const status = await run(['status', 'acme/web', '-o', 'table'], 'dave');
  expect(status.stdout).toMatch(/canary Paused step 1\/1: 10% on 0\.2\.0, stable 0\.1\.0/);
  expect((await run(['rollouts', 'promote', 'acme/web'], 'dave')).code).toBe(1);
  const promoted = await run(['rollouts', 'promote', 'acme/web', '--wait', '-o', 'json'], 'alice');
  expect(promoted.code, promoted.stderr).toBe(0);
  expect((await pds.api('alice', 'GET', '/api/v1/services/acme/web')).body.imageTag).toBe('0.2.0');

  expect((await run(['deploy', 'acme/web', '--tag', '0.3.0'], 'alice')).code).toBe(0);
  await paused('0.3.0');
  const aborted = await run(['rollouts', 'abort', 'acme/web', '--wait'], 'alice');
  expect(aborted.code).toBe(1);
  expect(aborted.stderr).toContain('aborted by alice at step 1 (10%); rolled back to 0.2.0');
  expect((await pds.api('alice', 'GET', '/api/v1/status/acme/web')).body).toMatchObject({ argocd: { healthStatus: 'Healthy' }, service: { imageTag: '0.2.0' } });
  const events = await run(['policy', 'events', 'acme', '-o', 'table'], 'dave');
  expect(events.stdout).toMatch(/rollout\.aborted +web 0\.3\.0 \(stable 0\.2\.0\)/);
}, 180_000);

it('under an approval policy, promote prints the wait and how to approve; another person approves with pds approvals', async () => {
  expect((await run(['deploy', 'acme/web', '--tag', '0.4.0'], 'alice')).code).toBe(0);
  await paused('0.4.0');
  const policy = { approvals: { operations: ['deploy-service'], required: 1, approvers: ['bob'], expiresAfter: '1h' } };
  expect((await pds.api('root', 'PUT', '/api/v1/tenants/acme/policy', policy)).status).toBe(200);

  const asked = await run(['rollouts', 'promote', 'acme/web', '--wait'], 'alice');
  expect(asked.code, asked.stderr).toBe(0);
  const id = /Waiting for approval ([0-9a-f-]{36}): 1 from bob until \S+Z; nothing was promoted yet/.exec(asked.stderr)?.[1];
  expect(id, asked.stderr).toBeDefined();
  expect(asked.stderr).toContain(`An approver other than you runs: pds approvals approve ${id}`);
  expect((await pds.api('alice', 'GET', '/api/v1/status/acme/web')).body.rollout).toMatchObject({ phase: 'Paused', canaryTag: '0.4.0' });

  const listed = await run(['approvals', '--team', 'acme', '-o', 'table'], 'bob');
  expect(listed.stdout).toMatch(/promote acme\/web 0\.4\.0/);
  const approved = await run(['approvals', 'approve', id!, '-o', 'table'], 'bob');
  expect(approved.code, approved.stderr).toBe(0);
  expect(approved.stderr).toMatch(/^Approved: the promote of acme\/web 0\.4\.0/m);
  const deadline = Date.now() + 60_000;
  while ((await pds.api('alice', 'GET', '/api/v1/services/acme/web')).body.imageTag !== '0.4.0') {
    if (Date.now() > deadline) throw new Error('the approved promote never took 0.4.0 to all traffic');
    await new Promise((r) => setTimeout(r, 100));
  }
  expect((await pds.api('root', 'PUT', '/api/v1/tenants/acme/policy', {})).status).toBe(200);
}, 180_000);
