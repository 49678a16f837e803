/**
 * The API contract suite (test/contract/suite.ts) on PDS_BACKEND=kubernetes: a started pds whose platform is the
 * kubernetes backend under pds's ServiceAccount on the test API server (test/cluster/platform.ts: the Argo Workflows
 * stand-in runs the WorkflowTemplates' steps, Argo CD applies the GitOps repository, a kubelet serves logs), records
 * in PostgreSQL, repositories from the GitHub App (the wire-format GitHub fixture).
 */
import { generateKeyPairSync } from 'node:crypto';
import { AppsV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { silentLogger } from '../../core/logger.js';
import { describeContract, REPO, TAGS, TEAM } from '../contract/suite.js';
import { startRolloutsController } from '../fixtures/argo-rollouts-controller.js';
import { startGitHubFixture } from '../fixtures/github-api.js';
import { startGitHubActionsIssuer } from '../fixtures/github-actions-oidc.js';
import { createWriteLimiter } from '../../rest/ratelimit.js';
import { startTestServer } from '../helpers/server.js';
import { ARGOCD, startClusterHarness } from './platform.js';

describeContract('kubernetes', async () => {
  const harness = await startClusterHarness({ [REPO]: [...TAGS, '0.2.0', '1.3.0', '0.3.0', '0.4.0', '0.5.0'] });
  const github = await startGitHubFixture();
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  github.setApp('4242', publicKey.export({ type: 'spki', format: 'pem' }).toString());
  github.addInstallation(11, REPO.split('/')[0]!, [{ fullName: REPO, files: { Dockerfile: 'FROM node:20-alpine\n' } }]);
  // Repositories belong to those who can push to them (issue 17 item 2): the suite's tenant admin registers REPO.
  github.setPermission(REPO, 'alice', 'write');
  let offset = 0;
  const platform = await harness.platform({
    log: silentLogger,
    now: () => new Date(Date.now() + offset),
    // Webhooks go to a receiver on 127.0.0.1, over http: only with private addresses allowed.
    webhooks: { allowPrivate: true, backoffMs: 100 },
    githubApp: { appId: '4242', privateKey: privateKey.export({ type: 'pkcs1', format: 'pem' }).toString(), slug: 'pds-platform', apiUrl: github.url },
  });
  const actions = await startGitHubActionsIssuer();
  const pds = await startTestServer(
    { PDS_BACKEND: 'kubernetes', PDS_REGISTRY: 'registry.test/pds', PDS_GITHUB_OIDC_ISSUER: actions.url, PDS_OUTBOUND_ALLOW_PRIVATE: 'true', PDS_ADMINS: 'root,ops' },
    // The suite's people write more than 20 times a minute between them (the limit has tests of its own).
    { platform, writeLimiter: createWriteLimiter({ max: 1000 }) },
  );
  // Argo Rollouts in the suite's tenant: the unhealthy tag's analysis fails as the sandbox's does.
  const rolloutsController = startRolloutsController({
    kc: harness.admin,
    namespace: TEAM,
    analysis: (rollout) => (rollout.metadata?.annotations?.['pds.dev/canary-tag'] === '1.3.0' ? 'error rate 7.2% > 5%' : undefined),
  });
  const objects = harness.admin.makeApiClient(CustomObjectsApi);
  const project = (team: string) => ({ group: 'argoproj.io', version: 'v1alpha1', namespace: ARGOCD, plural: 'appprojects', name: team });
  return {
    pds,
    actions,
    appProject: {
      async syncWindows(team) {
        return ((await objects.getNamespacedCustomObject(project(team))) as { spec: { syncWindows?: unknown[] } }).spec.syncWindows ?? [];
      },
      async addSyncWindow(team, window) {
        const windows = await this.syncWindows(team);
        await objects.patchNamespacedCustomObject({ ...project(team), body: [{ op: 'add', path: '/spec/syncWindows', value: [...windows, window] }] });
      },
      async removeSyncWindow(team, description) {
        const windows = (await this.syncWindows(team)) as Array<{ description?: string }>;
        await objects.patchNamespacedCustomObject({ ...project(team), body: [{ op: 'add', path: '/spec/syncWindows', value: windows.filter((w) => w.description !== description) }] });
      },
      async runningImage(team, service) {
        const deployment = await harness.admin.makeApiClient(AppsV1Api).readNamespacedDeployment({ namespace: team, name: `${team}-${service}` });
        return deployment.spec?.template.spec?.containers[0]?.image;
      },
    },
    workflowSeconds: 90,
    advanceClock: (ms) => void (offset += ms),
    hold(prefix) {
      harness.controller.hold(prefix);
      return () => harness.controller.release(prefix);
    },
    rollouts: { unhealthyTag: '1.3.0', quickSteps: '10%:2s,50%:2s', heldSteps: '10%:1h,50%:1h' },
    async stop() {
      await rolloutsController.stop();
      await pds.stop();
      await actions.close();
      await github.close();
      await harness.stop();
    },
  };
});
