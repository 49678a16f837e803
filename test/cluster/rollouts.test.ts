/**
 * Rollouts on Kubernetes (issue 22), against the test API server with the Rollout CRD and a stand-in Rollouts
 * controller (test/fixtures/argo-rollouts-controller.ts) that moves status as the real one writes it: pds, under its
 * own ServiceAccount (deploy/kubernetes/cluster/10-rbac-pds.yaml), reads a canary's progress as the `rollout` view and
 * its canary steps with their analysis results (AnalysisRuns), promotes a paused release, aborts the next (saying who
 * did), and sees a failed analysis abort one by itself, with the reason and step its AnalysisRun gives.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { AppsV1Api, CoreV1Api, CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { kubernetesRollouts, readCanaryWorkflowSteps, readRollout, readRolloutState, rolloutView } from '../../adapters/kubernetes/rollouts.js';
import type { RolloutView } from '../../core/rollouts.js';
import { startRolloutsController, type RolloutsStandIn } from '../fixtures/argo-rollouts-controller.js';
import { adminKubeConfig } from '../fixtures/kube-apiserver.js';
import { installDeploy, serviceAccountKubeConfig } from './deploy.js';
import { createCanaryService, errorRateFailsFor } from './rollout-fixtures.js';

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

/** End the pause the canary holds now, as if its duration had passed. */
async function endPause(): Promise<void> {
  await admin.makeApiClient(CustomObjectsApi).patchNamespacedCustomObjectStatus(
    { group: 'argoproj.io', version: 'v1alpha1', plural: 'rollouts', namespace: TEAM, name: NAME, body: [{ op: 'add', path: '/status/pauseConditions', value: [{ reason: 'CanaryPauseStep', startTime: '2000-01-01T00:00:00Z' }] }] },
  );
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
  // As write-service-manifests and write-rollout leave them, with the health probe on the canary Service (the AnalysisRuns
  // copy its metrics).
  await createCanaryService(admin, { team: TEAM, app: APP, image: image('0.1.0'), gatewayApi: true, analysisTemplate: true });
  // Tag 1.3.0 fails its analysis with a 7.2% error rate; every other tag measures 0.4%.
  controller = startRolloutsController({
    kc: admin,
    namespace: TEAM,
    measure: errorRateFailsFor('1.3.0'),
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

  // Who aborted it is on the Rollout, for the deploy's wait-rollout step and status to say.
  expect((await readRollout(pds, TEAM, APP))?.metadata?.annotations).toMatchObject({ 'pds.dev/aborted-by': 'alice', 'pds.dev/aborted-workflow': 'wf-2' });
  expect((await readRolloutState(pds, TEAM, APP))?.view).toMatchObject({ phase: 'Aborted', message: 'aborted by alice at step 1 (10%)' });
  expect(await readCanaryWorkflowSteps(pds, TEAM, APP, 'wf-2', '2000-01-01T00:00:00Z')).toMatchObject([
    { name: 'canary step 1/2: 10% of traffic to 0.3.0 for 1h, then analysis', status: 'failed', message: 'aborted by alice at step 1 (10%); rolled back to 0.2.0' },
    { name: 'canary step 2/2: 50% of traffic to 0.3.0 for 1h, then analysis', status: 'pending' },
  ]);

  // Past its pauses, the release meets the failing analysis at step 1 and aborts by itself.
  await release('1.3.0', '0.2.0', 'wf-bad');
  await until('1.3.0 paused', view, (v) => v.phase === 'Paused' && v.canaryTag === '1.3.0');
  await endPause();
  const failed = await until('the analysis abort', view, (v) => v.phase === 'Aborted' && v.canaryTag === '1.3.0');
  // As Argo writes it; pds reads the reason from the failed AnalysisRun's measurements.
  expect(failed.message).toMatch(/^RolloutAborted: Rollout aborted update to revision \d+: Step-based analysis phase error\/failed: Metric "error-rate" assessed Failed/);
  // The analysis after the 10% weight is still canary step 1 (write-rollout writes setWeight, pause, analysis per step).
  expect(failed).toMatchObject({ step: 1, steps: 2 });
  expect((await readRolloutState(pds, TEAM, APP))?.view).toMatchObject({ phase: 'Aborted', message: 'error rate 7.2% > 5% at step 1 (10%)' });
  const rolledBack = await readCanaryWorkflowSteps(pds, TEAM, APP, 'wf-bad', '2000-01-01T00:00:00Z');
  expect(rolledBack).toMatchObject([{ status: 'failed', message: 'error rate 7.2% > 5% at step 1 (10%); rolled back to 0.2.0' }, { status: 'pending' }]);

  // The same pod template stays aborted, as in Argo; a retry (status.abort false, as `kubectl argo rollouts retry`)
  // starts it again from its first step, and it aborts again for the same reason.
  await release('1.3.0', '0.2.0', 'wf-bad-again');
  // AnalysisRuns are stamped to the second: begin in a later second than the failed run's, so only the new ones count.
  const failedSecond = Math.floor(Date.now() / 1000);
  while (Math.floor(Date.now() / 1000) <= failedSecond) await new Promise((r) => setTimeout(r, 50));
  const retryAt = new Date().toISOString();
  expect((await readRollout(pds, TEAM, APP))?.status).toMatchObject({ abort: true, phase: 'Degraded' });
  // The workflow began at retryAt; an abort stamped in that second reads as the attempt before (abortedAt has whole
  // seconds), so the retry comes in the next one, as a real deploy's does, many seconds later.
  while (Math.floor(Date.now() / 1000) <= Math.floor(Date.parse(retryAt) / 1000)) await new Promise((r) => setTimeout(r, 50));
  await admin.makeApiClient(CustomObjectsApi).patchNamespacedCustomObjectStatus(
    { group: 'argoproj.io', version: 'v1alpha1', plural: 'rollouts', namespace: TEAM, name: NAME, body: [{ op: 'replace', path: '/status/abort', value: false }] },
  );
  await until('1.3.0 paused again', view, (v) => v.phase === 'Paused' && v.canaryTag === '1.3.0' && v.workflowName === 'wf-bad-again');
  expect(await readCanaryWorkflowSteps(pds, TEAM, APP, 'wf-bad-again', retryAt)).toMatchObject([{ status: 'running', message: '10% of traffic to 1.3.0, paused' }, { status: 'pending' }]);
  await endPause();
  await until('the second analysis abort', view, (v) => v.phase === 'Aborted');
  expect(await readCanaryWorkflowSteps(pds, TEAM, APP, 'wf-bad-again', retryAt)).toMatchObject([{ status: 'failed', message: 'error rate 7.2% > 5% at step 1 (10%); rolled back to 0.2.0' }, { status: 'pending' }]);

  // The stable tag while aborted: back to the stable ReplicaSet, Argo skips every step — Healthy with 1h pauses.
  await release('0.2.0', '0.2.0', 'wf-stable');
  expect(await until('the stable release', view, (v) => v.phase === 'Healthy' && v.workflowName === 'wf-stable')).toMatchObject({ canaryWeight: 0, canaryTag: '0.2.0' });
  expect(await readCanaryWorkflowSteps(pds, TEAM, APP, 'wf-stable', '2000-01-01T00:00:00Z')).toMatchObject([{ status: 'skipped' }, { status: 'skipped' }]);
});

it('lists a canary release\'s steps with their analysis results as they pass', async () => {
  await release('0.5.0', '0.2.0', 'wf-steps');
  await until('0.5.0 paused', view, (v) => v.phase === 'Paused' && v.canaryTag === '0.5.0');
  await endPause();
  await until('0.5.0 at 50%', view, (v) => v.phase === 'Paused' && v.canaryWeight === 50);
  expect(await readCanaryWorkflowSteps(pds, TEAM, APP, 'wf-steps', '2000-01-01T00:00:00Z')).toEqual([
    { name: 'canary step 1/2: 10% of traffic to 0.5.0 for 1h, then analysis', status: 'succeeded', message: 'analysis passed: probe /healthz ok, error rate 0.4% ≤ 5%' },
    { name: 'canary step 2/2: 50% of traffic to 0.5.0 for 1h, then analysis', status: 'running', message: '50% of traffic to 0.5.0, paused' },
  ]);
  // Another workflow's release has none of them.
  expect(await readCanaryWorkflowSteps(pds, TEAM, APP, 'wf-1', '2000-01-01T00:00:00Z')).toEqual([]);
  await endPause();
  await until('0.5.0 healthy', view, (v) => v.phase === 'Healthy' && v.canaryTag === '0.5.0');
  expect((await readCanaryWorkflowSteps(pds, TEAM, APP, 'wf-steps', '2000-01-01T00:00:00Z')).map((s) => s.status)).toEqual(['succeeded', 'succeeded']);
});
