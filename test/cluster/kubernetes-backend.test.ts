/**
 * PDS_BACKEND=kubernetes against the real API server (issue 10): pds runs under its least-privilege ServiceAccount,
 * submits Workflows that the Argo Workflows stand-in runs with the WorkflowTemplates' real steps, reads tenants,
 * services, status, resources and logs back from informers and pods, settles records in PostgreSQL from the watch,
 * also for Workflows that finished or vanished while it was down, and expires previews under a Lease.
 */
import { randomUUID } from 'node:crypto';
import { CoreV1Api, CustomObjectsApi, KubernetesObjectApi } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubernetesPlatform } from '../../adapters/kubernetes/index.js';
import type { Workflow } from '../../adapters/kubernetes/objects.js';
import type { AuditEntry } from '../../core/model.js';
import { operationContract, type OperationId } from '../../core/operations/index.js';
import type { ClusterWorkflowRun as WorkflowRun } from '../../adapters/kubernetes/engine.js';
import { recordedParameters } from '../../tools/operations/execute.js';
import { LOG_TAIL_LINES } from '../../tools/workflow-view.js';
import { startTestServer } from '../helpers/server.js';
import { loadDeployFile, serviceAccountKubeConfig } from './deploy.js';
import { ARGOCD, REGISTRY, startClusterHarness, until, WORKFLOWS, type ClusterHarness } from './platform.js';

const TEAM = 'orbit';
const CALLER = 'alice@example.com';
let h: ClusterHarness;
let platform: KubernetesPlatform;

const argo = { group: 'argoproj.io', version: 'v1alpha1' };
const readWorkflow = (name: string) =>
  h.admin.makeApiClient(CustomObjectsApi).getNamespacedCustomObject({ ...argo, namespace: WORKFLOWS, plural: 'workflows', name }) as Promise<Workflow>;

/** Submit as the execute pipeline does: validated parameters, recorded ones, the audit entry with the submission. */
async function submit(p: KubernetesPlatform, operation: OperationId, input: Record<string, string>, name = `${operation}-${randomUUID().slice(0, 5)}`) {
  const contract = operationContract(operation);
  const parameters = contract.parameters.parse(input) as never;
  const recorded = recordedParameters(contract, parameters);
  const audit: AuditEntry = {
    id: randomUUID(),
    timestamp: new Date().toISOString(),
    userId: CALLER,
    operation,
    parameters: recorded,
    workflowName: name,
    status: 'submitted',
    riskLevel: contract.riskLevel,
    message: '',
  };
  await p.workflows.submit({ name, operation, parameters, recorded, userId: CALLER, audit } as never);
  return name;
}

/** Submit and wait until the workflow settles. */
async function runToEnd(p: KubernetesPlatform, operation: OperationId, input: Record<string, string>): Promise<WorkflowRun> {
  const name = await submit(p, operation, input);
  // Settled means recorded: the audit entry has its final status too (the live Workflow may show it a moment earlier).
  return until(`${name} to settle`, async () => {
    const audit = await p.audit.get(name);
    return audit && audit.status !== 'submitted' ? p.workflows.get(name) : undefined;
  }, 90);
}

beforeAll(async () => {
  h = await startClusterHarness({ 'orbit/web': ['0.1.0', '0.2.0'] });
  platform = await h.platform();
}, 120_000);
afterAll(async () => {
  await h?.stop();
});

describe.sequential('the kubernetes backend', () => {
  it('refuses to start without PDS_DATABASE_URL', async () => {
    await expect(h.platform({ databaseUrl: undefined })).rejects.toThrow(/PDS_DATABASE_URL/);
  });

  it('refuses to start, naming the informers and their 403, under a ServiceAccount without deploy/\'s rules', async () => {
    await h.admin.makeApiClient(CoreV1Api).createNamespacedServiceAccount({ namespace: 'pds', body: { metadata: { name: 'nobody' } } }).catch(() => {});
    const nobody = await serviceAccountKubeConfig(h.admin, { namespace: 'pds', name: 'nobody' }, h.work);
    const refused = h.platform({ kubeconfigPath: nobody.path, syncTimeoutMs: 3000 });
    await expect(refused).rejects.toThrow(/did not fill within 3 s: namespaces \(HTTP 403: .*cannot list resource "namespaces"/);
  });

  it('create-tenant: a Workflow with the template, parameters, labels and caller; the tenant read back from the cluster', async () => {
    const settled: string[] = [];
    platform.workflows.onSettled((run) => settled.push(`${run.name}:${run.phase}`));
    const run = await runToEnd(platform, 'create-tenant', {
      team_name: TEAM,
      display_name: 'Orbit',
      description: 'Payments',
      contact_email: 'orbit@example.com',
      members: 'bob',
      viewers: 'carol',
      cpu: '2',
      memory: '4Gi',
      pods: '10',
    });
    expect(run).toMatchObject({ phase: 'succeeded', operation: 'create-tenant', userId: CALLER, team: TEAM });
    // runToEnd saw the record settle; nothing orders that before the onSettled listeners are called, so await the call.
    expect(await until('the onSettled call', () => settled.find((s) => s.startsWith(`${run.name}:`)))).toBe(`${run.name}:succeeded`);
    const wf = await readWorkflow(run.name);
    expect(wf.metadata?.labels).toMatchObject({ 'pds.dev/operation': 'create-tenant', 'pds.dev/tenant': TEAM, 'pds.dev/managed-by': 'pds' });
    expect(wf.metadata?.annotations?.['pds.dev/user']).toBe(CALLER);
    expect(wf.spec?.workflowTemplateRef).toEqual({ name: 'create-tenant' });
    expect(wf.spec?.synchronization).toEqual({ mutex: { name: `pds-${TEAM}` } });
    expect(Object.fromEntries((wf.spec?.arguments?.parameters ?? []).map((p) => [p.name, p.value]))).toMatchObject({ team_name: TEAM, cpu: '2', display_name: 'Orbit' });

    const tenant = await until('the tenant in the informer', () => platform.backend.getTenant(TEAM));
    expect(tenant).toMatchObject({ name: TEAM, displayName: 'Orbit', description: 'Payments', contactEmail: 'orbit@example.com' });
    expect(tenant.quotas).toEqual({ cpu: '2', memory: '4Gi', pods: '10' });
    expect(tenant.members).toEqual([
      { userId: CALLER, role: 'admin' },
      { userId: 'bob', role: 'member' },
      { userId: 'carol', role: 'viewer' },
    ]);
    const ref = await platform.backend.getTenantRef(TEAM);
    expect(ref?.uid).toBe(wf.metadata?.annotations?.['pds.dev/uid']);
    expect((await platform.backend.listTenants()).map((t) => t.name)).toContain(TEAM);
    // The audit entry settled with the workflow, and belongs to the tenant it created.
    expect(await platform.audit.get(run.name)).toMatchObject({ status: 'succeeded', tenantUid: ref?.uid });
  });

  it('onboards a service: built, committed, synced by Argo CD; services, status, resources and pod logs read back', async () => {
    const run = await runToEnd(platform, 'deploy-service', {
      action: 'onboard',
      team_name: TEAM,
      component_name: 'web',
      git_tag: '0.1.0',
      dockerfile_repo: 'orbit/web',
      port: '8080',
    });
    expect(run, run.message).toMatchObject({ phase: 'succeeded' });
    expect(run.steps.length).toBeGreaterThan(2);
    expect(run.steps.every((s) => s.status === 'succeeded' || s.status === 'skipped')).toBe(true);
    const wf = await readWorkflow(run.name);
    expect(Object.fromEntries((wf.spec?.arguments?.parameters ?? []).map((p) => [p.name, p.value]))).toMatchObject({
      application: 'orbit-web',
      host: 'orbit-web.apps.test',
      image: `${REGISTRY}/src/orbit/web:0.1.0`, // keyed by the source (core/images.ts)
    });
    expect(wf.spec?.synchronization).toEqual({ mutex: { name: 'pds-orbit-web' } });
    const service = await until('the service', () => platform.backend.getService(TEAM, 'web'));
    expect(service).toEqual({ team: TEAM, name: 'web', imageTag: '0.1.0', host: 'orbit-web.apps.test', port: '8080', componentType: 'base-service', hasDatabase: false });
    expect(await platform.backend.listServices(TEAM)).toEqual([service]);
    const status = await until('Synced/Healthy', async () => {
      const s = await platform.backend.status(TEAM, 'web');
      return s.argocd.syncStatus === 'Synced' && s.argocd.healthStatus === 'Healthy' ? s : undefined;
    });
    expect(status).toMatchObject({ argocd: { name: 'orbit-web' }, service: { team: TEAM, name: 'web', imageTag: '0.1.0', host: 'orbit-web.apps.test' } });
    await expect(platform.backend.status(TEAM, 'nope')).rejects.toMatchObject({ code: 'NOT_FOUND', message: 'GitOps application not found: orbit-nope' });

    // The Deployment's pod, made by the controller manager, bound by the kubelet stand-in; logs through pods/log.
    const pod = await until('a bound pod of orbit/web', () => h.kubelet.bound.find((k) => k.startsWith(`${TEAM}/orbit-web-`)));
    const podName = pod.split('/')[1]!;
    h.kubelet.log(TEAM, podName, 'GET /healthz 200');
    h.kubelet.log(TEAM, podName, 'GET / 200');
    const logs = await platform.backend.logs(TEAM, 'web', { lines: 2, sinceSeconds: 600 });
    expect(logs.lines.map((l) => l.line)).toEqual(['GET /healthz 200', 'GET / 200']);
    expect(logs.lines[0]!.labels).toMatchObject({ pod: podName, source: 'pod' });
    expect(h.kubelet.requests.at(-1)).toMatch(/tailLines=2/);
    await expect(platform.backend.logs(TEAM, 'nope', { lines: 5, sinceSeconds: 60 })).rejects.toMatchObject({ code: 'NOT_FOUND' });

    const resources = await until('the quota counting the pod', async () => {
      const r = await platform.backend.resources(TEAM);
      return r.used.pods !== '0' ? r : undefined;
    });
    expect(resources).toMatchObject({ tenant: TEAM, allocated: { cpu: '2', memory: '4Gi', pods: '10' }, used: { cpu: '100m', memory: '128Mi', pods: '1' } });
  });

  it('update-config: env values go to a Secret the Workflow owns, never into its parameters', async () => {
    const run = await runToEnd(platform, 'deploy-service', { action: 'update-config', team_name: TEAM, component_name: 'web', env_vars: 'API_KEY=s3cr3t\nLOG_LEVEL=debug' });
    expect(run, run.message).toMatchObject({ phase: 'succeeded', parameters: { env_vars: 'API_KEY=***\nLOG_LEVEL=***' } });
    const wf = await readWorkflow(run.name);
    expect(JSON.stringify(wf)).not.toContain('s3cr3t');
    const params = Object.fromEntries((wf.spec?.arguments?.parameters ?? []).map((p) => [p.name, p.value]));
    expect(params).toMatchObject({ env_secret: `${run.name}-env`, env_keys: 'API_KEY,LOG_LEVEL' });
    const core = h.admin.makeApiClient(CoreV1Api);
    const carrier = await core.readNamespacedSecret({ namespace: WORKFLOWS, name: `${run.name}-env` });
    expect(carrier.metadata?.ownerReferences?.[0]).toMatchObject({ kind: 'Workflow', name: run.name, uid: wf.metadata?.uid });
    const copied = await core.readNamespacedSecret({ namespace: TEAM, name: 'orbit-web-env' });
    expect(Buffer.from(copied.data!.API_KEY!, 'base64').toString()).toBe('s3cr3t');
  });

  it('a failing step fails the workflow with the failed node\'s message; the audit entry says so', async () => {
    const run = await runToEnd(platform, 'rollback-service', { team_name: TEAM, component_name: 'web', target_tag: '0.9.0' });
    expect(run.phase).toBe('failed');
    expect(run.message).toMatch(/^step \S+ failed: /);
    expect(run.steps.some((s) => s.status === 'failed')).toBe(true);
    expect(await platform.audit.get(run.name)).toMatchObject({ status: 'failed', message: run.message });

    // The failed step's log tail is its pod's main container log, read through pods/log under pds's ServiceAccount.
    const failed = h.controller.runs.get(run.name)!.nodes.find((n) => n.phase === 'Failed')!;
    const output = failed.mainLog!.split('\n').filter((l) => l !== '');
    expect(output.length).toBeGreaterThan(0);
    // A second replica behind a started pds (stopping the server closes its platform).
    const pds = await startTestServer({ PDS_BACKEND: 'kubernetes', PDS_REGISTRY: REGISTRY, PDS_DOMAIN: 'apps.test' }, { platform: await h.platform() });
    try {
      const view = await pds.api(CALLER, 'GET', `/api/v1/workflows/${run.name}`);
      expect(view.status).toBe(200);
      expect(view.body).toMatchObject({ phase: 'failed', settled: true, failedStep: { name: failed.path.split('/').pop(), logTail: output.slice(-LOG_TAIL_LINES) } });
      expect(view.body.failedStep.logTail).not.toContain('capturing logs'); // the wait container's line
    } finally {
      await pds.stop();
    }
    const pod = (await h.admin.makeApiClient(CoreV1Api).listNamespacedPod({ namespace: WORKFLOWS, labelSelector: `workflows.argoproj.io/workflow=${run.name}` })).items.find((p) =>
      p.metadata?.name?.startsWith(`${run.name}-${failed.template.split('/').pop()}-`),
    );
    expect(h.kubelet.requests).toContain(`GET /containerLogs/${WORKFLOWS}/${pod?.metadata?.name}/main?tailLines=${LOG_TAIL_LINES}`);
  });

  it('a Workflow whose WorkflowTemplate does not exist fails with Argo\'s message', async () => {
    const templates = h.admin.makeApiClient(CustomObjectsApi);
    await templates.deleteNamespacedCustomObject({ ...argo, namespace: WORKFLOWS, plural: 'workflowtemplates', name: 'provision-database' });
    try {
      const run = await runToEnd(platform, 'provision-database', { team_name: TEAM, component_name: 'web' });
      expect(run).toMatchObject({ phase: 'failed', message: 'workflowtemplates.argoproj.io "provision-database" not found' });
    } finally {
      await h.admin.makeApiClient(KubernetesObjectApi).create(loadDeployFile('workflows/provision-database.yaml')[0]!);
    }
  });

  it('while a Workflow runs, the run names its running step, and every change reaches onChange', async () => {
    const changes: string[] = [];
    const off = platform.workflows.onChange((run) => changes.push(`${run.phase}:${run.message}`));
    h.controller.hold('provision-database-');
    const name = await submit(platform, 'provision-database', { team_name: TEAM, component_name: 'web' });
    try {
      const run = await until('the running step', async () => {
        const r = await platform.workflows.get(name);
        return r?.message.startsWith('running step') ? r : undefined;
      });
      expect(run).toMatchObject({ phase: 'submitted', message: 'running step check-tenant (0 steps done)' });
      expect(run.steps).toEqual([expect.objectContaining({ name: 'check-tenant', status: 'running' })]);
    } finally {
      h.controller.release('provision-database-');
    }
    await until('provision-database to succeed', async () => (await platform.workflows.get(name))?.phase === 'succeeded', 90);
    // The informer's cache can show the end before the listener has been told of it.
    await until('the settled change to reach onChange', async () => changes.some((c) => c.startsWith('succeeded:')));
    off();
    expect(changes).toContain('submitted:running step check-tenant (0 steps done)');
    expect(changes.at(-1)).toMatch(/^succeeded:/);
    expect(await platform.backend.getService(TEAM, 'web')).toMatchObject({ hasDatabase: true });
  }, 120_000); // above its waits of up to 90 s

  it('tells its followers of a workflow another replica settled', async () => {
    const told: WorkflowRun[] = [];
    const off = platform.workflows.onChange((run) => told.push(run));
    h.controller.hold('provision-database-');
    let name: string;
    try {
      name = await submit(platform, 'provision-database', { team_name: TEAM, component_name: 'web' });
      await until('the Workflow running', async () => (await readWorkflow(name)).status?.phase === 'Running');
      // Another replica saw it finish first (as far as this one can tell: the record is settled already).
      await platform.records.workflows.settle(name, { phase: 'succeeded', message: 'settled by another replica', finishedAt: new Date().toISOString() });
    } finally {
      h.controller.release('provision-database-');
    }
    const end = await until('the end told to this replica\'s followers', async () => told.find((r) => r.name === name && r.phase !== 'submitted'), 90);
    off();
    expect(end).toMatchObject({ phase: 'succeeded', message: 'settled by another replica' });
  }, 120_000); // above its waits of up to 90 s

  it('cancel: spec.shutdown as argo stop/terminate write it; Argo\'s Failed settles "cancelled by"; no Workflow settles at once', async () => {
    h.controller.hold('provision-database-');
    const name = await submit(platform, 'provision-database', { team_name: TEAM, component_name: 'web' });
    let gone: string;
    try {
      await until('the running step', async () => (await platform.workflows.get(name))?.message.startsWith('running step'));
      const asked = await platform.workflows.cancel(name, { userId: 'bob', reason: 'wrong engine', force: true });
      expect(asked.name).toBe(name);
      expect((await readWorkflow(name)).spec).toMatchObject({ shutdown: 'Terminate' });
      const stopped = await until('the cancelled workflow settled', async () => {
        const audit = await platform.audit.get(name);
        return audit?.status !== 'submitted' ? platform.workflows.get(name) : undefined;
      }, 90);
      expect(stopped).toMatchObject({ phase: 'failed', message: 'cancelled by bob: wrong engine', cancelledBy: 'bob' });
      expect(await platform.audit.get(name)).toMatchObject({ status: 'failed', message: 'cancelled by bob: wrong engine' });
      expect((await readWorkflow(name)).status).toMatchObject({ phase: 'Failed', message: "Stopped with strategy 'Terminate'" });
      await expect(platform.workflows.cancel(name, { userId: 'bob' })).rejects.toMatchObject({ code: 'CONFLICT' });
      await expect(platform.workflows.cancel('provision-database-nope1', { userId: 'bob' })).rejects.toMatchObject({ code: 'NOT_FOUND' });

      // A record whose Workflow is not there (deleted; or, with approvals, not created yet) is settled at once.
      gone = await submit(platform, 'provision-database', { team_name: TEAM, component_name: 'web' });
      await h.admin.makeApiClient(CustomObjectsApi).deleteNamespacedCustomObject({ ...argo, namespace: WORKFLOWS, plural: 'workflows', name: gone });
      expect(await platform.workflows.cancel(gone, { userId: 'bob' })).toMatchObject({ phase: 'failed', message: 'cancelled by bob' });
      expect(await platform.audit.get(gone)).toMatchObject({ status: 'failed', message: 'cancelled by bob' });
    } finally {
      h.controller.release('provision-database-');
    }
  });

  it('warm reads make no API server call', async () => {
    await platform.backend.listTenants();
    const before = platform.kubeconfig.requests;
    for (let i = 0; i < 20; i++) {
      await platform.backend.listTenants();
      await platform.backend.getTenant(TEAM);
      await platform.backend.listServices(TEAM);
      await platform.backend.status(TEAM, 'web');
      await platform.backend.resources(TEAM);
    }
    expect(platform.kubeconfig.requests - before).toBe(0);
  });

  it('holds running Workflows only, metadata-only, and Applications as read; a finished Workflow leaves the informer, settled; a settled workflow is answered from its record without an API call', async () => {
    h.controller.hold('provision-database-');
    let name: string;
    try {
      name = await submit(platform, 'provision-database', { team_name: TEAM, component_name: 'web' });
      await until('the running Workflow held', async () => platform.cache.workflows.get(name, WORKFLOWS)?.metadata?.labels?.['workflows.argoproj.io/phase'] === 'Running');
      const held = platform.cache.workflows.list(WORKFLOWS);
      for (const wf of held) {
        expect(Object.keys(wf).sort()).toEqual(['apiVersion', 'kind', 'metadata']);
        expect(wf.metadata?.managedFields).toBeUndefined();
        // Argo's finished Workflows (this file's earlier ones, kept for their TTL) are not held: only running ones.
        expect(wf.metadata?.labels?.['workflows.argoproj.io/completed']).not.toBe('true');
      }
    } finally {
      h.controller.release('provision-database-');
    }
    // Argo marks it completed: it leaves the informer (the API server's DELETED for a label selector no longer met),
    // and pds fetches it once to settle it.
    await until('the finished Workflow gone from the informer', async () => platform.cache.workflows.get(name, WORKFLOWS) === undefined, 90);
    expect((await readWorkflow(name)).metadata?.labels?.['workflows.argoproj.io/completed']).toBe('true');
    const settledRun = await until('the record settled', async () => {
      const r = await platform.records.workflows.get(name);
      return r?.phase !== 'submitted' && r;
    });
    expect(settledRun).toMatchObject({ phase: 'succeeded' });
    expect(settledRun.steps.length).toBeGreaterThan(0);
    for (const app of platform.cache.applications.list(ARGOCD)) {
      expect(app).not.toHaveProperty('spec');
      expect(app.metadata?.managedFields).toBeUndefined();
    }
    // A workflow that settled while this pds watched (the failed rollback above): its steps were kept with the outcome.
    const failed = (await platform.records.workflows.list({ tenant: TEAM, limit: 100 })).find((r) => r.operation === 'rollback-service' && r.phase === 'failed');
    expect(failed, 'the failed rollback settled').toBeDefined();
    expect(failed!.steps.length).toBeGreaterThan(0);
    const before = platform.kubeconfig.requests;
    const run = await platform.workflows.get(failed!.name);
    expect(platform.kubeconfig.requests - before).toBe(0);
    expect(run).toMatchObject({ phase: 'failed', message: expect.stringMatching(/^step \S+ failed: /) });
    expect(run!.steps.some((s) => s.status === 'failed')).toBe(true);
  }, 120_000); // above its waits of up to 90 s

  it('settles workflows that finished, or vanished, while pds was down (the ghost reconciler)', async () => {
    h.controller.hold('rollback-service-');
    let finishing: string;
    let vanishing: string;
    try {
      finishing = await submit(platform, 'rollback-service', { team_name: TEAM, component_name: 'web', target_tag: '0.1.0' });
      await until('the rollback running', async () => (await readWorkflow(finishing)).status?.phase === 'Running');
      vanishing = await submit(platform, 'retire-service', { team_name: TEAM, component_name: 'ghost' });
      await platform.close();
      // While pds is down: one Workflow is deleted before anyone saw it end, the other finishes.
      await h.admin.makeApiClient(CustomObjectsApi).deleteNamespacedCustomObject({ ...argo, namespace: WORKFLOWS, plural: 'workflows', name: vanishing });
    } finally {
      h.controller.release('rollback-service-');
    }
    await until('the rollback Workflow to finish', async () => (await readWorkflow(finishing)).status?.phase === 'Succeeded', 90);
    platform = await h.platform({ vanishedAfterSeconds: 0 });
    const settledRollback = await until('the rollback settled', async () => {
      const a = await platform.audit.get(finishing);
      return a?.status !== 'submitted' ? a : undefined;
    });
    expect(settledRollback).toMatchObject({ status: 'succeeded' });
    const vanished = await until('the vanished one settled', async () => {
      const run = await platform.workflows.get(vanishing);
      return run?.phase !== 'submitted' && run;
    });
    expect(vanished).toMatchObject({ phase: 'failed', message: expect.stringContaining('no longer exists') });
    expect(await platform.audit.get(vanishing)).toMatchObject({ status: 'failed' });
  }, 120_000); // above its waits of up to 90 s

  it('expires previews: one replica holds the Lease and submits preview-delete', async () => {
    // A preview runs an image built before (pin-image asks the registry): 0.1.0 was built at onboarding.
    const deployed = await runToEnd(platform, 'preview-deploy', { team_name: TEAM, component_name: 'web', image_tag: '0.1.0', ttl_hours: '1' });
    expect(deployed, deployed.message).toMatchObject({ phase: 'succeeded' });
    const preview = await until('the preview service', () => platform.backend.getService(TEAM, 'web-preview-0-1-0'));
    expect(preview).toMatchObject({ componentType: 'preview', imageTag: '0.1.0' });
    const other = await h.platform();
    expect(await platform.reaper.hold()).toBe(true);
    expect(await other.reaper.hold()).toBe(false);
    expect(await other.reaper.hold()).toBe(false);
    // Not expired yet: nothing submitted.
    expect(await platform.reaper.sweep()).toEqual([]);
    await h.admin.makeApiClient(CustomObjectsApi).patchNamespacedCustomObject({
      ...argo,
      namespace: ARGOCD,
      plural: 'applications',
      name: 'orbit-web-preview-0-1-0',
      body: [{ op: 'replace', path: '/metadata/annotations/pds.dev~1expires-at', value: new Date(Date.now() - 1000).toISOString() }],
    });
    await until('the expiry in the cache', async () => (await platform.backend.getService(TEAM, 'web-preview-0-1-0')) && platform.cache.applications.get('orbit-web-preview-0-1-0', ARGOCD)?.metadata?.annotations?.['pds.dev/expires-at']?.startsWith(new Date().toISOString().slice(0, 10)));
    await platform.reaper.tick();
    const submitted = (await platform.records.workflows.unfinished()).filter((w) => w.operation === 'preview-delete');
    expect(submitted).toHaveLength(1);
    expect(submitted[0]).toMatchObject({ userId: 'system:pds-preview-reaper', parameters: { team_name: TEAM, component_name: 'web', image_tag: '0.1.0' } });
    // A second round while it runs submits nothing more.
    expect(await platform.reaper.sweep()).toEqual([]);
    await until('the preview gone', async () => !(await platform.backend.getService(TEAM, 'web-preview-0-1-0')), 90);
    await other.close();
  }, 120_000); // above its waits of up to 90 s

  it('retire-service and delete-tenant remove what was made', async () => {
    const retired = await runToEnd(platform, 'retire-service', { team_name: TEAM, component_name: 'web' });
    expect(retired, retired.message).toMatchObject({ phase: 'succeeded' });
    await until('the service gone', async () => !(await platform.backend.getService(TEAM, 'web')));
    // The Application gone from the informer is gone from its index by tenant too (listServices of one tenant reads it).
    await until('the service gone from its tenant\'s list', async () => (await platform.backend.listServices(TEAM)).every((x) => x.name !== 'web'));
    await expect(platform.backend.status(TEAM, 'web')).rejects.toMatchObject({ code: 'NOT_FOUND' });
    const deleted = await runToEnd(platform, 'delete-tenant', { team_name: TEAM });
    expect(deleted, deleted.message).toMatchObject({ phase: 'succeeded' });
    await until('the tenant gone', async () => !(await platform.backend.getTenant(TEAM)));
    await expect(platform.backend.resources(TEAM)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    // Operations on a tenant that no longer exists are refused before anything is submitted.
    await expect(submit(platform, 'retire-service', { team_name: TEAM, component_name: 'web' })).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });
});
