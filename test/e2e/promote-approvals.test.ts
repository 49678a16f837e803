/**
 * A promote by hand counts as a deploy for approvals (issue 22 item 4), on a real sandbox pds: under a policy that asks
 * approval for deploy-service, `POST /api/v1/rollouts/{team}/{app}/promote` changes nothing and answers 200 with the
 * approval beside the usual fields; the requester may not approve it; a second person's approval promotes the release
 * (the canary takes 100% and the deploy succeeds long before its pause would end) and the feed says who asked and who
 * approved; a rejection or an expiry leaves the release on its own pauses; a release that ended before the approval
 * makes the approved promote a no-op recorded on the approval (decided over MCP, after the host asked the person); an
 * abort stays immediate. Listing approvals tells promote requests from workflow ones.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLIENTS, connectHttp } from '../helpers/mcp-clients.js';
import { executeAndWait, registerRepository, startTestServer, type TestServer } from '../helpers/server.js';
import { until } from '../helpers/until.js';

let pds: TestServer;
const TEAM = 'acme';
/** A pause of "1h" lasts 3 minutes here (PDS_SANDBOX_PAUSE_SCALE 0.05): far longer than any wait below. */
const HELD_STEPS = '10%:1h,50%:1h';

const status = async () => (await pds.api('alice', 'GET', `/api/v1/status/${TEAM}/web`)).body;
const workflow = async (name: string) => (await pds.api('alice', 'GET', `/api/v1/workflows/${name}`)).body;
const events = async () => (await pds.api('alice', 'GET', `/api/v1/tenants/${TEAM}/events?limit=50`)).body.items as any[];

/** Until the release of `tag` holds its first weight. */
const paused = (tag: string) =>
  until(`${tag} paused`, async () => {
    const s = await status();
    return s.rollout?.canaryTag === tag && s.rollout.phase === 'Paused' && s;
  }, 60);

/** Deploy `tag` as carol; under the approval policy bob approves the deploy itself first. Returns its workflow. */
async function release(tag: string, approveDeploy: boolean): Promise<string> {
  const res = await pds.api('carol', 'POST', '/api/v1/operations/deploy-service/execute', { action: 'deploy', team_name: TEAM, component_name: 'web', dockerfile_repo: 'acme/web', git_tag: tag });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  const name = res.body.workflowName as string;
  if (approveDeploy) {
    const id = (await workflow(name)).approval.id as string;
    const ok = await pds.api('bob', 'POST', `/api/v1/approvals/${id}/approve`, {});
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
  }
  await paused(tag);
  return name;
}

beforeAll(async () => {
  pds = await startTestServer({ PDS_SANDBOX_PAUSE_SCALE: '0.05' });
  await executeAndWait(pds, 'root', 'create-tenant', { team_name: TEAM, admins: 'alice', members: 'carol' });
  await registerRepository(pds, 'alice', TEAM, 'acme/web');
  const onboard = { action: 'onboard', team_name: TEAM, component_name: 'web', dockerfile_repo: 'acme/web', git_tag: '0.1.0', port: '8080', service_template: 'default', strategy: 'canary', canary_steps: HELD_STEPS };
  expect((await executeAndWait(pds, 'alice', 'deploy-service', onboard)).audit.status).toBe('succeeded');
}, 90_000);
afterAll(async () => {
  await pds?.stop();
});

describe.sequential('a promote under an approval policy', () => {
  let held020: string;

  it('waits: nothing changes, the answer says who may approve until when and how; the requester cannot approve it', async () => {
    held020 = await release('0.2.0', false);
    const policy = { approvals: { operations: ['deploy-service'], required: 1, approvers: ['role:admin', 'bob'], expiresAfter: '1h' } };
    expect((await pds.api('root', 'PUT', `/api/v1/tenants/${TEAM}/policy`, policy)).status).toBe(200);
    const before = (await status()).rollout;

    const asked = await pds.api('alice', 'POST', `/api/v1/rollouts/${TEAM}/web/promote`);
    expect(asked.status, JSON.stringify(asked.body)).toBe(200);
    expect(asked.body).toMatchObject({
      team: TEAM,
      app: 'web',
      workflowName: held020,
      rollout: { canaryTag: '0.2.0', phase: 'Paused', canaryWeight: 10 },
      approval: { required: 1, approvers: ['role:admin', 'bob'], approvedBy: [], state: 'pending', expiresAt: expect.any(String) },
    });
    const id = asked.body.approval.id as string;
    expect(asked.body.message).toContain('Nothing was promoted yet');
    expect(asked.body.message).toContain('needs 1 approval from role:admin or bob');
    expect(asked.body.message).toContain(`/api/v1/approvals/${id}/approve`);
    // Asked again: the same request, not a second one.
    const again = await pds.api('alice', 'POST', `/api/v1/rollouts/${TEAM}/web/promote`);
    expect(again.body.approval.id).toBe(id);

    expect((await status()).rollout).toMatchObject({ phase: 'Paused', canaryWeight: 10, pausedUntil: before.pausedUntil });
    expect(await workflow(held020)).toMatchObject({ settled: false, audit: { status: 'submitted' } });
    expect((await events()).filter((e) => e.type === 'rollout.promoted')).toEqual([]);

    // alice is an approver (role:admin) but asked for it: never her own.
    const self = await pds.api('alice', 'POST', `/api/v1/approvals/${id}/approve`, {});
    expect(self.status).toBe(403);
    expect(self.body.error).toMatch(/requester can never decide/);

    const listed = (await pds.api('bob', 'GET', `/api/v1/approvals?team=${TEAM}`)).body.items;
    expect(listed).toMatchObject([
      { id, subject: 'promote', workflowName: held020, operation: 'deploy-service', requestedBy: 'alice', canDecide: true, parameters: { team_name: TEAM, component_name: 'web', canary_tag: '0.2.0' } },
    ]);
    expect(listed[0].outcome).toBeUndefined();
  }, 120_000); // its waits (a paused release, the expiry sweeper, a settled workflow) allow up to 60 s each

  it('a second person approves: the canary goes to 100% and the deploy succeeds long before its pause ends', async () => {
    const id = (await pds.api('bob', 'GET', `/api/v1/approvals?team=${TEAM}`)).body.items[0].id as string;
    const approved = await pds.api('bob', 'POST', `/api/v1/approvals/${id}/approve`, { comment: 'graphs look fine' });
    expect(approved.status, JSON.stringify(approved.body)).toBe(200);
    expect(approved.body.approval).toMatchObject({ subject: 'promote', state: 'approved', approvedBy: ['bob'], outcome: expect.stringMatching(/^promoted: 0\.2\.0 goes to 100%/) });
    expect(approved.body.message).toMatch(/^Approved: the promote of acme\/web 0\.2\.0/);

    const done = await until('the promoted release to succeed', async () => {
      const w = await workflow(held020);
      return w.settled && w;
    }, 60);
    expect(done.audit.status).toBe('succeeded');
    expect(done.steps.map((s: any) => s.message ?? '').join()).toContain('promoted by alice');
    expect(await status()).toMatchObject({ service: { imageTag: '0.2.0' }, rollout: { phase: 'Healthy', canaryWeight: 100, promotedBy: 'alice' } });
    const promoted = (await events()).find((e) => e.type === 'rollout.promoted');
    expect(promoted).toMatchObject({ userId: 'alice', data: { workflowName: held020, canaryTag: '0.2.0', approvalId: id, approvedBy: ['bob'] } });
  }, 120_000);

  it('rejected or expired: the promote does not happen and the release keeps its own pauses; an abort stays immediate', async () => {
    const held030 = await release('0.3.0', true);
    // The deploy's own approval reads as a workflow approval, beside the promote's.
    const all = (await pds.api('bob', 'GET', `/api/v1/approvals?team=${TEAM}&state=all`)).body.items;
    expect(all.find((a: any) => a.workflowName === held030)).toMatchObject({ subject: 'workflow', operation: 'deploy-service', state: 'approved' });

    const before = (await status()).rollout;
    const asked = await pds.api('carol', 'POST', `/api/v1/rollouts/${TEAM}/web/promote`);
    expect(asked.status, JSON.stringify(asked.body)).toBe(200);
    const id = asked.body.approval.id as string;
    const rejected = await pds.api('bob', 'POST', `/api/v1/approvals/${id}/reject`, { reason: 'wait for the 50% step' });
    expect(rejected.status, JSON.stringify(rejected.body)).toBe(200);
    expect(rejected.body.approval).toMatchObject({ subject: 'promote', state: 'rejected', reason: 'wait for the 50% step', decidedBy: 'bob' });
    expect(rejected.body.message).toContain('the release goes on with its own pauses');
    // The requester learns it from the approval's state.
    expect((await pds.api('carol', 'GET', `/api/v1/approvals?team=${TEAM}&state=rejected`)).body.items).toMatchObject([{ id, state: 'rejected' }]);
    expect((await status()).rollout).toMatchObject({ phase: 'Paused', canaryTag: '0.3.0', canaryWeight: 10, pausedUntil: before.pausedUntil });
    expect(await workflow(held030)).toMatchObject({ settled: false });
    expect((await pds.api('bob', 'POST', `/api/v1/approvals/${id}/approve`, {})).status).toBe(409);

    // Expired: nobody decided in time (the sweeper looks at least every 30 s); the promote does not happen either.
    const quick = { approvals: { operations: ['deploy-service'], required: 1, approvers: ['role:admin', 'bob'], expiresAfter: '2s' } };
    expect((await pds.api('root', 'PUT', `/api/v1/tenants/${TEAM}/policy`, quick)).status).toBe(200);
    const lapsing = (await pds.api('carol', 'POST', `/api/v1/rollouts/${TEAM}/web/promote`)).body.approval.id as string;
    const expired = await until('the promote\'s approval to expire', async () =>
      ((await pds.api('carol', 'GET', `/api/v1/approvals?team=${TEAM}&state=expired`)).body.items as any[]).find((a) => a.id === lapsing), 60);
    expect(expired).toMatchObject({ subject: 'promote', decidedBy: 'system:approval-expiry' });
    expect((await status()).rollout).toMatchObject({ phase: 'Paused', canaryTag: '0.3.0', canaryWeight: 10, pausedUntil: before.pausedUntil });

    const aborted = await pds.api('carol', 'POST', `/api/v1/rollouts/${TEAM}/web/abort`);
    expect(aborted.status, JSON.stringify(aborted.body)).toBe(200);
    expect(aborted.body.approval).toBeUndefined();
    const gone = await until('the aborted release to fail', async () => {
      const w = await workflow(held030);
      return w.settled && w;
    }, 60);
    expect(gone.audit).toMatchObject({ status: 'failed', message: expect.stringContaining('aborted by carol') });
  }, 120_000);

  it('a release that ended before the approval: the approved promote is a no-op, its reason on the approval (decided over MCP)', async () => {
    const held040 = await release('0.4.0', true);
    const asked = await pds.api('carol', 'POST', `/api/v1/rollouts/${TEAM}/web/promote`);
    const id = asked.body.approval.id as string;
    expect((await pds.api('alice', 'POST', `/api/v1/rollouts/${TEAM}/web/abort`)).status).toBe(200);
    await until('the aborted release to fail', async () => (await workflow(held040)).settled, 60);
    const promotedBefore = (await events()).filter((e) => e.type === 'rollout.promoted').length;

    const questions: string[] = [];
    const person = await connectHttp(CLIENTS.at(-1)!, `${pds.url}/mcp?toolsets=all`, { authorization: `Bearer ${await pds.token('bob')}` }, {
      onElicit: (params) => {
        questions.push(params.message);
        return { action: 'accept', content: { confirm: true } };
      },
    });
    try {
      const decided = await person.callTool({ name: 'platform_review_approval', arguments: { id, decision: 'approve' } });
      expect(decided.isError, JSON.stringify(decided.content)).toBeFalsy();
      expect(questions).toEqual([expect.stringContaining(`approve the promote of acme/web 0.4.0 (release ${held040}), requested by carol`)]);
      const approval = (decided.structuredContent as any).approval;
      expect(approval).toMatchObject({ subject: 'promote', state: 'approved', approvedBy: ['bob'], outcome: expect.stringMatching(/^not promoted: the release of acme\/web that was to be promoted \(.*\) has ended: it is Aborted on 0\.4\.0$/) });
      expect((decided.structuredContent as any).message).toMatch(/^Approved, but nothing was promoted/);
    } finally {
      await person.close();
    }
    const listed = (await pds.api('carol', 'GET', `/api/v1/approvals?team=${TEAM}&state=approved`)).body.items.find((a: any) => a.id === id);
    expect(listed).toMatchObject({ state: 'approved', outcome: expect.stringContaining('has ended') });
    expect((await events()).filter((e) => e.type === 'rollout.promoted')).toHaveLength(promotedBefore);
    expect((await status()).rollout).toMatchObject({ phase: 'Aborted', canaryTag: '0.4.0' });
  }, 120_000);
});
