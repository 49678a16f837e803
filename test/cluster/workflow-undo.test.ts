/**
 * A deploy that does not succeed leaves no service half-rolled on Kubernetes (issue 22, "Done when"): pds under its
 * ServiceAccount submits deploy-service, the Argo Workflows stand-in runs its real steps and honours `spec.shutdown`
 * between and during them, and deploy-service's exit handler (pds-steps restore-service) aborts the release and reverts
 * the run's commit in the GitOps repository; Argo CD (stand-in) applies the revert and the Rollouts stand-in takes
 * the Rollout back to its stable template. A cancel (`Stop`) mid-canary and after a rolling deploy's commit, a failed
 * canary (automatic rollback), and `Terminate` (force), which runs no exit handler and says so.
 */
import { randomUUID } from 'node:crypto';
import { AppsV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubernetesPlatform } from '../../adapters/kubernetes/index.js';
import type { Rollout } from '../../adapters/kubernetes/rollouts.js';
import { operationContract, type OperationId } from '../../core/operations/index.js';
import type { AuditEntry } from '../../core/model.js';
import { recordedParameters } from '../../tools/operations/execute.js';
import { startRolloutsController, type RolloutsStandIn } from '../fixtures/argo-rollouts-controller.js';
import { startTestServer } from '../helpers/server.js';
import { fileAt } from './gitops.js';
import { ARGOCD, REGISTRY, startClusterHarness, until, type ClusterHarness } from './platform.js';

const TEAM = 'luna';
const CALLER = 'alice@example.com';
const REPO = 'luna/web';
let h: ClusterHarness;
let platform: KubernetesPlatform;
let rollouts: RolloutsStandIn;

/** Submit as the execute pipeline does (test/cluster/kubernetes-backend.test.ts). */
async function submit(operation: OperationId, input: Record<string, string>): Promise<string> {
  const name = `${operation}-${randomUUID().slice(0, 5)}`;
  const contract = operationContract(operation);
  const parameters = contract.parameters.parse(input) as never;
  const recorded = recordedParameters(contract, parameters);
  const audit: AuditEntry = {
    id: randomUUID(), timestamp: new Date().toISOString(), userId: CALLER, operation, parameters: recorded,
    workflowName: name, status: 'submitted', riskLevel: contract.riskLevel, message: '',
  };
  await platform.workflows.submit({ name, operation, parameters, recorded, userId: CALLER, audit } as never);
  return name;
}

const settled = (name: string) =>
  until(`${name} to settle`, async () => {
    const audit = await platform.audit.get(name);
    return audit && audit.status !== 'submitted' ? platform.workflows.get(name) : undefined;
  }, 120);

async function succeeded(operation: OperationId, input: Record<string, string>) {
  const run = await settled(await submit(operation, input));
  expect(run.phase, run.message).toBe('succeeded');
  return run;
}

const deploy = (tag: string) => ({ action: 'deploy', team_name: TEAM, component_name: 'web', dockerfile_repo: REPO, git_tag: tag });
const strategy = (s: Record<string, string>) => ({ action: 'update-config', team_name: TEAM, component_name: 'web', ...s });
/** The tag the committed Deployment names (`…:<tag>@sha256:…`). */
const gitTag = () => /:([^:@]+)@sha256:/.exec(parse(fileAt(h.gitopsRepo, `tenants/${TEAM}/web/deployment.yaml`)!).spec.template.spec.containers[0].image)![1];
/** The tag the live Deployment runs (what Argo CD applied). */
async function liveTag(): Promise<string | undefined> {
  const d = await h.admin.makeApiClient(AppsV1Api).readNamespacedDeployment({ namespace: TEAM, name: `${TEAM}-web` });
  return /:([^:@]+)@sha256:/.exec(d.spec?.template.spec?.containers[0]?.image ?? '')?.[1];
}
const readRollout = () =>
  h.admin.makeApiClient(CustomObjectsApi).getNamespacedCustomObject({ group: 'argoproj.io', version: 'v1alpha1', plural: 'rollouts', namespace: TEAM, name: `${TEAM}-web` }) as Promise<Rollout>;
const status = () => platform.backend.status(TEAM, 'web');
/** Argo CD's next poll of the GitOps repository (the stand-in applies on a change of the Application only). */
const argoCdPoll = () =>
  h.admin.makeApiClient(CustomObjectsApi).patchNamespacedCustomObject({
    group: 'argoproj.io', version: 'v1alpha1', plural: 'applications', namespace: ARGOCD, name: `${TEAM}-web`,
    body: [{ op: 'add', path: '/metadata/annotations/argocd.argoproj.io~1refresh', value: 'hard' }],
  });
const restoreNode = (name: string) => h.controller.runs.get(name)?.nodes.find((n) => n.path === 'onExit/restore/restore-service');

beforeAll(async () => {
  h = await startClusterHarness({ [REPO]: ['0.1.0', '0.2.0', '0.3.0', '0.4.0', '1.3.0'] });
  platform = await h.platform();
  // Tag 1.3.0's analysis fails, as an AnalysisRun over a 7.2% error rate would.
  rollouts = startRolloutsController({
    kc: h.admin,
    namespace: TEAM,
    analysis: (r) => (r.metadata?.annotations?.['pds.dev/canary-tag'] === '1.3.0' ? 'error rate 7.2% > 5%' : undefined),
  });
  await succeeded('create-tenant', { team_name: TEAM, members: 'bob' });
  await succeeded('deploy-service', { action: 'onboard', team_name: TEAM, component_name: 'web', git_tag: '0.1.0', dockerfile_repo: REPO, port: '8080' });
}, 300_000);

afterAll(async () => {
  await rollouts?.stop();
  await h?.stop();
});

describe.sequential('a deploy that does not succeed is undone (deploy-service onExit)', () => {
  it('cancel after the commit of a rolling deploy: Argo stops it, the exit handler reverts the commit, Argo CD applies it', async () => {
    h.controller.hold('deploy-service-', 'wait-rollout');
    let name: string;
    try {
      name = await submit('deploy-service', deploy('0.2.0'));
      // Held before wait-rollout: set-image has committed 0.2.0 and Argo CD, at its next poll, rolls it out.
      await until('the commit of 0.2.0', () => gitTag() === '0.2.0', 120);
      await argoCdPoll();
      await until('0.2.0 running', async () => (await liveTag()) === '0.2.0');
      await platform.workflows.cancel(name, { userId: 'bob', reason: 'wrong tag' });
    } finally {
      h.controller.release('deploy-service-');
    }
    const run = await settled(name);
    expect(run).toMatchObject({ phase: 'failed', message: 'cancelled by bob: wrong tag', cancelledBy: 'bob' });
    expect(run.steps.find((s) => s.name === 'wait-rollout')).toMatchObject({ status: 'failed', message: 'workflow shutdown with strategy:  Stop' });
    expect(run.steps.find((s) => s.name === 'record-tag')).toBeUndefined();
    expect(run.steps.find((s) => s.name === 'restore-service')).toMatchObject({ status: 'succeeded' });
    expect(restoreNode(name)?.log).toContain(`restored tenants/${TEAM}/web as it was before ${name}`);
    expect(gitTag()).toBe('0.1.0');
    await until('0.1.0 running again', async () => (await liveTag()) === '0.1.0');
    expect(await status()).toMatchObject({ argocd: { syncStatus: 'Synced', healthStatus: 'Healthy' }, service: { imageTag: '0.1.0' } });
  }, 300_000);

  it('a canary whose analysis fails: the deploy fails with the reason, Git is reverted, status stays Healthy on the stable tag saying what was rolled back', async () => {
    await succeeded('deploy-service', strategy({ strategy: 'canary', canary_steps: '10%:2s,50%:2s' }));
    await succeeded('deploy-service', deploy('0.2.0'));
    expect(gitTag()).toBe('0.2.0');
    const name = await submit('deploy-service', deploy('1.3.0'));
    const run = await settled(name);
    expect(run.phase).toBe('failed');
    // The automatic rollback's message, as before the exit handler existed.
    expect(run.message).toMatch(/^step wait-rollout failed: .*error rate 7\.2% > 5% at step 1 \(10%\); rolled back to 0\.2\.0$/);
    expect(run.steps.find((s) => s.name === 'restore-service')).toMatchObject({ status: 'succeeded' });
    expect(gitTag()).toBe('0.2.0');
    // The Rollout goes back to its stable template, Healthy; status keeps saying what was rolled back.
    await until('the Rollout Healthy on its stable template', async () => {
      const s = (await readRollout()).status;
      return s?.phase === 'Healthy' && s.stableRS === s.currentPodHash && !s.abort;
    });
    expect(await liveTag()).toBe('0.2.0');
    expect(await status()).toMatchObject({
      // In wait-rollout's words (the failure the exit handler was given in {{workflow.failures}}), as the sandbox says it.
      argocd: { healthStatus: 'Healthy', message: 'rolled back: 1.3.0 error rate 7.2% > 5% at step 1 (10%); all traffic is on 0.2.0 again' },
      service: { imageTag: '0.2.0' },
      rollout: { phase: 'Aborted', canaryWeight: 0, stableTag: '0.2.0', canaryTag: '1.3.0', workflowName: name },
    });
    // The next deploy that finishes clears it.
    await succeeded('deploy-service', deploy('0.3.0'));
    expect(await status()).toMatchObject({ argocd: { healthStatus: 'Healthy' }, service: { imageTag: '0.3.0' }, rollout: { phase: 'Healthy', canaryTag: '0.3.0' } });
  }, 300_000);

  it('cancel mid-canary (held at a pause): Rollout aborted, Git back on the previous tag, status Healthy on it with all traffic on stable', async () => {
    await succeeded('deploy-service', strategy({ strategy: 'canary', canary_steps: '10%:1h,50%:1h' }));
    const name = await submit('deploy-service', deploy('0.4.0'));
    await until('0.4.0 paused at 10%', async () => {
      const s = await status();
      return s.rollout?.workflowName === name && s.rollout.phase === 'Paused' && s.rollout.canaryWeight === 10;
    }, 120);
    await platform.workflows.cancel(name, { userId: 'bob' });
    const run = await settled(name);
    expect(run).toMatchObject({ phase: 'failed', message: 'cancelled by bob', cancelledBy: 'bob' });
    expect(run.steps.find((s) => s.name === 'wait-rollout')).toMatchObject({ status: 'failed' });
    expect(restoreNode(name)?.log).toContain(`aborted the release of ${TEAM}/web: all traffic back on the stable version`);
    expect(gitTag()).toBe('0.3.0');
    await until('the Rollout Healthy on its stable template', async () => {
      const s = (await readRollout()).status;
      return s?.phase === 'Healthy' && s.stableRS === s.currentPodHash && !s.abort;
    });
    expect(await liveTag()).toBe('0.3.0');
    expect(await status()).toMatchObject({
      argocd: { healthStatus: 'Healthy', message: `rolled back: 0.4.0 stopped with its workflow ${name}; all traffic is on 0.3.0 again` },
      service: { imageTag: '0.3.0' },
      rollout: { phase: 'Aborted', canaryWeight: 0, stableTag: '0.3.0', canaryTag: '0.4.0' },
    });
  }, 300_000);

  it('cancel with force (Terminate): no exit handler runs, the answer warns that the service may be left half-rolled', async () => {
    const name = await submit('deploy-service', deploy('0.4.0'));
    await until('0.4.0 paused at 10%', async () => {
      const s = await status();
      return s.rollout?.workflowName === name && s.rollout.phase === 'Paused';
    }, 120);
    const pds = await startTestServer({ PDS_BACKEND: 'kubernetes', PDS_REGISTRY: REGISTRY, PDS_DOMAIN: 'apps.test' }, { platform: await h.platform() });
    try {
      const answer = await pds.api(CALLER, 'POST', `/api/v1/workflows/${name}/cancel`, { force: true });
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      expect(answer.body.message).toContain('Warning: force terminates the workflow without its exit handler');
      expect(answer.body.message).toContain('the service may be left half-rolled');
    } finally {
      await pds.stop();
    }
    const run = await settled(name);
    expect(run).toMatchObject({ phase: 'failed', message: `cancelled by ${CALLER}` });
    expect(h.controller.runs.get(name)?.nodes.filter((n) => n.path.startsWith('onExit'))).toEqual([]);
    // Nothing undone: Git still names 0.4.0 and the Rollout is still paused part-way.
    expect(gitTag()).toBe('0.4.0');
    expect((await readRollout()).status).toMatchObject({ phase: 'Paused' });
  }, 300_000);
});
