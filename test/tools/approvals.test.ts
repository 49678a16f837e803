/**
 * Approvals through invoke() on the real sandbox (issue 20 item 2): an execution the policy holds is recorded and
 * answered submitted and waits without running; decisions follow the rules (a person, never the requester, only the
 * approvers named, once each, a reason to reject); the required-th approval starts it; rejection and expiry fail it;
 * every request and decision is an event in the tenant's feed, never an audit entry.
 */
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../config.js';
import type { Platform } from '../../core/ports.js';
import type { Identity, TokenKind } from '../../auth/identity.js';
import { restDoor } from '../../tools/door.js';
import { invoke, type InvokeDeps } from '../../tools/invoke.js';
import { allTools } from '../../tools/registry.js';
import { ONBOARD, openSandbox, run, tempDir } from '../sandbox/helpers.js';
import { until } from '../helpers/until.js';

const who = (userId: string, options: { tokenKind?: TokenKind; admin?: boolean; groups?: string[] } = {}): Identity => ({
  userId,
  groups: options.groups ?? [],
  admin: options.admin ?? false,
  tokenKind: options.tokenKind ?? 'self-issued',
});
const tool = (name: string) => allTools.find((t) => t.name === name)!;
const REST = { door: restDoor(allTools) };
const ROLLBACK = { team_name: 'acme', component_name: 'web', target_tag: '0.1.0' };

async function setUp(approvals: Record<string, unknown>) {
  const platform: Platform = await openSandbox(await tempDir(), { stepMs: 0 });
  await run(platform, 'create-tenant', { team_name: 'acme', admins: 'alice', members: 'carol', viewers: 'dave' });
  await run(platform, 'deploy-service', ONBOARD);
  const deps: InvokeDeps = { platform, config: loadConfig({ PDS_DOMAIN: 'apps.test' }), confirmSecret: new TextEncoder().encode('x'.repeat(32)) };
  const call = (name: string, input: unknown, as: Identity) => invoke(tool(name), input, as, deps, REST) as Promise<any>;
  await call('platform_set_tenant_policy', { name: 'acme', policy: { approvals } }, who('alice'));
  const workflow = (name: string) => call('platform_get_workflow', { name }, who('alice'));
  const events = async () => ((await call('platform_list_tenant_events', { name: 'acme' }, who('dave'))).items as any[]).filter((e) => e.type.startsWith('approval.'));
  return { platform, call, workflow, events };
}

describe('approvals through invoke()', () => {
  it('holds the execution, refuses who may not decide, counts each person once, and starts on the required-th approval', async () => {
    const { platform, call, workflow, events } = await setUp({ operations: ['rollback-service'], required: 2, approvers: ['role:admin', 'group:sre', 'erin'], expiresAfter: '1h' });
    const submitted = await call('platform_rollback_service', ROLLBACK, who('carol'));
    expect(submitted.status).toBe('submitted');
    expect(submitted.message).toMatch(/this rollback-service needs 2 approvals from role:admin, group:sre or erin; it will wait up to 1h \(until .*Z\)/);
    const waiting = await workflow(submitted.workflowName);
    expect(waiting).toMatchObject({ phase: 'awaiting-approval', settled: false, audit: { status: 'submitted' } });
    expect(waiting.approval).toMatchObject({ required: 2, approvedBy: [], state: 'pending', approvers: ['role:admin', 'group:sre', 'erin'] });
    expect(waiting.steps.every((s: { status: string }) => s.status === 'pending')).toBe(true);
    expect(waiting.note).toMatch(/waiting for approval by role:admin, group:sre or erin until/);
    const id = waiting.approval.id as string;

    // Who may not decide: a PAT or CI token (not a person), the requester, a viewer who is no approver.
    await expect(call('platform_review_approval', { id, decision: 'approve' }, who('alice', { tokenKind: 'pat' }))).rejects.toThrow(/personal access token/);
    await expect(call('platform_review_approval', { id, decision: 'approve' }, who('github-actions:acme/web'))).rejects.toMatchObject({ code: 'FORBIDDEN' });
    await expect(call('platform_review_approval', { id, decision: 'approve' }, who('carol'))).rejects.toThrow(/requester can never decide/);
    await expect(call('platform_review_approval', { id, decision: 'approve' }, who('dave'))).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(call('platform_review_approval', { id, decision: 'approve' }, who('root', { admin: true }))).rejects.toThrow(/only role:admin, group:sre or erin may decide/);

    // Listing: what the caller may decide or requested.
    expect((await call('platform_list_approvals', {}, who('frank', { groups: ['sre'] }))).items).toMatchObject([{ id, canDecide: true }]);
    expect((await call('platform_list_approvals', {}, who('carol'))).items).toMatchObject([{ id, canDecide: false }]);
    expect((await call('platform_list_approvals', {}, who('dave'))).items).toEqual([]);

    const first = await call('platform_review_approval', { id, decision: 'approve', comment: 'looks right' }, who('frank', { groups: ['sre'] }));
    expect(first.approval).toMatchObject({ state: 'pending', approvedBy: ['frank'] });
    await expect(call('platform_review_approval', { id, decision: 'approve' }, who('frank', { groups: ['sre'] }))).rejects.toMatchObject({ code: 'CONFLICT' });
    expect(await workflow(submitted.workflowName)).toMatchObject({ phase: 'awaiting-approval', approval: { approvedBy: ['frank'] } });
    // Nothing ran meanwhile.
    expect((await platform.workflows.get(submitted.workflowName))!.steps.every((s) => s.status === 'pending')).toBe(true);

    const second = await call('platform_review_approval', { id, decision: 'approve' }, who('alice'));
    expect(second.approval).toMatchObject({ state: 'approved', approvedBy: ['frank', 'alice'] });
    const done = await until('the approved rollback', async () => {
      const w = await workflow(submitted.workflowName);
      return w.settled && w;
    }, 20);
    expect(done).toMatchObject({ phase: 'succeeded', audit: { status: 'succeeded' }, approval: { state: 'approved' } });
    expect((await events()).map((e) => [e.type, e.userId, e.data.decision ?? ''])).toEqual([
      ['approval.decided', 'alice', 'approved'],
      ['approval.decided', 'frank', 'approved'],
      ['approval.requested', 'carol', ''],
    ]);
    expect((await events())[1].data).toMatchObject({ approvalId: id, workflowName: submitted.workflowName, operation: 'rollback-service', comment: 'looks right' });
    expect((await events())[2].data).toMatchObject({ required: 2, approvers: ['role:admin', 'group:sre', 'erin'], expiresAt: waiting.approval.expiresAt });
    await expect(call('platform_review_approval', { id, decision: 'approve' }, who('erin'))).rejects.toMatchObject({ code: 'CONFLICT' });
  });

  it('a rejection needs a reason and fails the workflow without running it', async () => {
    const { call, workflow, events } = await setUp({ operations: ['*'], required: 1, approvers: ['erin'] });
    const submitted = await call('platform_rollback_service', ROLLBACK, who('carol'));
    const { approval } = await workflow(submitted.workflowName);
    await expect(call('platform_review_approval', { id: approval.id, decision: 'reject' }, who('erin'))).rejects.toMatchObject({ code: 'INVALID_PARAMS' });
    const rejected = await call('platform_review_approval', { id: approval.id, decision: 'reject', reason: 'not during the sale' }, who('erin'));
    expect(rejected.approval).toMatchObject({ state: 'rejected', decidedBy: 'erin', reason: 'not during the sale' });
    const failed = await workflow(submitted.workflowName);
    expect(failed).toMatchObject({ phase: 'failed', settled: true, audit: { status: 'failed', message: 'rejected by erin: not during the sale; nothing ran' } });
    expect(failed.steps.every((s: { status: string }) => s.status === 'skipped')).toBe(true);
    expect((await events())[0]).toMatchObject({ type: 'approval.decided', userId: 'erin', data: { decision: 'rejected', comment: 'not during the sale' } });
  });

  it('expires an undecided request: the workflow fails, the feed names the system user', async () => {
    const { call, workflow, events } = await setUp({ operations: ['rollback-service'], required: 1, approvers: ['erin'], expiresAfter: '1s' });
    const submitted = await call('platform_rollback_service', ROLLBACK, who('carol'));
    // The wait follows it through its approval to the end (the sweeper expires it).
    const waited = await call('platform_get_workflow', { name: submitted.workflowName, wait_seconds: 20 }, who('carol'));
    expect(waited).toMatchObject({ phase: 'failed', settled: true, approval: { state: 'expired' } });
    expect(waited.audit.message).toMatch(/^approval expired at .* without 1 approval from erin; nothing ran$/);
    expect((await events())[0]).toMatchObject({ type: 'approval.decided', userId: 'system:approval-expiry', data: { decision: 'expired' } });
    await expect(call('platform_review_approval', { id: waited.approval.id, decision: 'approve' }, who('erin'))).rejects.toMatchObject({ code: 'CONFLICT' });
    expect((await workflow(submitted.workflowName)).audit.status).toBe('failed');
  });

  it('over MCP asks the person (a confirmation only they may answer) and never hands the value to the agent', async () => {
    const { call, platform } = await setUp({ operations: ['rollback-service'], required: 1, approvers: ['erin'] });
    const submitted = await call('platform_rollback_service', ROLLBACK, who('carol'));
    const approval = (await platform.approvals.ofWorkflow(submitted.workflowName))!;
    const deps: InvokeDeps = { platform, config: loadConfig({ PDS_DOMAIN: 'apps.test' }), confirmSecret: new TextEncoder().encode('x'.repeat(32)) };
    const asked = invoke(tool('platform_review_approval'), { id: approval.id, decision: 'approve' }, who('erin'), deps);
    await expect(asked).rejects.toMatchObject({ code: 'CONFIRMATION_REQUIRED', personOnly: true, data: undefined });
    await expect(asked).rejects.not.toThrow(/confirm":/);
    expect((await platform.approvals.get(approval.id))!.state).toBe('pending');
  });
});
