/**
 * Status of a canary service while the revert of an aborted release is being applied (issue 22), against the test API
 * server, with the Rollout's status written by hand as Argo Rollouts writes it, so each step of the hand-over is held
 * as long as the test needs: deploy-service's exit handler has recorded the rollback on the Application
 * (`pds.dev/rolled-back`) and reverted the release in Git; Argo CD has applied the revert (the Deployment's pod
 * template and the Rollout's annotations are the release before's again); the Rollouts controller has not taken it up
 * yet (`status.workloadObservedGeneration` is still the aborted release's, its status still aborted). A workflow can
 * settle in that window, and status, read then, named the release before as the one rolled back
 * (test/contract/suite.ts "rollouts: canary …" failed 2 runs in 3 that way).
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { AppsV1Api, CoreV1Api, CustomObjectsApi, PatchStrategy, setHeaderOptions, type KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { silentLogger } from '../../core/logger.js';
import { kubernetesBackend, type KubernetesBackend } from '../../adapters/kubernetes/backend.js';
import { ClusterCache } from '../../adapters/kubernetes/informers.js';
import { readRolloutState } from '../../adapters/kubernetes/rollouts.js';
import { adminKubeConfig } from '../fixtures/kube-apiserver.js';
import { until } from '../helpers/until.js';
import { installDeploy, serviceAccountKubeConfig } from './deploy.js';
import { ARGOCD, WORKFLOWS } from './platform.js';
import { createCanaryService } from './rollout-fixtures.js';

const TEAM = `rs-${randomUUID().slice(0, 6)}`;
const APP = 'web';
const NAME = `${TEAM}-${APP}`;
const image = (tag: string) => `registry.test/pds/${TEAM}/${APP}:${tag}`;
const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const ROLLOUT = { group: 'argoproj.io', version: 'v1alpha1', plural: 'rollouts', namespace: TEAM, name: NAME };
const APPLICATION = { group: 'argoproj.io', version: 'v1alpha1', plural: 'applications', namespace: ARGOCD, name: NAME };
const RECORD = { workflow: 'wf-bad', canaryTag: '1.3.0', stableTag: '0.2.0', message: 'error rate 7.2% > 5% at step 1 (10%)' };

let admin: KubeConfig;
let cache: ClusterCache;
let backend: KubernetesBackend;
let work: string;

/** What set-image commits and Argo CD applies, in Argo CD's order: the Deployment's image, then the Rollout's annotations. */
async function apply(tag: string, stable: string, workflow: string): Promise<number> {
  const deployment = await admin.makeApiClient(AppsV1Api).patchNamespacedDeployment({
    name: NAME, namespace: TEAM, body: [{ op: 'replace', path: '/spec/template/spec/containers/0/image', value: image(tag) }],
  });
  await admin.makeApiClient(CustomObjectsApi).patchNamespacedCustomObject({
    ...ROLLOUT, body: [{ op: 'replace', path: '/metadata/annotations', value: { 'pds.dev/stable-tag': stable, 'pds.dev/canary-tag': tag, 'pds.dev/workflow': workflow } }],
  });
  return deployment.metadata!.generation!;
}

/** The Rollout's status as the controller writes it, having acted on the Deployment's generation `observed`. */
async function controllerWrites(observed: number, status: Record<string, unknown>): Promise<void> {
  const custom = admin.makeApiClient(CustomObjectsApi);
  const rollout = (await custom.getNamespacedCustomObject(ROLLOUT)) as { metadata: { generation: number } };
  await custom.patchNamespacedCustomObjectStatus(
    { ...ROLLOUT, body: { status: { ...status, observedGeneration: String(rollout.metadata.generation), workloadObservedGeneration: String(observed) } } },
    merge,
  );
}

beforeAll(async () => {
  admin = adminKubeConfig(inject('kubeconfigPath'));
  await installDeploy(admin);
  work = mkdtempSync(path.join(tmpdir(), 'pds-rollout-status-'));
  const pds = (await serviceAccountKubeConfig(admin, { namespace: 'pds', name: 'pds' }, work)).kc;
  await admin.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: TEAM } } });
  await createCanaryService(admin, { team: TEAM, app: APP, image: image('0.2.0') });
  // The service's Application as onboarding and the last good deploy's record-tag leave it.
  await admin.makeApiClient(CustomObjectsApi).createNamespacedCustomObject({
    ...APPLICATION,
    body: {
      apiVersion: 'argoproj.io/v1alpha1', kind: 'Application',
      metadata: { name: NAME, labels: { 'pds.dev/tenant': TEAM, 'pds.dev/service': APP, 'pds.dev/managed-by': 'pds' }, annotations: { 'pds.dev/image-tag': '0.2.0', 'pds.dev/rolled-back': '' } },
      spec: { project: TEAM, source: { repoURL: 'file:///gitops', path: `tenants/${TEAM}/${APP}` }, destination: { namespace: TEAM, server: 'https://kubernetes.default.svc' } },
    },
  });
  cache = new ClusterCache(pds, { workflows: WORKFLOWS, argocd: ARGOCD }, silentLogger);
  await cache.waitForSync(30_000);
  // As createKubernetesPlatform wires it (adapters/kubernetes/index.ts), for a service that has a Rollout.
  backend = kubernetesBackend({ cache, argocdNamespace: ARGOCD, logs: { read: async () => ({ lines: [], note: '' }) }, rollout: (team, app) => readRolloutState(pds, team, app) });
}, 120_000);

afterAll(async () => {
  await cache?.stop();
  await admin?.makeApiClient(CustomObjectsApi).deleteNamespacedCustomObject(APPLICATION).catch(() => undefined);
  await admin?.makeApiClient(CoreV1Api).deleteNamespace({ name: TEAM }).catch(() => undefined);
  if (work) rmSync(work, { recursive: true, force: true });
});

it('status names the rolled-back release while its revert is applied and the Rollouts controller has not taken it up yet', async () => {
  // 0.2.0 is live (wf-good, over 0.1.0); then wf-bad's 1.3.0 fails its analysis at step 1 and the controller aborts it.
  const good = await apply('0.2.0', '0.1.0', 'wf-good');
  await controllerWrites(good, { phase: 'Healthy', stableRS: 'h-good', currentPodHash: 'h-good', currentStepIndex: 6, canary: { weights: { canary: { weight: 100 } } } });
  const bad = await apply('1.3.0', '0.2.0', 'wf-bad');
  await controllerWrites(bad, {
    phase: 'Degraded', abort: true, currentPodHash: 'h-bad', currentStepIndex: 0, abortedAt: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
    message: 'RolloutAborted: Rollout aborted update to revision 2: Step-based analysis phase error/failed', canary: { weights: { canary: { weight: 0 } } },
  });
  expect(await readRolloutState(admin, TEAM, APP)).toMatchObject({ observed: true, view: { phase: 'Aborted', stableTag: '0.2.0', canaryTag: '1.3.0', workflowName: 'wf-bad' } });
  expect((await backend.status(TEAM, APP)).rollout).toMatchObject({ phase: 'Aborted', canaryWeight: 0, stableTag: '0.2.0', canaryTag: '1.3.0' });

  // The exit handler records the rollback on the Application and reverts wf-bad's commit; the workflow settles.
  await admin.makeApiClient(CustomObjectsApi).patchNamespacedCustomObject(
    { ...APPLICATION, body: { metadata: { annotations: { 'pds.dev/rolled-back': JSON.stringify(RECORD) } } } },
    merge,
  );
  await until('the cache to hold the rollback record', () => cache.applications.get(NAME, ARGOCD)?.metadata?.annotations?.['pds.dev/rolled-back'] === JSON.stringify(RECORD), 30);
  // Argo CD applies the revert: 0.2.0's pod template and wf-good's annotations, while the status is still wf-bad's abort.
  const reverted = await apply('0.2.0', '0.1.0', 'wf-good');
  expect(await readRolloutState(admin, TEAM, APP)).toMatchObject({ observed: false, view: { phase: 'Aborted', stableTag: '0.1.0', canaryTag: '0.2.0' } });
  const expected = {
    argocd: { healthStatus: 'Healthy', message: 'rolled back: 1.3.0 error rate 7.2% > 5% at step 1 (10%); all traffic is on 0.2.0 again' },
    service: { imageTag: '0.2.0' },
    rollout: { phase: 'Aborted', canaryWeight: 0, stableTag: '0.2.0', canaryTag: '1.3.0', workflowName: 'wf-bad' },
  };
  expect(await backend.status(TEAM, APP)).toMatchObject(expected);

  // The controller takes the revert up: back on the stable ReplicaSet, Healthy; status says the same.
  await controllerWrites(reverted, { phase: 'Healthy', abort: null, abortedAt: null, message: null, currentPodHash: 'h-good', currentStepIndex: 6 });
  expect(await readRolloutState(admin, TEAM, APP)).toMatchObject({ observed: true, view: { phase: 'Healthy' } });
  expect(await backend.status(TEAM, APP)).toMatchObject(expected);
});
