/**
 * deploy/'s RBAC on the real API server, with the ServiceAccounts' own tokens: pds may do exactly what issue 10 lists
 * (submit Workflows and their env Secrets, read Applications and the tenants' objects, hold a Lease) and gets a real
 * 403 for anything else; pds-workflow may manage tenants but cannot hand out roles beyond admin/edit/view.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  AppsV1Api,
  AuthorizationV1Api,
  CoordinationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  RbacAuthorizationV1Api,
  type KubeConfig,
} from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { adminKubeConfig } from '../fixtures/kube-apiserver.js';
import { installDeploy, serviceAccountKubeConfig } from './deploy.js';

let admin: KubeConfig;
let pds: KubeConfig;
let workflow: KubeConfig;
let dir: string;

/** The HTTP status an API call ends with: 200 for success, else the API server's code. */
async function status(call: () => Promise<unknown>): Promise<number> {
  try {
    await call();
    return 200;
  } catch (err) {
    const code = (err as { code?: number }).code;
    if (typeof code !== 'number') throw err;
    return code;
  }
}

const workflowObject = (name: string) => ({
  apiVersion: 'argoproj.io/v1alpha1',
  kind: 'Workflow',
  metadata: { name },
  spec: { workflowTemplateRef: { name: 'create-tenant' } },
});
const applicationObject = { apiVersion: 'argoproj.io/v1alpha1', kind: 'Application', metadata: { name: 'rbac-probe' }, spec: { project: 'default', destination: {} } };
const argo = (namespace: string, plural: string) => ({ group: 'argoproj.io', version: 'v1alpha1', namespace, plural });

beforeAll(async () => {
  admin = adminKubeConfig(inject('kubeconfigPath'));
  await installDeploy(admin);
  dir = mkdtempSync(path.join(tmpdir(), 'pds-rbac-'));
  pds = (await serviceAccountKubeConfig(admin, { namespace: 'pds', name: 'pds' }, dir)).kc;
  workflow = (await serviceAccountKubeConfig(admin, { namespace: 'pds-workflows', name: 'pds-workflow' }, dir)).kc;
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the pds ServiceAccount (deploy/kubernetes/cluster/10-rbac-pds.yaml)', () => {
  it('submits and deletes Workflows, and writes the Secret a Workflow carries, in the workflow namespace', async () => {
    const objects = pds.makeApiClient(CustomObjectsApi);
    const core = pds.makeApiClient(CoreV1Api);
    expect(await status(() => objects.createNamespacedCustomObject({ ...argo('pds-workflows', 'workflows'), body: workflowObject('rbac-probe') }))).toBe(200);
    expect(await status(() => objects.listNamespacedCustomObject(argo('pds-workflows', 'workflows')))).toBe(200);
    expect(await status(() => core.createNamespacedSecret({ namespace: 'pds-workflows', body: { metadata: { name: 'rbac-probe-env' }, stringData: { K: 'v' } } }))).toBe(200);
    expect(await status(() => core.readNamespacedSecret({ namespace: 'pds-workflows', name: 'rbac-probe-env' }))).toBe(403);
    expect(await status(() => core.deleteNamespacedSecret({ namespace: 'pds-workflows', name: 'rbac-probe-env' }))).toBe(200);
    expect(await status(() => objects.deleteNamespacedCustomObject({ ...argo('pds-workflows', 'workflows'), name: 'rbac-probe' }))).toBe(200);
    expect(await status(() => objects.createNamespacedCustomObject({ ...argo('default', 'workflows'), body: workflowObject('rbac-probe') }))).toBe(403);
    expect(await status(() => objects.patchNamespacedCustomObject({ ...argo('pds-workflows', 'workflowtemplates'), name: 'deploy-service', body: [] }))).toBe(403);
  });

  it('reads Applications but never writes them; patches AppProjects (sync windows) but never creates or deletes one', async () => {
    const objects = pds.makeApiClient(CustomObjectsApi);
    expect(await status(() => objects.listNamespacedCustomObject(argo('argocd', 'applications')))).toBe(200);
    expect(await status(() => objects.createNamespacedCustomObject({ ...argo('argocd', 'applications'), body: applicationObject }))).toBe(403);
    expect(await status(() => objects.createNamespacedCustomObject({ ...argo('argocd', 'appprojects'), body: { ...applicationObject, kind: 'AppProject' } }))).toBe(403);
    expect(await status(() => objects.deleteNamespacedCustomObject({ ...argo('argocd', 'appprojects'), name: 'rbac-probe' }))).toBe(403);
  });

  it('reads tenants and services everywhere, and writes none of them', async () => {
    const core = pds.makeApiClient(CoreV1Api);
    const apps = pds.makeApiClient(AppsV1Api);
    const rbac = pds.makeApiClient(RbacAuthorizationV1Api);
    expect(await status(() => core.listNamespace())).toBe(200);
    expect(await status(() => core.listResourceQuotaForAllNamespaces())).toBe(200);
    expect(await status(() => core.listPodForAllNamespaces())).toBe(200);
    expect(await status(() => apps.listDeploymentForAllNamespaces())).toBe(200);
    expect(await status(() => rbac.listRoleBindingForAllNamespaces())).toBe(200);
    expect(await status(() => core.createNamespace({ body: { metadata: { name: 'rbac-probe' } } }))).toBe(403);
    expect(await status(() => core.listNamespacedSecret({ namespace: 'kube-system' }))).toBe(403);
    expect(await status(() => core.listNamespacedSecret({ namespace: 'default' }))).toBe(403);
    expect(await status(() => core.createNamespacedResourceQuota({ namespace: 'default', body: { metadata: { name: 'q' }, spec: { hard: { pods: '1' } } } }))).toBe(403);
    expect(await status(() => rbac.createNamespacedRoleBinding({ namespace: 'default', body: { metadata: { name: 'x' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' }, subjects: [] } }))).toBe(403);
    expect(await status(() => apps.deleteNamespacedDeployment({ namespace: 'default', name: 'x' }))).toBe(403);
  });

  it('holds the preview reaper Lease in its own namespace only', async () => {
    const leases = pds.makeApiClient(CoordinationV1Api);
    const body = { metadata: { name: 'pds-preview-reaper' }, spec: { holderIdentity: 'pds-0', leaseDurationSeconds: 15 } };
    // The cluster suites share one control plane: a pds another suite ran under this ServiceAccount (the contract suite,
    // test/cluster/artifact.test.ts) may have left the Lease behind, in whatever order the files ran. Start without it.
    await status(() => admin.makeApiClient(CoordinationV1Api).deleteNamespacedLease({ namespace: 'pds', name: 'pds-preview-reaper' }));
    expect(await status(() => leases.createNamespacedLease({ namespace: 'pds', body }))).toBe(200);
    const lease = await leases.readNamespacedLease({ namespace: 'pds', name: 'pds-preview-reaper' });
    expect(await status(() => leases.replaceNamespacedLease({ namespace: 'pds', name: 'pds-preview-reaper', body: { ...lease, spec: { ...lease.spec, holderIdentity: 'pds-1' } } }))).toBe(200);
    expect(await status(() => leases.deleteNamespacedLease({ namespace: 'pds', name: 'pds-preview-reaper' }))).toBe(403);
    expect(await status(() => leases.createNamespacedLease({ namespace: 'kube-system', body }))).toBe(403);
  });

  it('holds no rule beyond the ones issue 10 lists (SelfSubjectRulesReview)', async () => {
    const review = async (namespace: string) => {
      const res = await pds.makeApiClient(AuthorizationV1Api).createSelfSubjectRulesReview({ body: { spec: { namespace } } });
      return res.status!.resourceRules
        .filter((r) => !r.resources?.some((x) => x.startsWith('selfsubject'))) // system:basic-user, everyone has it
        .flatMap((r) => r.resources!.flatMap((res) => r.verbs.map((v) => `${r.apiGroups?.[0] ?? ''}/${res}:${v}`)))
        .sort();
    };
    const reader = ['/namespaces', '/resourcequotas', '/pods', 'apps/deployments', 'rbac.authorization.k8s.io/rolebindings']
      .flatMap((r) => ['get', 'list', 'watch'].map((v) => `${r}:${v}`))
      .concat('/pods/log:get')
      // Promote and abort a canary or blue-green release in a tenant's namespace (issue 22): read its Rollout, patch
      // its status as `kubectl argo rollouts promote|abort` do, and its annotations to say who aborted; read the
      // AnalysisRuns of its canary steps.
      .concat('argoproj.io/rollouts:get', 'argoproj.io/rollouts/status:patch', 'argoproj.io/rollouts:patch', 'argoproj.io/analysisruns:list');
    expect(await review('default')).toEqual([...reader].sort());
    expect(await review('pds-workflows')).toEqual(
      [...reader, ...['create', 'get', 'list', 'watch', 'delete', 'patch'].map((v) => `argoproj.io/workflows:${v}`), '/secrets:create', '/secrets:delete'].sort(),
    );
    expect(await review('argocd')).toEqual(
      [...reader, ...['get', 'list', 'watch'].map((v) => `argoproj.io/applications:${v}`), 'argoproj.io/appprojects:get', 'argoproj.io/appprojects:list', 'argoproj.io/appprojects:patch'].sort(),
    );
    expect(await review('pds')).toEqual([...reader, ...['get', 'create', 'update'].map((v) => `coordination.k8s.io/leases:${v}`)].sort());
  });
});

describe('the pds-workflow ServiceAccount (deploy/kubernetes/cluster/11-rbac-workflows.yaml)', () => {
  it('cannot read Secrets outside tenant namespaces or bind a role beyond admin/edit/view', async () => {
    const core = workflow.makeApiClient(CoreV1Api);
    const rbac = workflow.makeApiClient(RbacAuthorizationV1Api);
    expect(await status(() => core.listNamespacedSecret({ namespace: 'kube-system' }))).toBe(403);
    expect(await status(() => core.readNamespacedSecret({ namespace: 'pds', name: 'anything' }))).toBe(403);
    const binding = (clusterRole: string) => ({
      metadata: { name: `rbac-probe-${clusterRole}` },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: clusterRole },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'mallory' }],
    });
    expect(await status(() => rbac.createNamespacedRoleBinding({ namespace: 'default', body: binding('cluster-admin') }))).toBe(403);
    expect(await status(() => rbac.createNamespacedRoleBinding({ namespace: 'default', body: binding('view') }))).toBe(200);
    await admin.makeApiClient(RbacAuthorizationV1Api).deleteNamespacedRoleBinding({ namespace: 'default', name: 'rbac-probe-view' });
    expect(await status(() => workflow.makeApiClient(CustomObjectsApi).createNamespacedCustomObject({ ...argo('pds-workflows', 'workflows'), body: workflowObject('rbac-probe-2') }))).toBe(403);
  });
});
