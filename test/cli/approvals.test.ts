/**
 * `pds approvals`, `pds approvals approve ID`, `pds approvals reject ID --reason …` as real processes against a real pds
 * (issue 20 item 2): an approver lists what waits for them, the requester is refused, an approval starts the
 * workflow, a rejection needs a reason and fails it, and `pds policy events` shows each decision.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli-process.js';
import { executeAndWait, registerRepository, startTestServer, waitForWorkflow, type TestServer } from '../helpers/server.js';

let pds: TestServer;
let home: string;

const run = (args: string[], user: string, groups: string[] = []) => runCli(pds, home, args, { user, groups });

async function rollback(tag: string): Promise<string> {
  const res = await pds.api('carol', 'POST', '/api/v1/operations/rollback-service/execute', { team_name: 'acme', component_name: 'web', target_tag: tag });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.workflowName;
}

beforeAll(async () => {
  home = await mkdtemp(path.join(tmpdir(), 'pds-cli-approvals-'));
  pds = await startTestServer();
  await executeAndWait(pds, 'root', 'create-tenant', { team_name: 'acme', admins: 'alice', members: 'carol' });
  await registerRepository(pds, 'alice', 'acme', 'acme/web');
  const onboard = { action: 'onboard', team_name: 'acme', component_name: 'web', dockerfile_repo: 'acme/web', git_tag: '0.1.0', port: '8080', service_template: 'default' };
  expect((await executeAndWait(pds, 'alice', 'deploy-service', onboard)).audit.status).toBe('succeeded');
  const policy = { approvals: { operations: ['rollback-service'], required: 1, approvers: ['role:admin', 'group:sre'] } };
  expect((await pds.api('alice', 'PUT', '/api/v1/tenants/acme/policy', policy)).status).toBe(200);
}, 90_000);

afterAll(async () => {
  await pds?.stop();
  await rm(home, { recursive: true, force: true });
});

describe('pds approvals', () => {
  it('lists what waits, refuses the requester, and an approval starts the workflow', async () => {
    const name = await rollback('0.1.0');
    const list = await run(['approvals', '-o', 'json'], 'erin', ['sre']);
    expect(list.code, list.stderr).toBe(0);
    const [approval] = JSON.parse(list.stdout).items;
    expect(approval).toMatchObject({ workflowName: name, requestedBy: 'carol', state: 'pending', canDecide: true });
    const table = await run(['approvals', '--team', 'acme', '-o', 'wide'], 'alice');
    expect(table.stdout).toMatch(new RegExp(`${approval.id}\\s+${name}\\s+rollback-service acme/web 0\\.1\\.0\\s+carol\\s+0/1`));

    const waiting = await run(['wait', name, '--timeout', '1s'], 'carol');
    expect(waiting.code).toBe(4);
    expect(waiting.stderr).toContain(`waiting for approval by role:admin or group:sre until`);
    expect(waiting.stderr).toContain(`pds approvals approve ${approval.id}`);

    const own = await run(['approvals', 'approve', approval.id], 'carol');
    expect(own.code).toBe(1);
    expect(own.stderr).toMatch(/requester can never decide/);
    const approved = await run(['approvals', 'approve', approval.id, '--comment', 'checked', '-o', 'table'], 'erin', ['sre']);
    expect(approved.code, approved.stderr).toBe(0);
    expect(approved.stdout).toMatch(/approved/);
    expect(approved.stderr).toMatch(/^Approved: .* starts now/);
    expect((await waitForWorkflow(pds, 'carol', name, 20_000)).audit.status).toBe('succeeded');
  });

  it('rejects only with a reason; the workflow fails; the feed shows each decision', async () => {
    const name = await rollback('0.1.0');
    const { items } = JSON.parse((await run(['approvals', '-o', 'json'], 'alice')).stdout);
    const id = items.find((a: any) => a.workflowName === name).id;
    const bare = await run(['approvals', 'reject', id], 'alice');
    expect(bare.code).toBe(2);
    expect(bare.stderr).toMatch(/--reason/);
    const rejected = await run(['approvals', 'reject', id, '--reason', 'not now', '-o', 'json'], 'alice');
    expect(rejected.code, rejected.stderr).toBe(0);
    expect(JSON.parse(rejected.stdout).approval).toMatchObject({ state: 'rejected', decidedBy: 'alice', reason: 'not now' });
    expect((await waitForWorkflow(pds, 'carol', name)).audit).toMatchObject({ status: 'failed', message: 'rejected by alice: not now; nothing ran' });
    const events = await run(['policy', 'events', 'acme', '-o', 'table'], 'carol');
    expect(events.stdout).toMatch(new RegExp(`alice\\s+approval\\.decided\\s+${name} rejected: not now`));
    expect(events.stdout).toMatch(/erin\s+approval\.decided\s+\S+ approved: checked/);
  });
});
