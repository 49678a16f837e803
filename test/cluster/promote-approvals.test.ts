/**
 * A promote held for approval on PDS_BACKEND=kubernetes (issue 22 item 4): a started pds on the kubernetes backend
 * under its own ServiceAccount (test/cluster/platform.ts), records in PostgreSQL, a tenant made by create-tenant
 * through the Argo stand-in, and in it a canary Rollout moved by the stand-in Rollouts controller
 * (test/fixtures/argo-rollouts-controller.ts). Under a policy asking approval for deploy-service, a promote leaves the
 * paused Rollout as it is; the second person's approval patches it as today's promote does (`status.promoteFull`), and
 * the controller takes it to 100%.
 */
import { AppsV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { readRollout, rolloutView, type Rollout } from '../../adapters/kubernetes/rollouts.js';
import { silentLogger } from '../../core/logger.js';
import type { RolloutView } from '../../core/rollouts.js';
import { startRolloutsController, type RolloutsStandIn } from '../fixtures/argo-rollouts-controller.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { startClusterHarness, until, type ClusterHarness } from './platform.js';

const TEAM = 'gated';
const APP = 'web';
const NAME = `${TEAM}-${APP}`;
const RELEASE = 'deploy-service-rel42';
const rollouts = { group: 'argoproj.io', version: 'v1alpha1', plural: 'rollouts', namespace: TEAM };
const image = (tag: string) => `registry.test/pds/src/acme/web:${tag}`;
let h: ClusterHarness;
let pds: TestServer;
let controller: RolloutsStandIn | undefined;

const view = async (): Promise<RolloutView | undefined> => {
  const found = await readRollout(h.admin, TEAM, APP);
  return found && rolloutView(found);
};

beforeAll(async () => {
  h = await startClusterHarness({});
  const platform = await h.platform({ log: silentLogger });
  pds = await startTestServer({ PDS_BACKEND: 'kubernetes', PDS_REGISTRY: 'registry.test/pds' }, { platform });
  const created = await pds.api('root', 'POST', '/api/v1/operations/create-tenant/execute', {
    team_name: TEAM, display_name: 'Gated', description: 'x', contact_email: 'gated@example.com', admins: 'alice', members: 'carol', cpu: '1', memory: '1Gi', pods: '5',
  });
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  await until('the tenant', async () => (await pds.api('root', 'GET', `/api/v1/workflows/${created.body.workflowName}`)).body.audit?.status === 'succeeded', 120);

  // As write-service-manifests, write-rollout and set-image leave a canary service: the Deployment holds the pod
  // template at no replicas; the Rollout names the release's workflow and its tags.
  const labels = { 'pds.dev/tenant': TEAM, 'pds.dev/service': APP };
  await h.admin.makeApiClient(AppsV1Api).createNamespacedDeployment({
    namespace: TEAM,
    body: { metadata: { name: NAME, labels }, spec: { replicas: 0, selector: { matchLabels: labels }, template: { metadata: { labels }, spec: { containers: [{ name: 'app', image: image('0.1.0') }] } } } },
  });
  const rollout: Rollout & Record<string, unknown> = {
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'Rollout',
    metadata: { name: NAME, labels, annotations: { 'pds.dev/stable-tag': '', 'pds.dev/workflow': 'deploy-service-first' } },
    spec: {
      replicas: 1,
      selector: { matchLabels: labels },
      workloadRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: NAME, scaleDown: 'onsuccess' },
      strategy: {
        canary: {
          stableService: NAME,
          canaryService: `${NAME}-canary`,
          trafficRouting: { plugins: { 'argoproj-labs/gatewayAPI': { httpRoute: NAME, namespace: TEAM } } },
          steps: [{ setWeight: 10 }, { pause: { duration: '1h' } }, { setWeight: 50 }, { pause: { duration: '1h' } }],
        },
      },
    } as never,
  };
  await h.admin.makeApiClient(CustomObjectsApi).createNamespacedCustomObject({ ...rollouts, body: rollout });
  controller = startRolloutsController({ kc: h.admin, namespace: TEAM, pauseScale: 1 });
  await until('the first release healthy', async () => (await view())?.phase === 'Healthy');
  // The next release, 0.2.0, as set-image commits it and Argo CD applies it.
  await h.admin.makeApiClient(CustomObjectsApi).patchNamespacedCustomObject({
    ...rollouts,
    name: NAME,
    body: [{ op: 'replace', path: '/metadata/annotations', value: { 'pds.dev/stable-tag': '0.1.0', 'pds.dev/canary-tag': '0.2.0', 'pds.dev/workflow': RELEASE } }],
  });
  await h.admin.makeApiClient(AppsV1Api).patchNamespacedDeployment({
    name: NAME,
    namespace: TEAM,
    body: [{ op: 'replace', path: '/spec/template/spec/containers/0/image', value: image('0.2.0') }],
  });
  await until('0.2.0 paused at 10%', async () => {
    const v = await view();
    return v?.phase === 'Paused' && v.canaryTag === '0.2.0';
  });
}, 240_000);

afterAll(async () => {
  await controller?.stop();
  await pds?.stop();
  await h?.stop();
});

it('an approved promote patches the Rollout as a promote does; until then it stays paused', async () => {
  const policy = { approvals: { operations: ['deploy-service'], required: 1, approvers: ['bob'], expiresAfter: '1h' } };
  expect((await pds.api('root', 'PUT', `/api/v1/tenants/${TEAM}/policy`, policy)).status).toBe(200);

  const asked = await pds.api('carol', 'POST', `/api/v1/rollouts/${TEAM}/${APP}/promote`);
  expect(asked.status, JSON.stringify(asked.body)).toBe(200);
  expect(asked.body).toMatchObject({ workflowName: RELEASE, rollout: { canaryTag: '0.2.0', phase: 'Paused' }, approval: { state: 'pending', approvers: ['bob'] } });
  const id = asked.body.approval.id as string;
  const untouched = (await readRollout(h.admin, TEAM, APP))!;
  expect(untouched.status?.promoteFull).toBeFalsy();
  expect(rolloutView(untouched)).toMatchObject({ phase: 'Paused', canaryWeight: 10 });
  expect((await pds.api('carol', 'POST', `/api/v1/approvals/${id}/approve`, {})).status).toBe(403);

  const approved = await pds.api('bob', 'POST', `/api/v1/approvals/${id}/approve`, {});
  expect(approved.status, JSON.stringify(approved.body)).toBe(200);
  expect(approved.body.approval).toMatchObject({ subject: 'promote', state: 'approved', outcome: expect.stringMatching(/^promoted: 0\.2\.0/) });
  // The controller takes the promoted release to 100% well before its 1h pause would end.
  expect(await until('promoted to 100%', async () => {
    const v = await view();
    return v?.phase === 'Healthy' && v;
  })).toMatchObject({ canaryTag: '0.2.0', canaryWeight: 100 });
  const feed = (await pds.api('alice', 'GET', `/api/v1/tenants/${TEAM}/events`)).body.items;
  expect(feed.find((e: any) => e.type === 'rollout.promoted')).toMatchObject({ userId: 'carol', data: { workflowName: RELEASE, approvedBy: ['bob'], approvalId: id } });
}, 120_000);
