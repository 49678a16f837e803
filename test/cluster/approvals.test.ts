/**
 * Approvals on PDS_BACKEND=kubernetes against the real API server (issue 20 item 2): a workflow waiting for approval
 * has a record and an audit entry but no Argo Workflow, and survives the ghost reconciler (which fails records whose
 * Workflow is missing) even with no grace at all; when two replicas on one PostgreSQL approve at once, one of them
 * starts it — the Workflow is created once, then run by the Argo stand-in — and a rejected one never gets a Workflow.
 */
import { randomUUID } from 'node:crypto';
import { CustomObjectsApi } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubernetesPlatform } from '../../adapters/kubernetes/index.js';
import type { Workflow } from '../../adapters/kubernetes/objects.js';
import type { ApprovalRequest } from '../../core/governance/approvals.js';
import type { AuditEntry } from '../../core/model.js';
import { operationContract, type OperationId } from '../../core/operations/index.js';
import { recordedParameters } from '../../tools/operations/execute.js';
import { startClusterHarness, until, WORKFLOWS, type ClusterHarness } from './platform.js';

const TEAM = 'gate';
const CALLER = 'carol@example.com';
const argo = { group: 'argoproj.io', version: 'v1alpha1' };
let h: ClusterHarness;
let platform: KubernetesPlatform;

const workflowExists = async (name: string) =>
  h.admin
    .makeApiClient(CustomObjectsApi)
    .getNamespacedCustomObject({ ...argo, namespace: WORKFLOWS, plural: 'workflows', name })
    .then((w) => w as Workflow, () => undefined);

/** Submit as the execute pipeline does; with `approval`, as it does when the tenant's policy asks for one. */
async function submit(operation: OperationId, input: Record<string, string>, approval?: ApprovalRequest): Promise<string> {
  const name = `${operation}-${randomUUID().slice(0, 5)}`;
  const contract = operationContract(operation);
  const parameters = contract.parameters.parse(input) as never;
  const recorded = recordedParameters(contract, parameters);
  const audit: AuditEntry = { id: randomUUID(), timestamp: new Date().toISOString(), userId: CALLER, operation, parameters: recorded, workflowName: name, status: 'submitted', riskLevel: contract.riskLevel, message: '' };
  const tenantUid = (await platform.backend.getTenantRef(TEAM))?.uid;
  await platform.workflows.submit({ name, operation, parameters, recorded, userId: CALLER, audit, ...(tenantUid ? { tenantUid } : {}), ...(approval ? { approval } : {}) } as never);
  return name;
}

const request = (): ApprovalRequest => ({ id: randomUUID(), required: 1, approvers: ['group:sre'], expiresAfter: '1h', expiresAt: new Date(Date.now() + 3_600_000).toISOString() });

beforeAll(async () => {
  h = await startClusterHarness({});
  // No grace: a record without its Workflow is a ghost at the reconciler's first look, unless it waits for approval.
  platform = await h.platform({ vanishedAfterSeconds: 0 });
  const created = await submit('create-tenant', { team_name: TEAM, display_name: 'Gate', description: 'x', contact_email: 'gate@example.com', cpu: '1', memory: '1Gi', pods: '5' });
  await until('the tenant created', async () => (await platform.audit.get(created))?.status === 'succeeded' && platform.backend.getTenantRef(TEAM), 90);
}, 180_000);
afterAll(async () => {
  await h?.stop();
});

describe.sequential('approvals on the kubernetes backend', () => {
  it('a waiting record has no Workflow and survives the ghost reconciler; approved by two replicas at once, it is created once and runs', async () => {
    const held = request();
    const name = await submit('rollback-service', { team_name: TEAM, component_name: 'web', target_tag: '0.1.0' }, held);
    expect(await workflowExists(name)).toBeUndefined();
    await platform.workflows.reconcile();
    await platform.workflows.reconcile();
    expect(await platform.workflows.get(name)).toMatchObject({ phase: 'submitted', approval: { id: held.id, state: 'pending' } });
    expect(await platform.audit.get(name)).toMatchObject({ status: 'submitted' });
    expect(await workflowExists(name)).toBeUndefined();

    // Two replicas with the usual grace: with none, any reconciler round between the approval's commit and the
    // informer seeing the new Workflow would take it for a ghost, as it would a fresh submission.
    await platform.close();
    platform = await h.platform();
    const replica = await h.platform();
    const at = () => new Date().toISOString();
    const votes = await Promise.allSettled([
      platform.workflows.approve(held.id, { userId: 'erin', timestamp: at() }),
      replica.workflows.approve(held.id, { userId: 'frank', timestamp: at() }),
    ]);
    expect(votes.filter((v) => v.status === 'fulfilled').length).toBeGreaterThanOrEqual(1);
    for (const v of votes) if (v.status === 'rejected') expect(v.reason).toMatchObject({ code: 'CONFLICT' });
    const wf = await until('the approved Workflow', () => workflowExists(name));
    expect(wf.metadata?.labels).toMatchObject({ 'pds.dev/operation': 'rollback-service', 'pds.dev/tenant': TEAM });
    expect(wf.metadata?.annotations?.['pds.dev/user']).toBe(CALLER);
    // It runs to an end in Argo (the stand-in runs the template's steps; there is no service "web", so it may fail).
    const settled = await until('the approved workflow settled', async () => {
      const a = await platform.audit.get(name);
      return a && a.status !== 'submitted' && a;
    }, 90);
    expect(settled.message).not.toMatch(/no longer exists/);
    expect((await platform.approvals.get(held.id))!.state).toBe('approved');
  });

  it('a rejected one never gets a Workflow and is settled failed once', async () => {
    const held = request();
    const name = await submit('rollback-service', { team_name: TEAM, component_name: 'web', target_tag: '0.1.0' }, held);
    const outcome = { state: 'rejected' as const, userId: 'erin', reason: 'no', timestamp: new Date().toISOString() };
    expect(await platform.workflows.settleAwaiting(name, outcome)).toBe(true);
    expect(await platform.workflows.settleAwaiting(name, outcome)).toBe(false);
    expect(await platform.workflows.get(name)).toMatchObject({ phase: 'failed', message: 'rejected by erin: no; nothing ran', approval: { state: 'rejected' } });
    expect(await platform.audit.get(name)).toMatchObject({ status: 'failed' });
    await platform.workflows.reconcile();
    expect(await workflowExists(name)).toBeUndefined();
  });
});
