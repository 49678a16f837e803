/**
 * The kubernetes backend on the test API server, the way a platform team runs it: deploy/ applied, pds under its own
 * least-privilege ServiceAccount (a missing rule is a real 403), records in a PostgreSQL database of its own, and
 * stand-ins for what the API server cannot do itself — the Argo Workflows controller (running the WorkflowTemplates'
 * real steps, test/fixtures/argo-steps), Argo CD (applying the GitOps repository) and a kubelet (serving pod logs).
 * GitHub is a local bare repository reached through git's `url.insteadOf`; the GitOps repository is a bare one.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { CoordinationV1Api, CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { REAPER_LEASE } from '../../adapters/kubernetes/previews.js';
import { inject } from 'vitest';
import { createKubernetesPlatform, type KubernetesPlatform, type KubernetesPlatformOptions } from '../../adapters/kubernetes/index.js';
import { startArgoCd, type ArgoCdStandIn } from '../fixtures/argo-cd.js';
import type { RunnerOptions } from '../fixtures/argo-steps/runner.js';
import { BUILD_IMAGE_STUBS } from '../fixtures/argo-steps/pods.js';
import { startArgoController, type ArgoControllerStandIn } from '../fixtures/argo-workflows-controller.js';
import { adminKubeConfig } from '../fixtures/kube-apiserver.js';
import { startKubelet, type KubeletStandIn } from '../fixtures/kubelet.js';
import { createTestDatabase } from '../fixtures/postgres.js';
import { installDeploy, loadWorkflowTemplates, serviceAccountKubeConfig } from './deploy.js';
import { bareRepository } from './gitops.js';
import { startRegistry, type RegistryStandIn } from '../fixtures/oci-registry.js';
export { until } from '../helpers/until.js';

export const WORKFLOWS = 'pds-workflows';
export const ARGOCD = 'argocd';
export const REGISTRY = 'registry.test/pds';
export const DOMAIN = 'apps.test';

export interface ClusterHarness {
  admin: KubeConfig;
  adminPath: string;
  /** pds's ServiceAccount kubeconfig file. */
  pdsKubeconfig: string;
  databaseUrl: string;
  work: string;
  gitopsRepo: string;
  controller: ArgoControllerStandIn;
  argocd: ArgoCdStandIn;
  kubelet: KubeletStandIn;
  /** The container registry the build steps push to and ask (every registry host is this one). */
  registry: RegistryStandIn;
  /** Options for {@link createKubernetesPlatform} as pds would run here; override per call. */
  options(overrides?: Partial<KubernetesPlatformOptions>): KubernetesPlatformOptions;
  platform(overrides?: Partial<KubernetesPlatformOptions>): Promise<KubernetesPlatform>;
  stop(): Promise<void>;
}

/**
 * Set the cluster up for pds. `repos`: GitHub repositories (`owner/name`) with tagged commits of a buildable app.
 */
export async function startClusterHarness(repos: Record<string, string[]>): Promise<ClusterHarness> {
  const adminPath = inject('kubeconfigPath');
  const admin = adminKubeConfig(adminPath);
  await installDeploy(admin);
  const work = mkdtempSync(path.join(tmpdir(), 'pds-kubernetes-'));
  const gitopsRepo = bareRepository(path.join(work, 'gitops.git'), [{ files: { 'README.md': '# GitOps repository\n' } }]);
  for (const [repo, tags] of Object.entries(repos)) {
    bareRepository(
      path.join(work, `github/${repo}.git`),
      tags.map((tag) => ({
        files: { Dockerfile: 'FROM node:20-alpine\nCOPY server.js .\nCMD ["node", "server.js"]\n', 'server.js': `console.log(${JSON.stringify(tag)});\n` },
        tag,
      })),
    );
  }
  await admin.makeApiClient(CoreV1Api).patchNamespacedConfigMap({
    name: 'pds-workflow-config',
    namespace: WORKFLOWS,
    body: [{ op: 'replace', path: '/data/GITOPS_REPO', value: `file://${gitopsRepo}` }],
  });
  const registry = await startRegistry();
  const pds = await serviceAccountKubeConfig(admin, { namespace: 'pds', name: 'pds' }, work);
  const workflowAccount = await serviceAccountKubeConfig(admin, { namespace: WORKFLOWS, name: 'pds-workflow' }, work);
  const runner: RunnerOptions = {
    templates: loadWorkflowTemplates(),
    cluster: admin,
    namespace: WORKFLOWS,
    kubeconfigPath: workflowAccount.path,
    images: { 'alpine/k8s': { local: true }, 'alpine/git': { local: true }, ...BUILD_IMAGE_STUBS },
    gitConfig: { [`url.file://${work}/github/.insteadOf`]: 'https://github.com/' },
    stubEnv: { PDS_REGISTRY_LOG: path.join(work, 'registry.jsonl'), PDS_BUILD_LOG: path.join(work, 'builds.log'), PDS_REGISTRY_URL: registry.url },
    workDir: work,
  };
  const kubelet = await startKubelet({ kc: admin });
  const controller = await startArgoController({ kc: admin, namespace: WORKFLOWS, runner, kubelet });
  const argocd = await startArgoCd({ kc: admin, kubeconfigPath: adminPath, namespace: ARGOCD, gitopsRepo: `file://${gitopsRepo}`, workDir: work });
  const database = await createTestDatabase(inject('postgresUrl'));
  const platforms: KubernetesPlatform[] = [];
  const options = (overrides: Partial<KubernetesPlatformOptions> = {}): KubernetesPlatformOptions => ({
    kubeconfigPath: pds.path,
    dataDir: path.join(work, 'data'),
    databaseUrl: database.url,
    workflowNamespace: WORKFLOWS,
    argocdNamespace: ARGOCD,
    registry: REGISTRY,
    domain: DOMAIN,
    githubAppSlug: 'pds-platform',
    leaseNamespace: 'pds',
    reaperEveryMs: 3_600_000, // the tests call tick() themselves
    ...overrides,
  });
  return {
    admin,
    adminPath,
    pdsKubeconfig: pds.path,
    databaseUrl: database.url,
    work,
    gitopsRepo,
    controller,
    argocd,
    kubelet,
    registry,
    options,
    async platform(overrides) {
      const platform = await createKubernetesPlatform(options(overrides));
      platforms.push(platform);
      return platform;
    },
    async stop() {
      for (const p of platforms) await p.close().catch(() => {});
      // Leave the cluster as deploy/ made it: other suites (rbac) create this Lease themselves.
      await admin.makeApiClient(CoordinationV1Api).deleteNamespacedLease({ namespace: 'pds', name: REAPER_LEASE }).catch(() => {});
      await controller.stop();
      await argocd.stop();
      await kubelet.stop();
      await registry.close();
      await database.drop().catch(() => {});
      rmSync(work, { recursive: true, force: true });
    },
  };
}

