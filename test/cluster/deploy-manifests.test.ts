/**
 * Every manifest in deploy/ is accepted by the real API server: the kubernetes backend's files are created (in the
 * order deploy/README.md gives), and every file, the sandbox one included, passes `kubectl apply --dry-run=server`.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { KubernetesObjectApi, type KubeConfig } from '@kubernetes/client-node';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { adminKubeConfig } from '../fixtures/kube-apiserver.js';
import { CLUSTER_FILES, createAll, DEPLOY, installDeploy, loadDeployFile } from './deploy.js';

let admin: KubeConfig;
beforeAll(() => {
  admin = adminKubeConfig(inject('kubeconfigPath'));
});

const SANDBOX = 'kubernetes/pds.yaml';
const kubectl = (args: string[], input?: string) =>
  spawnSync('kubectl', ['--kubeconfig', inject('kubeconfigPath'), ...args], { encoding: 'utf8', input });

describe('deploy/ on the API server', () => {
  it('creates every object of the kubernetes backend, the eight WorkflowTemplates and pds-steps included', async () => {
    await installDeploy(admin);
    const api = admin.makeApiClient(KubernetesObjectApi);
    const objects = CLUSTER_FILES.flatMap(loadDeployFile);
    for (const object of objects) {
      const live = await api.read({ apiVersion: object.apiVersion, kind: object.kind, metadata: { name: object.metadata!.name!, namespace: object.metadata!.namespace } });
      expect(live.metadata!.uid, `${object.kind} ${object.metadata!.name}`).toBeTruthy();
    }
    const templates = objects.filter((o) => o.kind === 'WorkflowTemplate').map((o) => o.metadata!.name).sort();
    expect(templates).toEqual([
      'create-tenant', 'delete-tenant', 'deploy-service', 'pds-steps', 'preview-delete', 'preview-deploy', 'provision-database', 'retire-service', 'rollback-service',
    ]);
    // The WorkflowTemplates kept their specs: loaded with loadAllYaml, the server did not prune them.
    const stored = kubectl(['get', 'workflowtemplate', 'deploy-service', '-n', 'pds-workflows', '-o', 'json']);
    expect(JSON.parse(stored.stdout).spec.templates.length).toBeGreaterThan(3);
  });

  it('passes server-side validation for every file in deploy/ (kubectl apply --dry-run=server)', async () => {
    await installDeploy(admin); // the namespaces the files name
    // Kustomize directories (kustomization.yaml, the addons and overlays) are rendered and checked by kustomize.test.ts.
    const kustomized = (f: string) => path.basename(f) === 'kustomization.yaml' || /^kubernetes\/(addons|overlays)\//.test(f);
    const files = readdirSync(DEPLOY, { recursive: true }).map(String).filter((f) => f.endsWith('.yaml') && !kustomized(f));
    expect(files).toContain(SANDBOX);
    for (const file of files.filter((f) => f !== SANDBOX)) {
      const r = kubectl(['apply', '--dry-run=server', '-f', path.join(DEPLOY, file)]);
      expect(r.status, `${file}: ${r.stderr}`).toBe(0);
    }
    // The sandbox file is the alternative to kubernetes/cluster/ (same Deployment name in the same namespace):
    // validate it in a namespace of its own.
    const sandbox = loadDeployFile(SANDBOX).map((o) =>
      o.kind === 'Namespace' ? { ...o, metadata: { name: 'pds-sandbox' } } : { ...o, metadata: { ...o.metadata, namespace: 'pds-sandbox' } },
    );
    await createAll(admin, sandbox.filter((o) => o.kind === 'Namespace'));
    const r = kubectl(['apply', '--dry-run=server', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items: sandbox }));
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain('deployment.apps/pds created (server dry run)');
  });

  it('rejects a manifest the server finds invalid (the check can fail)', () => {
    const quota = { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'q', namespace: 'pds' }, spec: { hard: { cpu: 'four' } } };
    const r = kubectl(['apply', '--dry-run=server', '-f', '-'], JSON.stringify(quota));
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain('quantities must match the regular expression');
  });
});
