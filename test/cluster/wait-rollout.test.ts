/**
 * The deploy's `wait-rollout` step (deploy/workflows/pds-steps.yaml) on its own, run by the local Argo runner as the
 * pds-workflow ServiceAccount (deploy/kubernetes/cluster/11-rbac-workflows.yaml, bound in the tenant as create-tenant
 * binds it), against a canary Rollout that the Rollouts controller stand-in (test/fixtures/argo-rollouts-controller.ts)
 * moves as Argo does. What set-image and Argo CD do before it is played here: the Deployment's image and the Rollout's
 * annotations. Issue 22: a tag deployed again after its release was aborted is retried, and fails fast for its reason
 * if still unhealthy; the stable tag while aborted succeeds at once; a release aborted by hand says who aborted it.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { AppsV1Api, CoreV1Api, CustomObjectsApi, RbacAuthorizationV1Api, type KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { kubernetesRollouts, readRollout } from '../../adapters/kubernetes/rollouts.js';
import { LocalArgo, type RunResult } from '../fixtures/argo-steps/runner.js';
import { startRolloutsController, type RolloutsStandIn } from '../fixtures/argo-rollouts-controller.js';
import { adminKubeConfig } from '../fixtures/kube-apiserver.js';
import { installDeploy, loadWorkflowTemplates, serviceAccountKubeConfig } from './deploy.js';
import { bareRepository } from './gitops.js';
import { isTimeout } from '../../adapters/kubernetes/kubeconfig.js';
import { createCanaryService, errorRateFailsFor, waitOnlyTemplate } from './rollout-fixtures.js';
import { until } from '../helpers/until.js';

const WORKFLOWS = 'pds-workflows';
const TEAM = `wr-${randomUUID().slice(0, 6)}`;
const APP = 'web';
const NAME = `${TEAM}-${APP}`;
const ROLLOUTS = { group: 'argoproj.io', version: 'v1alpha1', plural: 'rollouts', namespace: TEAM, name: NAME };
/** Long enough that only a skipped step finishes in time; a timeout would fail the test, not pass it. */
const TIMEOUT_SECONDS = 240;
/** Each test's bound: generous, since a loaded machine slows every step; a hang still ends it. */
const TEST_SECONDS = 180;
let admin: KubeConfig;
let pds: KubeConfig;
let work: string;
let runner: ConstructorParameters<typeof LocalArgo>[0];
let controller: RolloutsStandIn;

const image = (tag: string) => `registry.test/pds/${TEAM}/${APP}:${tag}`;

/** What set-image commits and Argo CD applies: the Rollout's tags and workflow, then the Deployment's image. */
async function release(tag: string, stable: string, workflow: string): Promise<void> {
  await admin.makeApiClient(CustomObjectsApi).patchNamespacedCustomObject({
    ...ROLLOUTS,
    body: [{ op: 'replace', path: '/metadata/annotations', value: { 'pds.dev/stable-tag': stable, 'pds.dev/canary-tag': tag, 'pds.dev/workflow': workflow } }],
  });
  await admin.makeApiClient(AppsV1Api).patchNamespacedDeployment({
    name: NAME, namespace: TEAM,
    body: [{ op: 'replace', path: '/spec/template/spec/containers/0/image', value: image(tag) }],
  });
}

/** Run wait-rollout as workflow `workflow` (its `{{workflow.name}}`). */
function waitRollout(workflow: string): Promise<RunResult> {
  return LocalArgo.run(runner, { name: workflow, uid: randomUUID(), annotations: {}, labels: {}, workflowTemplateRef: 'wait-only', parameters: [] });
}

/** The Rollout's status; `undefined` (ask again) when the loaded API server did not answer in time. */
const phaseOf = async () => (await readRollout(admin, TEAM, APP).catch((err: Error) => (isTimeout(err.cause) ? undefined : Promise.reject(err))))?.status;

/** End the pause the canary holds now, as if its duration had passed. */
async function endPause(): Promise<void> {
  // The patch is idempotent: one the loaded API server did not answer in time is sent again.
  await until('the pause to be ended', () =>
    admin
      .makeApiClient(CustomObjectsApi)
      .patchNamespacedCustomObjectStatus({
        ...ROLLOUTS,
        body: [{ op: 'add', path: '/status/pauseConditions', value: [{ reason: 'CanaryPauseStep', startTime: '2000-01-01T00:00:00Z' }] }],
      })
      .then(() => true, (err: Error) => (isTimeout(err) ? false : Promise.reject(err))),
  60);
}

beforeAll(async () => {
  admin = adminKubeConfig(inject('kubeconfigPath'));
  await installDeploy(admin);
  work = mkdtempSync(path.join(tmpdir(), 'pds-wait-rollout-'));
  // wait-rollout looks for the service's rollout.json in the GitOps repository (a rolling service has none).
  const gitopsRepo = bareRepository(path.join(work, 'gitops.git'), [{ files: { [`tenants/${TEAM}/${APP}/rollout.json`]: '{}\n' } }]);
  await admin.makeApiClient(CoreV1Api).patchNamespacedConfigMap({
    name: 'pds-workflow-config',
    namespace: WORKFLOWS,
    body: [{ op: 'replace', path: '/data/GITOPS_REPO', value: `file://${gitopsRepo}` }],
  });
  await admin.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: TEAM } } });
  // As create-tenant binds it (deploy/workflows/create-tenant.yaml).
  await admin.makeApiClient(RbacAuthorizationV1Api).createNamespacedRoleBinding({
    namespace: TEAM,
    body: {
      metadata: { name: 'pds-workflow' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'pds-workflow-tenant' },
      subjects: [{ kind: 'ServiceAccount', name: 'pds-workflow', namespace: WORKFLOWS }],
    },
  });
  // The Application wait-rollout asks Argo CD to refresh (no Argo CD here: the annotation stays).
  await admin.makeApiClient(CustomObjectsApi).createNamespacedCustomObject({
    group: 'argoproj.io', version: 'v1alpha1', plural: 'applications', namespace: 'argocd',
    body: { apiVersion: 'argoproj.io/v1alpha1', kind: 'Application', metadata: { name: NAME }, spec: { project: 'default', destination: { namespace: TEAM } } },
  });
  await createCanaryService(admin, { team: TEAM, app: APP, image: image('0.1.0') });
  controller = startRolloutsController({
    kc: admin,
    namespace: TEAM,
    measure: errorRateFailsFor('1.3.0'),
  });
  pds = (await serviceAccountKubeConfig(admin, { namespace: 'pds', name: 'pds' }, work)).kc;
  const workflowAccount = await serviceAccountKubeConfig(admin, { namespace: WORKFLOWS, name: 'pds-workflow' }, work);
  const waitOnly = waitOnlyTemplate(WORKFLOWS, TEAM, APP, TIMEOUT_SECONDS);
  const templates = loadWorkflowTemplates();
  runner = {
    templates: new Map([...templates, ['wait-only', waitOnly]]),
    cluster: admin,
    namespace: WORKFLOWS,
    kubeconfigPath: workflowAccount.path,
    images: { 'alpine/k8s': { local: true }, 'alpine/git': { local: true } },
    gitConfig: {},
    stubEnv: {},
    workDir: work,
  };
  await until('the first release healthy', async () => (await phaseOf())?.phase === 'Healthy', 60);
  // 0.2.0 becomes the stable release, promoted past its pauses.
  await release('0.2.0', '0.1.0', 'wf-good');
  await until('0.2.0 paused', async () => (await phaseOf())?.phase === 'Paused', 60);
  await kubernetesRollouts(pds, async () => true).promote(TEAM, APP, 'alice');
  await until('0.2.0 healthy', async () => (await phaseOf())?.phase === 'Healthy', 60);
}, 120_000);

afterAll(async () => {
  await controller?.stop();
  await admin?.makeApiClient(CustomObjectsApi).deleteNamespacedCustomObject({ group: 'argoproj.io', version: 'v1alpha1', plural: 'applications', namespace: 'argocd', name: NAME }).catch(() => undefined);
  await admin?.makeApiClient(CoreV1Api).deleteNamespace({ name: TEAM }).catch(() => undefined);
  if (work) rmSync(work, { recursive: true, force: true });
});

it('fails an unhealthy release at once with the reason its AnalysisRun measured', async () => {
  await release('1.3.0', '0.2.0', 'wf-bad');
  const first = waitRollout('wf-bad');
  await until('1.3.0 paused', async () => (await phaseOf())?.phase === 'Paused', 60);
  await endPause();
  const failed = await first;
  expect(failed.phase).toBe('Failed');
  expect(failed.message).toBe('main: Error (exit code 1): error rate 7.2% > 5% at step 1 (10%); rolled back to 0.2.0');
}, TEST_SECONDS * 1000);

it('retries the tag deployed again after its release was aborted (same pod template) and fails again for the reason, not the timeout', async () => {
  // The same tag: the same pod template, which Argo keeps aborted; the step retries it.
  expect(await phaseOf()).toMatchObject({ abort: true, phase: 'Degraded' });
  await release('1.3.0', '0.2.0', 'wf-bad-again');
  const again = waitRollout('wf-bad-again');
  await until('1.3.0 running again', async () => {
    const s = await phaseOf();
    return s?.abort !== true && s?.phase === 'Paused';
  }, 60);
  await endPause();
  const retried = await again;
  expect(retried.phase).toBe('Failed');
  expect(retried.message).toMatch(/retrying it \(kubectl argo rollouts retry\)\nerror rate 7\.2% > 5% at step 1 \(10%\); rolled back to 0\.2\.0$/);
}, TEST_SECONDS * 1000);

it('succeeds at once for the stable tag while a release is aborted (Argo skips the steps back to stable)', async () => {
  expect(await phaseOf()).toMatchObject({ abort: true, phase: 'Degraded' });
  await release('0.2.0', '0.2.0', 'wf-stable');
  const result = await waitRollout('wf-stable');
  expect(result.phase, result.message).toBe('Succeeded');
  const settled = await phaseOf();
  expect(settled).toMatchObject({ phase: 'Healthy', currentStepIndex: 6 });
  expect(settled?.abort).toBeFalsy();
}, TEST_SECONDS * 1000);

it('fails a release aborted by hand saying who aborted it and where', async () => {
  await release('0.4.0', '0.2.0', 'wf-held');
  const waiting = waitRollout('wf-held');
  await until('0.4.0 paused', async () => (await phaseOf())?.phase === 'Paused', 60);
  await kubernetesRollouts(pds, async () => true).abort(TEAM, APP, 'carol');
  const result = await waiting;
  expect(result.phase).toBe('Failed');
  expect(result.message).toBe('main: Error (exit code 1): aborted by carol at step 1 (10%); rolled back to 0.2.0');
}, TEST_SECONDS * 1000);
