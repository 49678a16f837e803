/**
 * `pds workflows cancel` and `pds workflows retry` (issue 22 item 5) as real processes against a pds whose sandbox
 * holds a step open (`test/helpers/step-hold.ts`): cancel a deploy mid-run, retry it with `--wait`, a viewer refused,
 * a settled workflow refused; a retry of a retirement shows the plan and asks, and runs only with a yes (`--yes`).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandboxPlatform } from '../../adapters/sandbox/index.js';
import { runCli } from '../helpers/cli-process.js';
import { registerRepository, startTestServer, waitForWorkflow, type TestServer } from '../helpers/server.js';
import { stepHolds } from '../helpers/step-hold.js';

const holds = stepHolds();
let pds: TestServer;
let home: string;

/** `pds args…` as `user`, stdin closed (no answer to a question is no). */
const run = (user: string, args: string[]) => runCli(pds, home, args, { user });

async function execute(operation: string, params: Record<string, string>): Promise<{ status: number; body: any; headers: Headers }> {
  return pds.api('alice', 'POST', `/api/v1/operations/${operation}/execute`, params);
}

/** Execute held before its second step, cancel it with the CLI, and return the workflow's name. */
async function cancelledWithCli(operation: string, params: Record<string, string>): Promise<string> {
  const held = holds.hold(`${operation}-`, 1);
  const res = await execute(operation, params);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  try {
    await held.reached;
    const cancel = await run('alice', ['workflows', 'cancel', res.body.workflowName, '--reason', 'wrong tag', '-o', 'json']);
    expect(cancel.code, cancel.stderr).toBe(0);
    expect(JSON.parse(cancel.stdout)).toMatchObject({ workflow: res.body.workflowName, phase: 'failed', settled: true });
  } finally {
    held.release();
  }
  return res.body.workflowName;
}

beforeAll(async () => {
  home = await mkdtemp(path.join(tmpdir(), 'pds-cli-workflows-'));
  const dataDir = await mkdtemp(path.join(tmpdir(), 'pds-cli-workflows-data-'));
  const platform = await createSandboxPlatform({ dataDir, domain: 'apps.test', stepMs: 5, githubAppSlug: 'pds-test', beforeStep: holds.beforeStep });
  pds = await startTestServer({ PDS_DATA_DIR: dataDir }, { platform });
  const tenant = await pds.api('root', 'POST', '/api/v1/operations/create-tenant/execute', { team_name: 'acme', admins: 'alice', viewers: 'dave' });
  await waitForWorkflow(pds, 'root', tenant.body.workflowName);
  await registerRepository(pds, 'alice', 'acme', 'acme/web');
  const onboard = await execute('deploy-service', { action: 'onboard', team_name: 'acme', component_name: 'web', dockerfile_repo: 'acme/web', git_tag: '0.1.0', port: '8080' });
  await waitForWorkflow(pds, 'alice', onboard.body.workflowName);
}, 60_000);

afterAll(async () => {
  holds.releaseAll();
  await pds?.stop();
  await rm(home, { recursive: true, force: true });
});

describe('pds workflows cancel and retry', () => {
  it('cancels a deploy mid-run, refuses a viewer, retries it with --wait as a new workflow, and refuses to cancel a settled one', async () => {
    const name = await cancelledWithCli('deploy-service', { action: 'deploy', team_name: 'acme', component_name: 'web', dockerfile_repo: 'acme/web', git_tag: '0.1.1' });
    expect((await pds.api('alice', 'GET', '/api/v1/status/acme/web')).body.service.imageTag).toBe('0.1.0');

    const viewer = await run('dave', ['workflows', 'retry', name]);
    expect(viewer.code).toBe(1);
    expect(viewer.stderr).toContain('access denied to this tenant: role "viewer"');

    const retried = await run('alice', ['workflows', 'retry', name, '--wait', '-o', 'json']);
    expect(retried.code, retried.stderr).toBe(0);
    const settled = JSON.parse(retried.stdout);
    expect(settled).toMatchObject({ settled: true, retryOf: name, audit: { status: 'succeeded', parameters: { git_tag: '0.1.1' } } });
    expect(settled.workflow).not.toBe(name);

    const again = await run('alice', ['workflows', 'cancel', name]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('has already settled (failed');
    // The listing still works beside the new verbs.
    const list = await run('alice', ['workflows', '--team', 'acme', '-o', 'json']);
    expect(JSON.parse(list.stdout).items.map((w: { name: string }) => w.name)).toEqual(expect.arrayContaining([name, settled.workflow]));
  }, 120_000); // six processes, each a few seconds to start under load

  it('a retry of a retirement shows the plan and asks; no answer changes nothing, --yes runs it', async () => {
    const asked = await execute('retire-service', { team_name: 'acme', component_name: 'web' });
    const name = await cancelledWithCli('retire-service', { team_name: 'acme', component_name: 'web', confirm: asked.headers.get('pds-confirm')! });
    const declined = await run('alice', ['workflows', 'retry', name]);
    expect(declined.code).toBe(1);
    expect(declined.stderr).toContain('permanently remove service acme/web');
    expect(declined.stderr).toContain('not retried: nothing was changed');
    expect((await pds.api('alice', 'GET', '/api/v1/services/acme/web')).status).toBe(200);

    const yes = await run('alice', ['workflows', 'retry', name, '--yes', '--wait', '-o', 'json']);
    expect(yes.code, yes.stderr).toBe(0);
    expect(JSON.parse(yes.stdout)).toMatchObject({ retryOf: name, audit: { operation: 'retire-service', status: 'succeeded' } });
    expect((await pds.api('alice', 'GET', '/api/v1/services/acme/web')).status).toBe(404);
  }, 120_000);
});
