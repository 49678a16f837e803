/**
 * Issue 13 §4: pds's cluster manifests as kustomize directories — the base (`deploy/kubernetes/cluster`), the addons
 * (HPA, PodDisruptionBudget, ServiceMonitor, Ingress) as components, and `overlays/production` — rendered with
 * `kubectl kustomize` and given to the test API server: the whole rendering passes `kubectl apply --dry-run=server`,
 * and the addons are created and read back.
 *
 * The test API server is Kubernetes 1.20, which serves HorizontalPodAutoscaler as `autoscaling/v2beta2` and
 * PodDisruptionBudget as `policy/v1beta1`; the manifests use `autoscaling/v2` and `policy/v1`, what every supported
 * cluster serves (1.23+ and 1.21+; the betas are gone since 1.26 and 1.25). Both pairs have the same fields for what
 * the addons write, so the test sends those two objects under the 1.20 names; everything else is sent as rendered.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { KubernetesObjectApi, type KubeConfig, type KubernetesObject } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { adminKubeConfig } from '../fixtures/kube-apiserver.js';
import { CLUSTER_FILES, DEPLOY, installDeploy, loadDeployFile } from './deploy.js';

const kubectl = (args: string[], input?: string) =>
  spawnSync('kubectl', ['--kubeconfig', inject('kubeconfigPath'), ...args], { encoding: 'utf8', input, maxBuffer: 64 * 2 ** 20 });

/** `kubectl kustomize <dir>` as objects. */
function render(dir: string): any[] {
  const r = spawnSync('kubectl', ['kustomize', path.join(DEPLOY, dir)], { encoding: 'utf8', maxBuffer: 64 * 2 ** 20 });
  expect(r.status, r.stderr).toBe(0);
  return parseAllDocuments(r.stdout).map((d) => d.toJS());
}

/** The object under the API version a 1.20 API server serves it as (see the module comment). */
function for120(object: any): any {
  if (object.apiVersion === 'autoscaling/v2') return { ...object, apiVersion: 'autoscaling/v2beta2' };
  if (object.apiVersion === 'policy/v1') return { ...object, apiVersion: 'policy/v1beta1' };
  return object;
}

const ADDONS = ['HorizontalPodAutoscaler', 'PodDisruptionBudget', 'ServiceMonitor', 'Ingress'];

let admin: KubeConfig;
let production: any[];
beforeAll(async () => {
  admin = adminKubeConfig(inject('kubeconfigPath'));
  await installDeploy(admin); // the namespaces and what the base holds, as the other cluster suites expect them
  production = render('kubernetes/overlays/production');
});

describe('kustomize: deploy/kubernetes', () => {
  it('renders the base to exactly the plain files', () => {
    const base = render('kubernetes/cluster');
    const key = (o: any) => `${o.kind} ${o.metadata.namespace ?? ''}/${o.metadata.name}`;
    const plain = CLUSTER_FILES.filter((f) => f.startsWith('kubernetes/cluster/')).flatMap(loadDeployFile);
    expect(base.map(key).sort()).toEqual(plain.map(key).sort());
    expect(base.some((o) => ADDONS.includes(o.kind))).toBe(false);
    const deployment = base.find((o) => o.kind === 'Deployment');
    expect(deployment.spec.replicas).toBe(2);
    expect(deployment.spec.template.spec.terminationGracePeriodSeconds).toBeGreaterThan(20 + 5); // PDS_SHUTDOWN_S + preStop
  });

  it('renders production with the base, the WorkflowTemplates and every addon', () => {
    const kinds = production.map((o) => o.kind);
    expect(kinds).toEqual(expect.arrayContaining(['Namespace', 'ServiceAccount', 'ConfigMap', 'Deployment', 'Service', 'WorkflowTemplate', ...ADDONS]));
    expect(production.filter((o) => o.kind === 'WorkflowTemplate')).toHaveLength(9);
    const deployment = production.find((o) => o.kind === 'Deployment' && o.metadata.name === 'pds');
    expect(deployment.spec).not.toHaveProperty('replicas'); // the HPA owns the count
    expect(deployment.spec.template.spec.containers[0].image).toBe('ghcr.io/example/pds:0.1.0');
    const hpa = production.find((o) => o.kind === 'HorizontalPodAutoscaler');
    expect(hpa).toMatchObject({ apiVersion: 'autoscaling/v2', spec: { scaleTargetRef: { kind: 'Deployment', name: 'pds' }, minReplicas: 2 } });
    // The PDB and the ServiceMonitor select pds's pods and Service; the monitor scrapes the Service's metrics port,
    // which is PDS_METRICS_PORT; the Ingress routes only the http port.
    const podLabels = deployment.spec.template.metadata.labels;
    const pdb = production.find((o) => o.kind === 'PodDisruptionBudget');
    expect(podLabels).toMatchObject(pdb.spec.selector.matchLabels);
    const service = production.find((o) => o.kind === 'Service' && o.metadata.name === 'pds');
    const monitor = production.find((o) => o.kind === 'ServiceMonitor');
    expect(service.metadata.labels).toMatchObject(monitor.spec.selector.matchLabels);
    const metricsPort = service.spec.ports.find((p: any) => p.name === monitor.spec.endpoints[0].port);
    const config = production.find((o) => o.kind === 'ConfigMap' && o.metadata.name === 'pds');
    const container = deployment.spec.template.spec.containers[0];
    expect(container.ports.find((p: any) => p.name === metricsPort.targetPort).containerPort).toBe(Number(config.data.PDS_METRICS_PORT));
    const ingress = production.find((o) => o.kind === 'Ingress');
    expect(ingress.spec.rules[0].http.paths.map((p: any) => p.backend.service.port.name)).toEqual(['http']);
    expect(`https://${ingress.spec.rules[0].host}`).toBe(config.data.PDS_BASE_URL);
  });

  it('is accepted whole by the API server (kubectl apply --dry-run=server)', () => {
    const r = kubectl(['apply', '--dry-run=server', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items: production.map(for120) }));
    expect(r.status, r.stderr).toBe(0);
    for (const kind of ['horizontalpodautoscaler', 'poddisruptionbudget', 'servicemonitor', 'ingress']) {
      expect(r.stdout).toMatch(new RegExp(`^${kind}[.a-z0-9/]*/pds (created|configured|unchanged) \\(server dry run\\)$`, 'm'));
    }
  });

  it('creates the addons on the API server and reads them back', async () => {
    const api = admin.makeApiClient(KubernetesObjectApi);
    for (const object of production.filter((o) => ADDONS.includes(o.kind)).map(for120) as KubernetesObject[]) {
      await api.delete(object).catch(() => undefined);
      await api.create(object);
      const live = await api.read({ apiVersion: object.apiVersion, kind: object.kind, metadata: { name: object.metadata!.name!, namespace: object.metadata!.namespace } });
      expect(live.metadata!.uid, `${object.kind}`).toBeTruthy();
      expect((live as any).spec).toMatchObject(JSON.parse(JSON.stringify((object as any).spec)));
    }
  });

  it('refuses an addon the server finds invalid (the check can fail)', () => {
    const monitor = production.find((o) => o.kind === 'ServiceMonitor');
    const broken = { ...monitor, spec: { ...monitor.spec, endpoints: [{ port: 'metrics', interval: 'every minute' }] } };
    const r = kubectl(['apply', '--dry-run=server', '-f', '-'], JSON.stringify(broken));
    expect(r.status).not.toBe(0);
    expect(r.stderr).toMatch(/interval/);
  });
});
