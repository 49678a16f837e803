/**
 * Stop and retry workflows (issue 22 item 5) against a started pds on the sandbox, a step held open by the test
 * (`test/helpers/step-hold.ts`, no sleeps): a deploy cancelled mid-run settles failed "cancelled by <user>", the
 * service stays Healthy on its previous tag, the cancellation is in the tenant's feed and not in the audit trail; a
 * settled workflow cannot be cancelled (409); viewers may do neither; a retry is a new execution by whoever retries,
 * linked to the old one, audited, asking for its own confirmation; an update-config cannot be retried.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandboxPlatform } from '../../adapters/sandbox/index.js';
import { createWriteLimiter } from '../../rest/ratelimit.js';
import { CLIENTS, connectHttp } from '../helpers/mcp-clients.js';
import { registerRepository, startTestServer, waitForWorkflow, type TestServer } from '../helpers/server.js';
import { stepHolds } from '../helpers/step-hold.js';

const holds = stepHolds();
let pds: TestServer;

async function execute(user: string, operation: string, params: Record<string, string>): Promise<string> {
  const res = await pds.api(user, 'POST', `/api/v1/operations/${operation}/execute`, params);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.workflowName;
}

const status = async () => (await pds.api('alice', 'GET', '/api/v1/status/acme/web')).body;
const DEPLOY = { action: 'deploy', team_name: 'acme', component_name: 'web', dockerfile_repo: 'acme/web' };

beforeAll(async () => {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'pds-workflow-control-'));
  const platform = await createSandboxPlatform({ dataDir, domain: 'apps.test', stepMs: 5, githubAppSlug: 'pds-test', beforeStep: holds.beforeStep });
  pds = await startTestServer({ PDS_DATA_DIR: dataDir }, { platform, writeLimiter: createWriteLimiter({ max: 1000 }) });
  await waitForWorkflow(pds, 'root', await execute('root', 'create-tenant', { team_name: 'acme', admins: 'alice', members: 'bob', viewers: 'dave' }));
  await registerRepository(pds, 'alice', 'acme', 'acme/web');
  const onboard = await execute('alice', 'deploy-service', { ...DEPLOY, action: 'onboard', git_tag: '0.1.0', port: '8080' });
  expect((await waitForWorkflow(pds, 'alice', onboard)).audit.status).toBe('succeeded');
}, 60_000);

afterAll(async () => {
  holds.releaseAll();
  await pds?.stop();
});

describe('cancel', () => {
  it('stops a deploy mid-run: failed "cancelled by bob", the service Healthy on its previous tag, an event in the feed', async () => {
    const held = holds.hold('deploy-service-', 2); // after "validate" and "clone", before "build image"
    const name = await execute('alice', 'deploy-service', { ...DEPLOY, git_tag: '0.1.1' });
    try {
      expect(await held.reached).toBe(name);
      expect((await status()).argocd).toMatchObject({ syncStatus: 'OutOfSync', healthStatus: 'Progressing' });
      expect((await pds.api('dave', 'POST', `/api/v1/workflows/${name}/cancel`, {})).status).toBe(403);
      expect((await pds.api('mallory', 'POST', `/api/v1/workflows/${name}/cancel`, {})).status).toBe(404);
      const cancelled = await pds.api('bob', 'POST', `/api/v1/workflows/${name}/cancel`, { reason: 'wrong tag' });
      expect(cancelled.status, JSON.stringify(cancelled.body)).toBe(200);
      expect(cancelled.body).toMatchObject({ workflow: name, phase: 'failed', settled: true, message: expect.stringContaining('cancelled by bob: wrong tag') });
    } finally {
      held.release();
    }
    const workflow = await waitForWorkflow(pds, 'alice', name);
    expect(workflow.audit).toMatchObject({ status: 'failed', message: 'cancelled by bob: wrong tag', userId: 'alice' });
    expect(workflow).toMatchObject({ cancelledBy: 'bob', phase: 'failed' });
    expect(workflow.steps.map((s: any) => s.status)).toEqual(['succeeded', 'succeeded', 'failed', ...workflow.steps.slice(3).map(() => 'skipped')]);
    expect(await status()).toMatchObject({ argocd: { syncStatus: 'Synced', healthStatus: 'Healthy' }, service: { imageTag: '0.1.0' } });

    const feed = await pds.api('dave', 'GET', '/api/v1/tenants/acme/events');
    expect(feed.body.items[0]).toMatchObject({ type: 'workflow.cancelled', userId: 'bob', data: { workflowName: name, operation: 'deploy-service', reason: 'wrong tag' } });
    // The audit trail holds the execution (settled failed) and nothing for the cancellation.
    const audit = (await pds.api('alice', 'GET', '/api/v1/audit')).body.items;
    expect(audit[0]).toMatchObject({ workflowName: name, status: 'failed' });
    expect(audit.filter((e: any) => e.workflowName === name)).toHaveLength(1);

    // Once settled it cannot be cancelled again.
    const again = await pds.api('bob', 'POST', `/api/v1/workflows/${name}/cancel`, {});
    expect(again.status).toBe(409);
    expect(again.body.error).toMatch(/already settled \(failed at .*\); only a running or awaiting workflow can be cancelled/);
    expect(again.headers.get('pds-error-code')).toBe('CONFLICT');
  });

  it('with force, the answer warns that the undo (Kubernetes: the exit handler) is skipped and names the status call', async () => {
    const held = holds.hold('deploy-service-', 2);
    const name = await execute('alice', 'deploy-service', { ...DEPLOY, git_tag: '0.1.1' });
    try {
      expect(await held.reached).toBe(name);
      const forced = await pds.api('bob', 'POST', `/api/v1/workflows/${name}/cancel`, { force: true });
      expect(forced.status, JSON.stringify(forced.body)).toBe(200);
      expect(forced.body.message).toContain('Warning: force terminates the workflow without its exit handler');
      expect(forced.body.message).toContain('half-rolled; check it with GET /api/v1/status/acme/web.');
    } finally {
      held.release();
    }
    expect((await waitForWorkflow(pds, 'alice', name)).audit).toMatchObject({ status: 'failed', message: 'cancelled by bob' });
  });

  it('over MCP (every client): a viewer gets isError, a member stops a queued workflow that never began', async () => {
    for (const kind of CLIENTS) {
      const held = holds.hold('deploy-service-', 1);
      const running = await execute('alice', 'deploy-service', { ...DEPLOY, git_tag: '0.1.1' });
      const queued = await execute('alice', 'deploy-service', { ...DEPLOY, git_tag: '0.1.0' }); // waits for the first
      const connect = async (user: string) => connectHttp(kind, `${pds.url}/mcp`, { authorization: `Bearer ${await pds.token(user)}` });
      const [viewer, member] = [await connect('dave'), await connect('bob')];
      try {
        await held.reached;
        const refused = await viewer.callTool({ name: 'platform_cancel_workflow', arguments: { name: queued } });
        expect(refused.isError, kind.name).toBe(true);
        const stopped = await member.callTool({ name: 'platform_cancel_workflow', arguments: { name: queued } });
        expect(stopped.isError, JSON.stringify(stopped.content)).toBeFalsy();
        expect(stopped.structuredContent).toMatchObject({ workflow: queued, phase: 'failed', settled: true });
      } finally {
        held.release();
        await viewer.close();
        await member.close();
      }
      const never = await waitForWorkflow(pds, 'alice', queued);
      expect(never.steps.every((step: any) => step.status === 'skipped'), kind.name).toBe(true);
      expect((await waitForWorkflow(pds, 'alice', running)).audit.status).toBe('succeeded');
      expect((await status()).service.imageTag).toBe('0.1.1');
    }
  });

  it('a cancelled onboarding leaves no half-registered service', async () => {
    await registerRepository(pds, 'alice', 'acme', 'acme/api');
    const held = holds.hold('deploy-service-', 1);
    const name = await execute('alice', 'deploy-service', { action: 'onboard', team_name: 'acme', component_name: 'api', dockerfile_repo: 'acme/api', git_tag: '0.1.0', port: '8080' });
    try {
      await held.reached;
      expect((await pds.api('alice', 'GET', '/api/v1/services/acme/api')).status).toBe(200);
      expect((await pds.api('alice', 'POST', `/api/v1/workflows/${name}/cancel`, {})).status).toBe(200);
    } finally {
      held.release();
    }
    expect((await pds.api('alice', 'GET', '/api/v1/services/acme/api')).status).toBe(404);
  });
});

describe('cancel a preview', () => {
  it('removes a preview environment its cancelled preview-deploy had registered and never deployed', async () => {
    const held = holds.hold('preview-deploy-', 1);
    const name = await execute('alice', 'preview-deploy', { team_name: 'acme', component_name: 'web', image_tag: '0.1.0', ttl_hours: '1' });
    try {
      await held.reached;
      expect((await pds.api('alice', 'GET', '/api/v1/services/acme/web-preview-0-1-0')).status).toBe(200);
      expect((await pds.api('alice', 'POST', `/api/v1/workflows/${name}/cancel`, {})).status).toBe(200);
    } finally {
      held.release();
    }
    expect((await pds.api('alice', 'GET', '/api/v1/services/acme/web-preview-0-1-0')).status).toBe(404);
    expect((await status()).argocd).toMatchObject({ syncStatus: 'Synced', healthStatus: 'Healthy' });
  });
});

describe('retry', () => {
  /** A deploy of `tag` cancelled before its build: a failed workflow to retry. */
  async function failedDeploy(tag: string): Promise<string> {
    const held = holds.hold('deploy-service-', 1);
    const name = await execute('alice', 'deploy-service', { ...DEPLOY, git_tag: tag });
    try {
      await held.reached;
      expect((await pds.api('alice', 'POST', `/api/v1/workflows/${name}/cancel`, {})).status).toBe(200);
    } finally {
      held.release();
    }
    return name;
  }

  it('is a new execution by whoever retries, with the recorded parameters, linked to the old one and audited', async () => {
    const failed = await failedDeploy('0.1.1');
    expect((await pds.api('dave', 'POST', `/api/v1/workflows/${failed}/retry`, {})).status).toBe(403);
    const retried = await pds.api('bob', 'POST', `/api/v1/workflows/${failed}/retry`, {});
    expect(retried.status, JSON.stringify(retried.body)).toBe(200);
    expect(retried.body).toMatchObject({ operation: 'deploy-service', status: 'submitted', retryOf: failed, workflowName: expect.stringMatching(/^deploy-service-/) });
    expect(retried.body.workflowName).not.toBe(failed);
    const workflow = await waitForWorkflow(pds, 'bob', retried.body.workflowName);
    expect(workflow).toMatchObject({ retryOf: failed, audit: { status: 'succeeded', userId: 'bob', operation: 'deploy-service' } });
    expect(workflow.audit.parameters).toEqual({ ...DEPLOY, git_tag: '0.1.1' });
    expect((await status()).service.imageTag).toBe('0.1.1');

    // Only failed workflows: a succeeded one is refused, saying how to run it again.
    const succeeded = await pds.api('bob', 'POST', `/api/v1/workflows/${retried.body.workflowName}/retry`, {});
    expect(succeeded.status).toBe(409);
    expect(succeeded.body.error).toMatch(/succeeded; only a failed workflow can be retried/);
  });

  it('of a retire asks for its own confirmation, and runs only with it', async () => {
    await registerRepository(pds, 'alice', 'acme', 'acme/old');
    await waitForWorkflow(pds, 'alice', await execute('alice', 'deploy-service', { action: 'onboard', team_name: 'acme', component_name: 'old', dockerfile_repo: 'acme/old', git_tag: '0.1.0', port: '8080' }));
    const asked = await pds.api('alice', 'POST', '/api/v1/operations/retire-service/execute', { team_name: 'acme', component_name: 'old' });
    const held = holds.hold('retire-service-', 1); // before the Application is deleted
    const retire = await execute('alice', 'retire-service', { team_name: 'acme', component_name: 'old', confirm: asked.headers.get('pds-confirm')! });
    try {
      await held.reached;
      expect((await pds.api('alice', 'POST', `/api/v1/workflows/${retire}/cancel`, {})).status).toBe(200);
    } finally {
      held.release();
    }
    expect((await pds.api('alice', 'GET', '/api/v1/services/acme/old')).status).toBe(200);
    // A member may not retire, so may not retry a retirement either.
    expect((await pds.api('bob', 'POST', `/api/v1/workflows/${retire}/retry`, {})).status).toBe(403);
    const first = await pds.api('alice', 'POST', `/api/v1/workflows/${retire}/retry`, {});
    expect(first.status).toBe(400);
    expect(first.headers.get('pds-error-code')).toBe('CONFIRMATION_REQUIRED');
    const confirm = first.headers.get('pds-confirm')!;
    expect(first.body.error).toContain('permanently remove service acme/old');
    expect((await pds.api('alice', 'GET', '/api/v1/audit')).body.items[0].workflowName).toBe(retire);
    const confirmed = await pds.api('alice', 'POST', `/api/v1/workflows/${retire}/retry`, { confirm });
    expect(confirmed.status, JSON.stringify(confirmed.body)).toBe(200);
    expect((await waitForWorkflow(pds, 'alice', confirmed.body.workflowName)).audit.status).toBe('succeeded');
    expect((await pds.api('alice', 'GET', '/api/v1/services/acme/old')).status).toBe(404);
  });

  it('meets the freeze windows of any execution: refused during one, run with the retrier\'s own override_reason', async () => {
    const failed = await failedDeploy('0.1.0');
    const window = { name: 'always', schedule: '* * * * *', duration: '2m', timeZone: 'UTC', operations: ['deploy-service'], reason: 'release freeze' };
    expect((await pds.api('alice', 'PUT', '/api/v1/tenants/acme/policy', { freezeWindows: [window] })).status).toBe(200);
    try {
      const refused = await pds.api('alice', 'POST', `/api/v1/workflows/${failed}/retry`, {});
      expect(refused.status).toBe(403);
      expect(refused.body.error).toMatch(/window "always" \(release freeze\)/);
      const over = await pds.api('alice', 'POST', `/api/v1/workflows/${failed}/retry`, { override_reason: 'incident 7' });
      expect(over.status, JSON.stringify(over.body)).toBe(200);
      const run = await waitForWorkflow(pds, 'alice', over.body.workflowName);
      expect(run.audit.parameters).toMatchObject({ git_tag: '0.1.0', override_reason: 'incident 7' });
    } finally {
      await pds.api('alice', 'PUT', '/api/v1/tenants/acme/policy', {});
    }
  });

  it('of an update-config is refused: its values are not kept', async () => {
    const held = holds.hold('deploy-service-', 1);
    const name = await execute('alice', 'deploy-service', { action: 'update-config', team_name: 'acme', component_name: 'web', env_vars: 'API_KEY=s3cr3t' });
    try {
      await held.reached;
      expect((await pds.api('alice', 'POST', `/api/v1/workflows/${name}/cancel`, {})).status).toBe(200);
    } finally {
      held.release();
    }
    const refused = await pds.api('alice', 'POST', `/api/v1/workflows/${name}/retry`, {});
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatch(/env_vars values are not kept .*API_KEY=\*\*\*.*Run deploy-service with action=update-config again with the values/);
    expect(JSON.stringify(refused.body)).not.toContain('s3cr3t');
  });
});

describe('cancel a progressive release', () => {
  it('a canary paused at 10% goes back to stable: rollout Aborted at weight 0, the service Healthy on its tag', async () => {
    const config = await execute('alice', 'deploy-service', { action: 'update-config', team_name: 'acme', component_name: 'web', strategy: 'canary', canary_steps: '10%:1h' });
    expect((await waitForWorkflow(pds, 'alice', config)).audit.status).toBe('succeeded');
    const stable = (await status()).service.imageTag;
    const canary = stable === '0.1.0' ? '0.1.1' : '0.1.0';
    const name = await execute('alice', 'deploy-service', { ...DEPLOY, git_tag: canary });
    // The pause of the first weight holds the release (an hour): no sleep, no step hold needed.
    const deadline = Date.now() + 20_000;
    while ((await status()).rollout?.phase !== 'Paused') {
      if (Date.now() > deadline) throw new Error(`the canary never paused: ${JSON.stringify(await status())}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    expect((await status()).rollout).toMatchObject({ canaryWeight: 10, canaryTag: canary, stableTag: stable });
    expect((await pds.api('alice', 'POST', `/api/v1/workflows/${name}/cancel`, {})).status).toBe(200);
    expect(await status()).toMatchObject({
      argocd: { syncStatus: 'Synced', healthStatus: 'Healthy', message: expect.stringContaining(`cancelled by alice; all traffic is on ${stable}`) },
      service: { imageTag: stable },
      rollout: { phase: 'Aborted', canaryWeight: 0 },
    });
  });
});

describe('cancel a workflow waiting for approval', () => {
  it('settles it failed without running anything and closes its approval as cancelled', async () => {
    const approvals = { operations: ['rollback-service'], required: 1, approvers: ['alice'], expiresAfter: '24h' };
    expect((await pds.api('alice', 'PUT', '/api/v1/tenants/acme/policy', { approvals })).status).toBe(200);
    try {
      const name = await execute('bob', 'rollback-service', { team_name: 'acme', component_name: 'web', target_tag: '0.1.0' });
      expect((await pds.api('bob', 'GET', `/api/v1/workflows/${name}`)).body.phase).toBe('awaiting-approval');
      const cancelled = await pds.api('bob', 'POST', `/api/v1/workflows/${name}/cancel`, { reason: 'not needed' });
      expect(cancelled.status, JSON.stringify(cancelled.body)).toBe(200);
      const workflow = await waitForWorkflow(pds, 'bob', name);
      expect(workflow.audit).toMatchObject({ status: 'failed', message: expect.stringContaining('cancelled by bob while waiting for approval: not needed') });
      expect(workflow.approval).toMatchObject({ state: 'cancelled' });
    } finally {
      await pds.api('alice', 'PUT', '/api/v1/tenants/acme/policy', {});
    }
  });
});
