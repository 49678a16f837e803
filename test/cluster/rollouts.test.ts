/**
 * Rollouts on Kubernetes (issue 22), against the test API server with the Rollout CRD and a stand-in Rollouts
 * controller (test/fixtures/argo-rollouts-controller.ts) that moves status as the real one writes it: pds, under its
 * own ServiceAccount (deploy/kubernetes/cluster/10-rbac-pds.yaml), reads a canary's progress as the `rollout` view,
 * promotes a paused release, aborts the next, and sees a failed analysis abort one by itself.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { AppsV1Api, CoreV1Api, CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { kubernetesRollouts, readRollout, rolloutView } from '../../adapters/kubernetes/rollouts.js';
import type { RolloutView } from '../../core/rollouts.js';
import { startRolloutsController, type RolloutsStandIn } from '../fixtures/argo-rollouts-controller.js';
import { adminKubeConfig } from '../fixtures/kube-apiserver.js';
import { installDeploy, serviceAccountKubeConfig } from './deploy.js';

const TEAM = `ro-${randomUUID().slice(0, 6)}`;
const APP = 'web';
const NAME = `${TEAM}-${APP}`;
let admin: KubeConfig;
let pds: KubeConfig;
let controller: RolloutsStandIn;
let work: string;

const image = (tag: string) => `registry.test/pds/${TEAM}/${APP}:${tag}`;

async function view(): Promise<RolloutView | undefined> {
  const found = await readRollout(pds, TEAM, APP);
  return found && rolloutView(found);
}

async function until(what: string, probe: () => Promise<RolloutView | undefined>, check: (v: RolloutView) => boolean): Promise<RolloutView> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const v = await probe();
    if (v && check(v)) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** What set-image commits and Argo CD applies: the Deployment's image, and the Rollout's stable tag and workflow. */
async function release(tag: string, stable: string, workflow: string): Promise<void> {
  await admin.makeApiClient(CustomObjectsApi).patchNamespacedCustomObject({
    group: 'argoproj.io', version: 'v1alpha1', plural: 'rollouts', namespace: TEAM, name: NAME,
    body: [{ op: 'replace', path: '/metadata/annotations', value: { 'pds.dev/stable-tag': stable, 'pds.dev/canary-tag': tag, 'pds.dev/workflow': workflow } }],
  });
  await admin.makeApiClient(AppsV1Api).patchNamespacedDeployment({
    name: NAME, namespace: TEAM,
    body: [{ op: 'replace', path: '/spec/template/spec/containers/0/image', value: image(tag) }],
  });
}

beforeAll(async () => {
  admin = adminKubeConfig(inject('kubeconfigPath'));
  await installDeploy(admin);
  work = mkdtempSync(path.join(tmpdir(), 'pds-rollouts-'));
  pds = (await serviceAccountKubeConfig(admin, { namespace: 'pds', name: 'pds' }, work)).kc;
  await admin.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: TEAM } } });
  const labels = { 'pds.dev/tenant': TEAM, 'pds.dev/service': APP };
  // As write-service-manifests and write-rollout leave them: the Deployment holds the pod template at no replicas.
  await admin.makeApiClient(AppsV1Api).createNamespacedDeployment({
    namespace: TEAM,
    body: {
      metadata: { name: NAME, labels },
      spec: { replicas: 0, selector: { matchLabels: labels }, template: { metadata: { labels }, spec: { containers: [{ name: 'app', image: image('0.1.0') }] } } },
    },
  });
  const analysis = { analysis: { templates: [{ templateName: NAME }] } };
  await admin.makeApiClient(CustomObjectsApi).createNamespacedCustomObject({
    group: 'argoproj.io', version: 'v1alpha1', plural: 'rollouts', namespace: TEAM,
    body: {
      apiVersion: 'argoproj.io/v1alpha1', kind: 'Rollout',
      metadata: { name: NAME, labels, annotations: { 'pds.dev/stable-tag': '', 'pds.dev/workflow': '' } },
      spec: {
        replicas: 1, selector: { matchLabels: labels },
        workloadRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: NAME, scaleDown: 'onsuccess' },
        strategy: {
          canary: {
            stableService: NAME, canaryService: `${NAME}-canary`,
            trafficRouting: { plugins: { 'argoproj-labs/gatewayAPI': { httpRoute: NAME, namespace: TEAM } } },
            steps: [{ setWeight: 10 }, { pause: { duration: '1h' } }, analysis, { setWeight: 50 }, { pause: { duration: '1h' } }, analysis],
          },
        },
      },
    },
  });
  // Tag 1.3.0 fails its analysis, as an AnalysisRun over a 7.2% error rate would; pauses of tag 1.3.0 pass at once.
  controller = startRolloutsController({
    kc: admin,
    namespace: TEAM,
    analysis: (r) => (r.metadata?.annotations?.['pds.dev/workflow'] === 'wf-bad' ? 'Metric "error-rate" assessed Failed due to failed (1) > failureLimit (0)' : undefined),
    pauseScale: 1,
  });
}, 120_000);

afterAll(async () => {
  await controller?.stop();
  await admin?.makeApiClient(CoreV1Api).deleteNamespace({ name: TEAM }).catch(() => undefined);
  if (work) rmSync(work, { recursive: true, force: true });
});

it('reads a paused canary, promotes it, aborts the next release, and sees an analysis abort one by itself', async () => {
  const control = kubernetesRollouts(pds, async () => true);
  await until('the first release healthy', view, (v) => v.phase === 'Healthy');
  await expect(control.promote(TEAM, APP, 'alice')).rejects.toMatchObject({ code: 'CONFLICT' });

  await release('0.2.0', '0.1.0', 'wf-1');
  const paused = await until('10% paused', view, (v) => v.phase === 'Paused' && v.canaryTag === '0.2.0');
  expect(paused).toMatchObject({ strategy: 'canary', step: 1, steps: 2, canaryWeight: 10, stableTag: '0.1.0', canaryTag: '0.2.0', workflowName: 'wf-1' });
  expect(Date.parse(paused.pausedUntil!) - Date.now()).toBeGreaterThan(50 * 60_000);
  // An approved promote acts only on the release it was asked for (issue 22 item 4); reading changes nothing.
  expect(await control.current(TEAM, APP)).toMatchObject({ phase: 'Paused', workflowName: 'wf-1' });
  await expect(control.promote(TEAM, APP, 'alice', 'wf-0')).rejects.toMatchObject({ code: 'CONFLICT', message: expect.stringContaining('(wf-0) has ended') });
  expect(await view()).toMatchObject({ phase: 'Paused', canaryWeight: 10 });
  expect(await control.promote(TEAM, APP, 'alice', 'wf-1')).toMatchObject({ phase: 'Paused', canaryTag: '0.2.0' });
  expect(await until('promoted', view, (v) => v.phase === 'Healthy')).toMatchObject({ canaryWeight: 100 });

  await release('0.3.0', '0.2.0', 'wf-2');
  await until('0.3.0 paused', view, (v) => v.phase === 'Paused' && v.canaryTag === '0.3.0');
  await control.abort(TEAM, APP, 'alice');
  // Aborted from the moment pds asks; the controller then takes the weight back to 0.
  expect(await until('aborted', view, (v) => v.phase === 'Aborted' && v.canaryWeight === 0)).toMatchObject({ stableTag: '0.2.0', canaryTag: '0.3.0' });
  await expect(control.abort(TEAM, APP, 'alice')).rejects.toMatchObject({ code: 'CONFLICT' });

  // Promoted past its pauses, the release meets the failing analysis at step 1 and aborts by itself.
  await release('1.3.0', '0.2.0', 'wf-bad');
  await until('1.3.0 paused', view, (v) => v.phase === 'Paused' && v.canaryTag === '1.3.0');
  await admin.makeApiClient(CustomObjectsApi).patchNamespacedCustomObjectStatus(
    { group: 'argoproj.io', version: 'v1alpha1', plural: 'rollouts', namespace: TEAM, name: NAME, body: [{ op: 'add', path: '/status/pauseConditions', value: [{ reason: 'CanaryPauseStep', startTime: '2000-01-01T00:00:00Z' }] }] },
  );
  const failed = await until('the analysis abort', view, (v) => v.phase === 'Aborted' && v.canaryTag === '1.3.0');
  expect(failed.message).toMatch(/^RolloutAborted: Metric "error-rate" assessed Failed/);
  // The analysis after the 10% weight is still canary step 1 (write-rollout writes setWeight, pause, analysis per step).
  expect(failed).toMatchObject({ step: 1, steps: 2 });
});
