/**
 * The approvals part of the contract suite (issue 20 item 2), on both backends (`test/contract/suite.ts` calls it
 * after the governance case, with its tenant and service): an execution the policy holds is answered submitted and
 * waits (phase awaiting-approval; on Kubernetes `test/cluster/approvals.test.ts` shows no Argo Workflow exists);
 * self-approval is refused even for a platform admin; an approval counts once per person; the required-th approval
 * — over MCP, after the host asked the person — starts it and it succeeds; a rejection and an expiry fail it; every
 * request and decision is in the tenant's feed.
 */
import { expect } from 'vitest';
import { CLIENTS, connectHttp } from '../helpers/mcp-clients.js';
import type { TestServer } from '../helpers/server.js';
import { until } from '../helpers/until.js';

/** What the suite hands over. */
export interface ApprovalCase {
  pds: TestServer;
  team: string;
  /** A platform admin (the requester here; not a member of the tenant). */
  admin: string;
  /** The tenant's admin (approver through `role:admin`). */
  tenantAdmin: string;
  workflowSeconds: number;
  /** Tools called, for the suite's "called every tool" check. */
  covered: Set<string>;
  /** Workflows submitted, newest last. */
  workflows: string[];
}

/** Run the approvals case; leaves the tenant's policy `{}`. */
export async function approvalContract(c: ApprovalCase): Promise<void> {
  const { pds, team, admin } = c;
  const as = async (user: string, groups: string[], method: string, path: string, body?: unknown) => {
    const res = await fetch(pds.url + path, {
      method,
      headers: { authorization: `Bearer ${await pds.token(user, groups)}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as any };
  };
  const policy = (approvals: Record<string, unknown> | undefined) => pds.api(admin, 'PUT', `/api/v1/tenants/${team}/policy`, approvals ? { approvals } : {});
  const rollback = async (tag: string) => {
    const res = await pds.api(admin, 'POST', '/api/v1/operations/rollback-service/execute', { team_name: team, component_name: 'web', target_tag: tag });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.status).toBe('submitted');
    c.workflows.push(res.body.workflowName);
    return res.body as { workflowName: string; message: string };
  };
  const workflow = async (name: string, wait = 0) => (await pds.api(admin, 'GET', `/api/v1/workflows/${name}${wait ? `?wait_seconds=${wait}` : ''}`)).body;
  c.covered.add('platform_list_approvals');
  c.covered.add('platform_review_approval');

  expect((await policy({ operations: ['rollback-service'], required: 2, approvers: ['role:admin', 'group:sre'], expiresAfter: '1h' })).status).toBe(200);

  // Held: answered submitted, with who may approve and until when; nothing runs.
  const held = await rollback('0.1.0');
  expect(held.message).toMatch(/this rollback-service needs 2 approvals from role:admin or group:sre; it will wait up to 1h \(until .*Z\)/);
  const waiting = await workflow(held.workflowName, 2);
  expect(waiting).toMatchObject({ phase: 'awaiting-approval', settled: false, audit: { status: 'submitted' }, approval: { required: 2, approvedBy: [], state: 'pending' } });
  expect(waiting.steps.filter((s: { status: string }) => s.status !== 'pending')).toEqual([]);
  const id = waiting.approval.id as string;

  // The requester may not approve, even as a platform admin; a stranger does not see it; a group approver lists it.
  const self = await pds.api(admin, 'POST', `/api/v1/approvals/${id}/approve`, {});
  expect(self.status).toBe(403);
  expect(self.body.error).toMatch(/requester can never decide/);
  expect((await pds.api('mallory', 'POST', `/api/v1/approvals/${id}/approve`, {})).status).toBe(404);
  const listed = await as('erin', ['sre'], 'GET', `/api/v1/approvals?team=${team}&state=pending`);
  expect(listed.body.items).toMatchObject([{ id, workflowName: held.workflowName, requestedBy: admin, canDecide: true }]);
  expect((await pds.api('mallory', 'GET', '/api/v1/approvals')).body).toEqual({ items: [], count: 0 });

  // One approval counts once per person.
  const first = await as('erin', ['sre'], 'POST', `/api/v1/approvals/${id}/approve`, { comment: 'diff reviewed' });
  expect(first.status, JSON.stringify(first.body)).toBe(200);
  expect(first.body.approval).toMatchObject({ state: 'pending', approvedBy: ['erin'] });
  expect((await as('erin', ['sre'], 'POST', `/api/v1/approvals/${id}/approve`, {})).status).toBe(409);
  expect(await workflow(held.workflowName)).toMatchObject({ phase: 'awaiting-approval', approval: { approvedBy: ['erin'] } });

  // Over MCP an agent cannot decide: a client that cannot ask the person is refused; one that can asks, and on yes
  // the second (required-th) approval starts the workflow.
  const url = `${pds.url}/mcp?toolsets=all`;
  const authorization = `Bearer ${await pds.token(c.tenantAdmin)}`;
  const stateless = await connectHttp(CLIENTS[0]!, url, { authorization });
  try {
    const refused = await stateless.callTool({ name: 'platform_review_approval', arguments: { id, decision: 'approve' } });
    expect(refused.isError).toBe(true);
    expect(JSON.stringify(refused.content)).toMatch(/needs the person's own answer/);
    expect(JSON.stringify(refused)).not.toMatch(/"confirm"/);
  } finally {
    await stateless.close();
  }
  const asked: string[] = [];
  const person = await connectHttp(CLIENTS.at(-1)!, url, { authorization }, {
    onElicit: (params) => {
      asked.push(params.message);
      return { action: 'accept', content: { confirm: true } };
    },
  });
  try {
    const decided = await person.callTool({ name: 'platform_review_approval', arguments: { id, decision: 'approve', comment: 'ship it' } });
    expect(decided.isError, JSON.stringify(decided.content)).toBeFalsy();
    expect(asked).toHaveLength(1);
    expect(asked[0]).toContain(`approve ${held.workflowName}`);
    expect((decided.structuredContent as any).approval).toMatchObject({ state: 'approved', approvedBy: ['erin', c.tenantAdmin] });
  } finally {
    await person.close();
  }
  const ran = await until('the approved rollback', async () => {
    const w = await workflow(held.workflowName, 5);
    return w.settled && w;
  }, c.workflowSeconds);
  expect(ran).toMatchObject({ phase: 'succeeded', audit: { status: 'succeeded' }, approval: { state: 'approved' } });

  // Rejected: a reason is required; the workflow fails without running.
  const doomed = await rollback('0.1.1');
  const doomedId = (await workflow(doomed.workflowName)).approval.id as string;
  expect((await as('erin', ['sre'], 'POST', `/api/v1/approvals/${doomedId}/reject`, {})).status).toBe(400);
  const rejected = await as('erin', ['sre'], 'POST', `/api/v1/approvals/${doomedId}/reject`, { reason: 'not during the sale' });
  expect(rejected.status, JSON.stringify(rejected.body)).toBe(200);
  expect(await workflow(doomed.workflowName)).toMatchObject({
    phase: 'failed',
    settled: true,
    audit: { status: 'failed', message: 'rejected by erin: not during the sale; nothing ran' },
    approval: { state: 'rejected' },
  });

  // Expired: nobody decided in time; the wait follows it to the end.
  expect((await policy({ operations: ['rollback-service'], required: 1, approvers: ['group:sre'], expiresAfter: '2s' })).status).toBe(200);
  const lapsed = await rollback('0.1.1');
  const expired = await until('the expiry', async () => {
    const w = await workflow(lapsed.workflowName, 10);
    return w.settled && w;
  }, 60);
  expect(expired).toMatchObject({ phase: 'failed', audit: { status: 'failed' }, approval: { state: 'expired' } });
  expect(expired.audit.message).toMatch(/^approval expired at .* without 1 approval from group:sre; nothing ran$/);

  // The feed: each request and decision, who and when; none of it in the audit trail beyond the three executions.
  const events = (await pds.api(c.tenantAdmin, 'GET', `/api/v1/tenants/${team}/events?limit=20`)).body.items.filter((e: any) => e.type.startsWith('approval.'));
  expect(events.map((e: any) => [e.type, e.userId, e.data.decision ?? e.data.workflowName])).toEqual([
    ['approval.decided', 'system:approval-expiry', 'expired'],
    ['approval.requested', admin, lapsed.workflowName],
    ['approval.decided', 'erin', 'rejected'],
    ['approval.requested', admin, doomed.workflowName],
    ['approval.decided', c.tenantAdmin, 'approved'],
    ['approval.decided', 'erin', 'approved'],
    ['approval.requested', admin, held.workflowName],
  ]);
  expect(events[5].data).toMatchObject({ approvalId: id, operation: 'rollback-service', comment: 'diff reviewed' });
  expect((await pds.api(admin, 'GET', '/api/v1/audit')).body.items.slice(0, 3).map((e: any) => e.workflowName)).toEqual([
    lapsed.workflowName,
    doomed.workflowName,
    held.workflowName,
  ]);
  expect((await policy(undefined)).status).toBe(200);
}
