/**
 * Approval records (issue 20 item 2) on SQLite and PostgreSQL, with two stores on one database standing for two pds
 * replicas: a waiting workflow is not claimed and holds no place in its queue; a person's approval counts once; when
 * two replicas approve at once exactly one of them reaches `required` and starts the workflow; a close (reject,
 * expiry) and a vote race to one outcome; each request and decision is an event committed with it.
 */
import { describe, expect, it } from 'vitest';
import type { ApprovalRequest } from '../../core/governance/approvals.js';
import type { RecordStore } from '../../adapters/sql/index.js';
import { ENGINES, openStore, testLocation } from './helpers.js';

const acme = { name: 'acme', uid: '00000000-0000-4000-8000-0000000000a1' };

async function twoReplicas(engine: 'sqlite' | 'postgres'): Promise<[RecordStore, RecordStore]> {
  const location = await testLocation(engine);
  const a = await openStore(location);
  const b = await openStore(location);
  await a.tenants.create({ uid: acme.uid, name: 'acme', displayName: 'Acme', description: '', contactEmail: 'a@example.com', quotas: { cpu: '1', memory: '1Gi', pods: '5' }, members: [{ userId: 'alice', role: 'admin' }], createdAt: '2026-11-26T06:00:00.000Z' });
  return [a, b];
}

/** Record workflow `name` waiting for an approval of `required`, as an engine's submission does. */
async function waiting(store: RecordStore, name: string, required: number, expiresAt = '2099-01-01T00:00:00.000Z'): Promise<ApprovalRequest> {
  const request: ApprovalRequest = { id: `id-${name}`, required, approvers: ['group:sre'], expiresAfter: '24h', expiresAt };
  await store.transaction(async (tx) => {
    await tx.workflows.create({
      name,
      operation: 'rollback-service',
      workflowTemplate: 'rollback-service',
      parameters: { team_name: 'acme', component_name: 'web', target_tag: '0.1.0' },
      userId: 'carol',
      steps: ['one', 'two'],
      message: 'waiting',
      startedAt: '2026-11-26T06:00:00.000Z',
      tenantUid: acme.uid,
      approvalId: request.id,
    });
    await tx.approvals.create({ request, workflowName: name, tenant: acme, operation: 'rollback-service', parameters: { team_name: 'acme' }, requestedBy: 'carol', requestedAt: '2026-11-26T06:00:00.000Z' });
  });
  return request;
}

const vote = (userId: string, comment?: string) => ({ userId, timestamp: new Date().toISOString(), ...(comment ? { comment } : {}) });

describe.each(ENGINES)('approval records on %s', (engine) => {
  it('a waiting workflow is not claimed and does not hold back later work of its service; approved, it is claimed', async () => {
    const [a] = await twoReplicas(engine);
    const request = await waiting(a, 'rollback-service-held', 1);
    await a.workflows.create({ name: 'deploy-service-later', operation: 'deploy-service', workflowTemplate: 'deploy-service', parameters: { team_name: 'acme', component_name: 'web' }, userId: 'alice', steps: ['x'], message: '', startedAt: '2026-11-26T06:00:01.000Z' });
    const claimed = await a.workflows.claim({ owner: 'p1', now: Date.now(), leaseMs: 60_000 });
    expect(claimed.map((w) => w.name)).toEqual(['deploy-service-later']);
    expect(await a.workflows.get('rollback-service-held')).toMatchObject({ awaitingApproval: true, approvalId: request.id });
    await a.workflows.settle('deploy-service-later', { phase: 'succeeded', message: '', finishedAt: new Date().toISOString() }, 'p1');
    expect((await a.approvals.vote(request.id, vote('frank'))).started).toBe(true);
    expect((await a.workflows.claim({ owner: 'p1', now: Date.now() + 1, leaseMs: 60_000 })).map((w) => w.name)).toEqual(['rollback-service-held']);
  });

  it('counts a person once, and of two replicas approving at once exactly one starts the workflow', async () => {
    const [a, b] = await twoReplicas(engine);
    const request = await waiting(a, 'rollback-service-two', 2);
    expect((await a.approvals.vote(request.id, vote('frank', 'ok'))).started).toBe(false);
    await expect(b.approvals.vote(request.id, vote('frank'))).rejects.toMatchObject({ code: 'CONFLICT' });
    // At once on PostgreSQL (row lock). SQLite's replicas are processes of one host whose busy wait blocks the thread:
    // two connections of this one test process cannot wait for each other, so there they take turns.
    const both = [() => a.approvals.vote(request.id, vote('gina')), () => b.approvals.vote(request.id, vote('hugo'))];
    const results =
      engine === 'postgres'
        ? await Promise.allSettled(both.map((f) => f()))
        : [await Promise.allSettled([both[0]!()]), await Promise.allSettled([both[1]!()])].flat();
    const started = results.filter((r) => r.status === 'fulfilled' && r.value.started);
    expect(started).toHaveLength(1);
    // The other one either counted too (after the start: it changes nothing) or found it approved already.
    for (const r of results) if (r.status === 'rejected') expect(r.reason).toMatchObject({ code: 'CONFLICT' });
    const approval = (await b.approvals.get(request.id))!;
    expect(approval.state).toBe('approved');
    expect(approval.votes[0]).toMatchObject({ userId: 'frank', comment: 'ok' });
    expect((await b.workflows.get('rollback-service-two'))!.awaitingApproval).toBe(false);
    const decided = (await a.governance.events(acme, 50)).filter((e) => e.type === 'approval.decided');
    expect(decided.length).toBe(1 + results.filter((r) => r.status === 'fulfilled').length);
  });

  it('a close and a vote race to one outcome; a closed request settles its workflow and audit entry failed once', async () => {
    const [a, b] = await twoReplicas(engine);
    const request = await waiting(a, 'rollback-service-race', 1);
    const close = () => a.approvals.close('rollback-service-race', { state: 'rejected', userId: 'frank', reason: 'no', timestamp: new Date().toISOString() });
    const approve = () => b.approvals.vote(request.id, vote('gina'));
    const [closed, voted] =
      engine === 'postgres' ? await Promise.allSettled([close(), approve()]) : [...(await Promise.allSettled([close()])), ...(await Promise.allSettled([approve()]))];
    const record = (await a.workflows.get('rollback-service-race'))!;
    const approval = (await a.approvals.get(request.id))!;
    if (closed.status === 'fulfilled' && closed.value) {
      expect(voted.status).toBe('rejected');
      expect(approval.state).toBe('rejected');
      expect(record).toMatchObject({ phase: 'failed', message: 'rejected by frank: no; nothing ran', awaitingApproval: false });
    } else {
      expect(voted).toMatchObject({ status: 'fulfilled', value: { started: true } });
      expect(approval.state).toBe('approved');
      expect(record).toMatchObject({ phase: 'submitted', awaitingApproval: false });
    }
    expect(await b.approvals.close('rollback-service-race', { state: 'expired', userId: 'system:approval-expiry', reason: 'late', timestamp: new Date().toISOString() })).toBeUndefined();
  });

  it('finds the due ones and the next expiry', async () => {
    const [a] = await twoReplicas(engine);
    await waiting(a, 'rollback-service-past', 1, '2026-01-01T00:00:00.000Z');
    await waiting(a, 'rollback-service-future', 1, '2099-01-01T00:00:00.000Z');
    expect((await a.approvals.due(new Date('2026-11-26T00:00:00.000Z'), 10)).map((x) => x.workflowName)).toEqual(['rollback-service-past']);
    expect((await a.approvals.nextExpiry())?.toISOString()).toBe('2026-01-01T00:00:00.000Z');
    expect((await a.approvals.list({ tenants: ['acme'], state: 'pending', limit: 10 })).map((x) => x.workflowName)).toEqual(['rollback-service-future', 'rollback-service-past']);
    expect(await a.approvals.list({ tenants: ['other'], limit: 10 })).toEqual([]);
  });

  it('a promote held for approval (issue 22 item 4): one pending per release, decided without touching any workflow, its outcome kept', async () => {
    const [a, b] = await twoReplicas(engine);
    // The release's deploy workflow had an approval of its own: the promote's is another, told apart by its subject.
    const deploy = await waiting(a, 'deploy-service-rel', 1);
    expect((await a.approvals.vote(deploy.id, vote('frank'))).started).toBe(true);
    const ask = (id: string, expiresAt = '2099-01-01T00:00:00.000Z') => ({
      request: { id, required: 2, approvers: ['group:sre'], expiresAfter: '1h', expiresAt },
      tenant: acme,
      release: 'deploy-service-rel',
      parameters: { team_name: 'acme', component_name: 'web', canary_tag: '0.2.0', stable_tag: '0.1.0' },
      requestedBy: 'carol',
      requestedAt: '2026-11-26T06:00:00.000Z',
    });
    const first = await a.approvals.requestPromote(ask('promote-1'));
    expect(first).toMatchObject({ created: true, approval: { id: 'promote-1', subject: 'promote', workflowName: 'deploy-service-rel', operation: 'deploy-service', state: 'pending', approvedBy: [] } });
    expect(await b.approvals.requestPromote(ask('promote-2'))).toMatchObject({ created: false, approval: { id: 'promote-1' } });
    expect(await a.approvals.get('promote-2')).toBeUndefined();
    // The workflow's own approval is still the one its detail shows.
    expect((await a.approvals.ofWorkflow('deploy-service-rel'))!).toMatchObject({ id: deploy.id, subject: 'workflow' });

    expect(await b.approvals.vote('promote-1', vote('gina'))).toMatchObject({ started: false, approval: { state: 'pending', approvedBy: ['gina'] } });
    expect(await a.approvals.vote('promote-1', vote('hugo'))).toMatchObject({ started: false, approval: { state: 'approved', decidedBy: 'hugo' } });
    await expect(b.approvals.vote('promote-1', vote('ivan'))).rejects.toMatchObject({ code: 'CONFLICT' });
    await b.approvals.promoteOutcome('promote-1', 'not promoted: the release ended');
    expect(await a.approvals.get('promote-1')).toMatchObject({ state: 'approved', outcome: 'not promoted: the release ended' });
    expect(await a.approvals.closePromote('promote-1', { state: 'rejected', userId: 'gina', reason: 'late', timestamp: new Date().toISOString() })).toBeUndefined();
    expect(await a.workflows.get('deploy-service-rel')).toMatchObject({ phase: 'submitted', awaitingApproval: false });

    // Decided, it no longer blocks a new request; a due one is found for the sweeper, and closed once.
    const second = await a.approvals.requestPromote(ask('promote-3', '2026-01-01T00:00:00.000Z'));
    expect(second.created).toBe(true);
    expect((await a.approvals.due(new Date('2026-11-26T00:00:00.000Z'), 10)).map((x) => [x.id, x.subject])).toEqual([['promote-3', 'promote']]);
    const outcome = { state: 'expired' as const, userId: 'system:approval-expiry', reason: 'no decision', timestamp: new Date().toISOString() };
    expect(await b.approvals.closePromote('promote-3', outcome)).toMatchObject({ state: 'expired', reason: 'no decision' });
    expect(await a.approvals.closePromote('promote-3', outcome)).toBeUndefined();
    // A workflow's approval is never closed as a promote's.
    expect(await a.approvals.closePromote(deploy.id, outcome)).toBeUndefined();

    const feed = (await a.governance.events(acme, 50)).filter((e) => e.type.startsWith('approval.') && (e.data as { subject?: string }).subject === 'promote');
    expect(feed.map((e) => [e.type, e.userId, (e.data as { workflowName: string }).workflowName])).toEqual([
      ['approval.decided', 'system:approval-expiry', 'deploy-service-rel'],
      ['approval.requested', 'carol', 'deploy-service-rel'],
      ['approval.decided', 'hugo', 'deploy-service-rel'],
      ['approval.decided', 'gina', 'deploy-service-rel'],
      ['approval.requested', 'carol', 'deploy-service-rel'],
    ]);
  });
});
