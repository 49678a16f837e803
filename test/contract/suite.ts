/**
 * One contract, two backends (issue 10 "One contract suite, run against both backends"): every `docs/api.md` endpoint and
 * every MCP tool, through a started pds, in the order of the onboarding sequence (`docs/api.md#first-time-onboarding-sequence`) — create tenant, grant and
 * sync the repository, onboard, workflow succeeds, status Synced/Healthy, logs, resources, deploy, rollback,
 * update-config, database, preview, retire, delete tenant. `test/contract/sandbox.test.ts` runs it on the sandbox,
 * `test/cluster/contract.test.ts` on PDS_BACKEND=kubernetes against the real API server.
 */
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPERATION_IDS, OPERATIONS } from '../../core/operations/index.js';
import { CLIENTS, connectHttp, type TestClient } from '../helpers/mcp-clients.js';
import { registerRepository, type TestServer } from '../helpers/server.js';
import type { GitHubActionsIssuer } from '../fixtures/github-actions-oidc.js';
import { startReceiver } from '../helpers/webhook-receiver.js';
import { approvalContract } from './approvals.js';
import { until } from '../helpers/until.js';

/** A started pds on one backend, with a tenant name and a repository it can build (tags 0.1.0, 0.1.1). */
export interface ContractTarget {
  pds: TestServer;
  /** Seconds a workflow may take here. */
  workflowSeconds: number;
  /** Move the platform's clock (`Platform.now`) forward by `ms`: how promotion's "healthy for 30m" passes in a test. */
  advanceClock(ms: number): void;
  /**
   * Hold the next workflow whose name starts with `prefix` at a step, running, until the returned function is called
   * (the sandbox: before its second step, `test/helpers/step-hold.ts`; Kubernetes: the Argo stand-in's `hold`, at its
   * first step), so the suite can cancel it mid-run without sleeping.
   */
  hold(prefix: string): () => void;
  /**
   * Rollouts (issue 22): a tag whose release fails its analysis here, and the canary steps that finish within
   * `workflowSeconds` (pauses as this backend scales them) and that hold long enough to promote or abort by hand.
   */
  rollouts: { unhealthyTag: string; quickSteps: string; heldSteps: string };
  /** The GitHub Actions OIDC issuer pds trusts (`PDS_GITHUB_OIDC_ISSUER`). */
  actions: GitHubActionsIssuer;
  /** The tenant's Argo CD AppProject, read and written as an operator would (Kubernetes only). */
  appProject?: {
    syncWindows(team: string): Promise<unknown[]>;
    /** Add a sync window by hand, as someone with `argocd proj windows add` would. */
    addSyncWindow(team: string, window: Record<string, unknown>): Promise<void>;
    /** Remove the sync windows with this `description` by hand. */
    removeSyncWindow(team: string, description: string): Promise<void>;
    /** The image the service's Deployment in the tenant's namespace runs (what Argo CD applied). */
    runningImage(team: string, service: string): Promise<string | undefined>;
  };
  stop(): Promise<void>;
}

export const TEAM = 'nova';
export const REPO = 'nova/web';
export const TAGS = ['0.1.0', '0.1.1'];
const ADMIN = 'root';
/** A second tenant admin, who stops and retries workflows: the others' 20 writes a minute are spent by then. */
const ERIN = 'erin';

export function describeContract(backend: 'sandbox' | 'kubernetes', start: () => Promise<ContractTarget>): void {
  let t: ContractTarget;
  let pds: TestServer;
  let mcp: TestClient;
  const workflows: string[] = [];
  /** Tools the suite has called, through MCP or through their REST route. */
  const covered = new Set<string>();
  /** Every tool `tools/list` offers (toolsets=all). */
  const listed: string[] = [];

  /** Execute as `user`, confirming when asked; wait until the workflow settles; return the workflow body. */
  async function run(user: string, operation: string, params: Record<string, string>): Promise<any> {
    covered.add((OPERATIONS as Record<string, { tool: string }>)[operation]!.tool);
    let res = await pds.api(user, 'POST', `/api/v1/operations/${operation}/execute`, params);
    if (res.status === 400 && res.headers.get('pds-confirm')) {
      res = await pds.api(user, 'POST', `/api/v1/operations/${operation}/execute`, { ...params, confirm: res.headers.get('pds-confirm') });
    }
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ operation, status: 'submitted', workflowName: expect.stringMatching(new RegExp(`^${operation}-`)) });
    workflows.push(res.body.workflowName);
    return until(`${res.body.workflowName} to settle`, async () => {
      const w = await pds.api(user, 'GET', `/api/v1/workflows/${res.body.workflowName}`);
      expect(w.status).toBe(200);
      return w.body.audit.status !== 'submitted' && w.body;
    }, t.workflowSeconds);
  }
  const succeeded = (w: any) => expect(w.audit.status, `${w.workflow}: ${w.note}`).toBe('succeeded');

  /** Execute `operation` held at a step, cancel it there as `user`, and return the settled (failed) workflow. */
  async function cancelledMidRun(user: string, operation: string, params: Record<string, string>): Promise<any> {
    covered.add((OPERATIONS as Record<string, { tool: string }>)[operation]!.tool);
    const release = t.hold(`${operation}-`);
    try {
      const res = await pds.api(user, 'POST', `/api/v1/operations/${operation}/execute`, params);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      const name: string = res.body.workflowName;
      workflows.push(name);
      await until(`${name} running`, async () => (await pds.api(user, 'GET', `/api/v1/workflows/${name}`)).body.phase === 'running', t.workflowSeconds);
      covered.add('platform_cancel_workflow');
      expect((await pds.api('dave', 'POST', `/api/v1/workflows/${name}/cancel`, {})).status).toBe(403); // a viewer
      const cancelled = await pds.api(user, 'POST', `/api/v1/workflows/${name}/cancel`, { reason: 'contract suite' });
      expect(cancelled.status, JSON.stringify(cancelled.body)).toBe(200);
      expect(cancelled.body).toMatchObject({ workflow: name, message: expect.stringContaining(`cancelled by ${user}`) });
      return await until(`${name} to settle`, async () => {
        const w = await pds.api(user, 'GET', `/api/v1/workflows/${name}`);
        return w.body.audit.status !== 'submitted' && w.body;
      }, t.workflowSeconds);
    } finally {
      release();
    }
  }

  describe.sequential(`the API contract on the ${backend} backend`, () => {
    beforeAll(async () => {
      t = await start();
      pds = t.pds;
      mcp = await connectHttp(CLIENTS.at(-1)!, `${pds.url}/mcp?toolsets=all`, { authorization: `Bearer ${await pds.token('alice')}` });
    }, 180_000);
    afterAll(async () => {
      await mcp?.close();
      await t?.stop();
    });

    it('health: /healthz and /readyz without a token; /api/v1 needs one', async () => {
      expect(await pds.api(undefined, 'GET', '/healthz')).toMatchObject({ status: 200, body: { status: 'ok' } });
      expect((await pds.api(undefined, 'GET', '/readyz')).status).toBe(200);
      expect((await pds.api(undefined, 'GET', '/api/v1/services')).status).toBe(401);
    });

    it('operations: eight definitions, one by name, 404 for another', async () => {
      const list = await pds.api('alice', 'GET', '/api/v1/operations');
      expect(list.body.count).toBe(8);
      expect(list.body.items.map((o: any) => o.name).sort()).toEqual([...OPERATION_IDS].sort());
      expect((await pds.api('alice', 'GET', '/api/v1/operations/deploy-service')).body).toMatchObject({ name: 'deploy-service', workflowTemplate: 'deploy-service' });
      expect((await pds.api('alice', 'GET', '/api/v1/operations/nope')).status).toBe(404);
    });

    it('create-tenant: the workflow succeeds and the tenant reads back', async () => {
      succeeded(
        await run(ADMIN, 'create-tenant', { team_name: TEAM, display_name: 'Nova', description: 'Payments', contact_email: 'nova@example.com', admins: 'alice,erin', members: 'carol', viewers: 'dave', cpu: '2', memory: '4Gi', pods: '10' }),
      );
      const tenants = await until('the tenant listed', async () => {
        const r = await pds.api(ADMIN, 'GET', '/api/v1/tenants');
        return r.body.items?.some((x: any) => x.name === TEAM) && r.body;
      }, 30);
      expect(tenants.items.find((x: any) => x.name === TEAM)).toMatchObject({ name: TEAM, displayName: 'Nova', description: 'Payments', contactEmail: 'nova@example.com' });
      expect((await pds.api('alice', 'GET', '/api/v1/tenants')).status).toBe(403);
      const detail = await pds.api('alice', 'GET', `/api/v1/tenants/${TEAM}`);
      expect(detail.body.tenant).toEqual({
        name: TEAM,
        displayName: 'Nova',
        quotas: { cpu: '2', memory: '4Gi', pods: '10' },
        members: expect.arrayContaining([{ userId: 'alice', role: 'admin' }, { userId: 'dave', role: 'viewer' }]),
      });
      expect(detail.body.services).toEqual([]);
      expect((await pds.api('mallory', 'GET', `/api/v1/tenants/${TEAM}`)).status).toBe(403);
    });

    it('repositories: grant access, sync, list', async () => {
      await registerRepository(pds, 'alice', TEAM, REPO);
      const repos = await pds.api('alice', 'GET', `/api/v1/repos?team=${TEAM}`);
      expect(repos.status).toBe(200);
      expect(repos.body.items.map((r: any) => r.fullName)).toEqual([REPO]);
    });

    it('onboarding: the workflow succeeds, the service is Synced/Healthy on its host, logs and resources read back', async () => {
      succeeded(await run('alice', 'deploy-service', { action: 'onboard', team_name: TEAM, component_name: 'web', dockerfile_repo: REPO, git_tag: '0.1.0', port: '8080', service_template: 'default' }));
      const service = { team: TEAM, name: 'web', imageTag: '0.1.0', host: `${TEAM}-web.apps.test`, port: '8080', componentType: 'base-service', hasDatabase: false };
      expect((await pds.api('alice', 'GET', `/api/v1/services/${TEAM}/web`)).body).toEqual(service);
      expect((await pds.api('alice', 'GET', `/api/v1/services?team=${TEAM}`)).body).toEqual({ items: [service], count: 1 });
      const status = await until('Synced/Healthy', async () => {
        const s = await pds.api('alice', 'GET', `/api/v1/status/${TEAM}/web`);
        return s.body.argocd?.syncStatus === 'Synced' && s.body.argocd.healthStatus === 'Healthy' && s.body;
      }, 30);
      expect(status).toEqual({
        argocd: { name: `${TEAM}-web`, syncStatus: 'Synced', healthStatus: 'Healthy', message: expect.any(String) },
        service: { team: TEAM, name: 'web', imageTag: '0.1.0', host: `${TEAM}-web.apps.test` },
      });
      expect((await pds.api('alice', 'GET', `/api/v1/status/${TEAM}/nope`))).toMatchObject({ status: 404, body: { error: `GitOps application not found: ${TEAM}-nope` } });
      expect((await pds.api('alice', 'GET', `/api/v1/services/${TEAM}/nope`)).status).toBe(404);

      const logs = await until('log lines', async () => {
        const l = await pds.api('alice', 'GET', `/api/v1/logs/${TEAM}/web?lines=50&since=1h`);
        expect(l.status).toBe(200);
        return l.body.count > 0 && l.body;
      }, 30);
      expect(logs).toMatchObject({ team: TEAM, app: 'web', count: logs.lines.length, note: expect.any(String) });
      expect(logs.lines[0]).toEqual({ timestamp: expect.any(String), line: expect.any(String), labels: expect.any(Object) });
      expect((await pds.api('alice', 'GET', `/api/v1/logs/${TEAM}/nope`)).status).toBe(404);

      const resources = await pds.api('alice', 'GET', `/api/v1/resources/${TEAM}`);
      expect(resources.body).toEqual({ tenant: TEAM, allocated: { cpu: '2', memory: '4Gi', pods: '10' }, used: { cpu: expect.any(String), memory: expect.any(String), pods: expect.any(String) }, note: expect.any(String) });
      expect((await pds.api(ADMIN, 'GET', '/api/v1/resources/nope')).status).toBe(404);
    });

    it('deploy, rollback and update-config', async () => {
      succeeded(await run('alice', 'deploy-service', { action: 'deploy', team_name: TEAM, component_name: 'web', dockerfile_repo: REPO, git_tag: '0.1.1' }));
      expect((await pds.api('alice', 'GET', `/api/v1/services/${TEAM}/web`)).body.imageTag).toBe('0.1.1');
      succeeded(await run('alice', 'rollback-service', { team_name: TEAM, component_name: 'web', target_tag: '0.1.0' }));
      expect((await pds.api('alice', 'GET', `/api/v1/status/${TEAM}/web`)).body.service.imageTag).toBe('0.1.0');
      const config = await run('alice', 'deploy-service', { action: 'update-config', team_name: TEAM, component_name: 'web', env_vars: 'API_KEY=s3cr3t' });
      succeeded(config);
      expect(config.audit.parameters.env_vars).toBe('API_KEY=***');
      expect(JSON.stringify(config)).not.toContain('s3cr3t');
    });

    it('rollouts: promote and abort are refused (409) while no release is in progress, over REST and MCP', async () => {
      for (const action of ['promote', 'abort']) {
        const refused = await pds.api(ADMIN, 'POST', `/api/v1/rollouts/${TEAM}/web/${action}`);
        expect(refused.status, JSON.stringify(refused.body)).toBe(409);
        expect(refused.body.error).toMatch(/no canary or blue-green release of nova\/web is in progress/);
        expect((await pds.api('dave', 'POST', `/api/v1/rollouts/${TEAM}/web/${action}`)).status).toBe(403);
        const tool = `platform_${action}_rollout`;
        covered.add(tool);
        const result = await mcp.callTool({ name: tool, arguments: { team: TEAM, app: 'web' } });
        expect(result.isError).toBe(true);
        expect(JSON.stringify(result.content)).toMatch(/is in progress/);
      }
    });

    // Kubernetes: the deploy's wait-rollout step follows the Rollout that the Rollouts controller stand-in moves
    // (test/cluster/contract.test.ts); the canary steps and their analysis results are read from its AnalysisRuns.
    const k8s = backend === 'kubernetes';
    it('rollouts: canary success, auto-rollback on an unhealthy tag and again on its redeploy, the stable tag while aborted, blue-green promote, manual abort (REST and MCP)', async () => {
      const { unhealthyTag, quickSteps, heldSteps } = t.rollouts;
      // A tenant member (members and above may promote and abort), with a write budget of its own.
      const member = 'carol';
      const deploy = (tag: string) => ({ action: 'deploy', team_name: TEAM, component_name: 'web', dockerfile_repo: REPO, git_tag: tag });
      const strategy = (s: Record<string, string>) => ({ action: 'update-config', team_name: TEAM, component_name: 'web', ...s });
      const status = async () => (await pds.api('alice', 'GET', `/api/v1/status/${TEAM}/web`)).body;
      const submit = async (params: Record<string, string>) => {
        const res = await pds.api(member, 'POST', '/api/v1/operations/deploy-service/execute', params);
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        workflows.push(res.body.workflowName);
        return res.body.workflowName as string;
      };
      const settled = (name: string) =>
        until(`${name} to settle`, async () => {
          const w = await pds.api('alice', 'GET', `/api/v1/workflows/${name}`);
          return w.body.audit.status !== 'submitted' && w.body;
        }, t.workflowSeconds);
      const paused = (tag: string) => until(`${tag} paused`, async () => {
        const s = await status();
        return s.rollout?.canaryTag === tag && s.rollout.phase === 'Paused' && s;
      }, t.workflowSeconds);
      const invalid = await pds.api(member, 'POST', '/api/v1/operations/deploy-service/execute', strategy({ strategy: 'canary', canary_steps: '50%:2m,10%:1m' }));
      expect(invalid.status).toBe(400);
      expect(invalid.body.error).toMatch(/canary_steps.*weights must rise/);

      // Canary success: each weight held, analysed, then promoted; status shows the finished release.
      succeeded(await run(member, 'deploy-service', strategy({ strategy: 'canary', canary_steps: quickSteps })));
      const stable = (await status()).service.imageTag;
      const good = await settled(await submit(deploy('0.2.0')));
      succeeded(good);
      if (k8s) expect(good.steps.find((x: any) => x.name === 'wait-rollout')).toMatchObject({ status: 'succeeded' });
      const canarySteps = good.steps.filter((x: any) => x.name.startsWith('canary step'));
      expect(canarySteps.map((x: any) => x.name)).toEqual([expect.stringMatching(/^canary step 1\/2: 10% of traffic to 0\.2\.0 /), expect.stringMatching(/^canary step 2\/2: 50% /)]);
      for (const step of canarySteps) expect(step).toMatchObject({ status: 'succeeded', message: expect.stringMatching(/analysis passed: .*error rate 0% ≤ 5%/) });
      expect(await status()).toMatchObject({
        argocd: { healthStatus: 'Healthy' },
        service: { imageTag: '0.2.0' },
        rollout: { strategy: 'canary', phase: 'Healthy', steps: 2, canaryWeight: 100, stableTag: stable, canaryTag: '0.2.0' },
      });

      // Automatic rollback: analysis fails at the first weight; traffic back on 0.2.0, which stays Healthy.
      const bad = await settled(await submit(deploy(unhealthyTag)));
      expect(bad.audit.status).toBe('failed');
      // Kubernetes says which step failed first ("step wait-rollout failed: main: Error (exit code 1): …").
      expect(bad.audit.message).toMatch(k8s ? /: error rate 7\.2% > 5% at step 1 \(10%\); rolled back to 0\.2\.0$/ : /^error rate 7\.2% > 5% at step 1 \(10%\); rolled back to 0\.2\.0$/);
      expect(bad.steps.find((x: any) => x.status === 'failed').name).toMatch(k8s ? /^wait-rollout$/ : /^canary step 1\/2/);
      expect(bad.steps.find((x: any) => x.name.startsWith('canary step 1/2'))).toMatchObject({ status: 'failed', message: 'error rate 7.2% > 5% at step 1 (10%); rolled back to 0.2.0' });
      const rolledBack = await status();
      expect(rolledBack).toMatchObject({
        argocd: { syncStatus: 'Synced', healthStatus: 'Healthy', message: expect.stringContaining(`rolled back: ${unhealthyTag} error rate 7.2% > 5% at step 1 (10%)`) },
        service: { imageTag: '0.2.0' },
        rollout: { phase: 'Aborted', canaryWeight: 0, stableTag: '0.2.0', canaryTag: unhealthyTag },
      });

      // The same tag again: the release runs again (on Kubernetes a retry of the aborted Rollout, whose pod template is
      // unchanged) and, still unhealthy, is rolled back again for its reason, not held until the step's timeout.
      // Followed from the start with a wait: it reports the canary step as it holds (on Kubernetes read from the
      // Rollout while Argo's wait-rollout step waits, for the Workflow does not change then).
      const release = t.hold('deploy-service-');
      const progress: string[] = [];
      let followed: Promise<unknown> = Promise.resolve();
      let againName = '';
      try {
        const name = (againName = await submit(deploy(unhealthyTag)));
        followed = mcp.callTool({ name: 'platform_get_workflow', arguments: { name, wait_seconds: 45 } }, { onprogress: (p) => {
          progress.push(p.message ?? '');
          release();
        } });
        await until('the wait to report', async () => progress.length > 0, 10);
      } finally {
        release();
      }
      await followed;
      const again = await settled(againName);
      expect(progress.some((m) => /^step \d+\/\d+: canary step 1\/2: 10% of traffic to 1\.3\.0 /.test(m)), progress.join('\n')).toBe(true);
      expect(again.audit.status).toBe('failed');
      expect(again.audit.message).toContain('error rate 7.2% > 5% at step 1 (10%); rolled back to 0.2.0');
      expect(again.steps.find((x: any) => x.name.startsWith('canary step 1/2'))).toMatchObject({ status: 'failed', message: 'error rate 7.2% > 5% at step 1 (10%); rolled back to 0.2.0' });
      expect(await status()).toMatchObject({ service: { imageTag: '0.2.0' }, rollout: { phase: 'Aborted', stableTag: '0.2.0', canaryTag: unhealthyTag, workflowName: again.workflow } });

      // The stable tag while the release is aborted: it succeeds, Healthy on it (on Kubernetes at once: Argo skips the
      // steps of a rollback to the stable ReplicaSet, so no canary step ran).
      const stableAgain = await settled(await submit(deploy('0.2.0')));
      succeeded(stableAgain);
      if (k8s) for (const step of stableAgain.steps.filter((x: any) => x.name.startsWith('canary step'))) expect(step).toMatchObject({ status: 'skipped' });
      expect(await status()).toMatchObject({ argocd: { healthStatus: 'Healthy' }, service: { imageTag: '0.2.0' }, rollout: { phase: 'Healthy', canaryTag: '0.2.0', stableTag: '0.2.0' } });

      // Blue-green: the preview waits for a promote by hand (a viewer may not promote), then becomes active.
      succeeded(await run(member, 'deploy-service', strategy({ strategy: 'blue-green' })));
      const blueGreen = await submit(deploy('0.3.0'));
      expect((await paused('0.3.0')).rollout).toMatchObject({ strategy: 'blue-green', canaryWeight: 0, stableTag: '0.2.0', pausedUntil: expect.any(String) });
      expect((await pds.api('dave', 'POST', `/api/v1/rollouts/${TEAM}/web/promote`)).status).toBe(403);
      const promoted = await pds.api(member, 'POST', `/api/v1/rollouts/${TEAM}/web/promote`);
      expect(promoted.status, JSON.stringify(promoted.body)).toBe(200);
      expect(promoted.body).toMatchObject({ team: TEAM, app: 'web', workflowName: blueGreen, rollout: { canaryTag: '0.3.0' } });
      const bg = await settled(blueGreen);
      succeeded(bg);
      if (!k8s) expect(bg.steps.map((x: any) => x.message).join()).toContain(`promoted by ${member}`);
      expect(await status()).toMatchObject({ service: { imageTag: '0.3.0' }, rollout: { strategy: 'blue-green', phase: 'Healthy' } });

      // Abort by hand over MCP: the canary at 10% goes back to 0.3.0 and the deploy fails, saying who aborted it.
      succeeded(await run(member, 'deploy-service', strategy({ strategy: 'canary', canary_steps: heldSteps })));
      const held = await submit(deploy('0.4.0'));
      expect((await paused('0.4.0')).rollout).toMatchObject({ step: 1, canaryWeight: 10, stableTag: '0.3.0' });
      const root = await connectHttp(CLIENTS.at(-1)!, `${pds.url}/mcp?toolsets=all`, { authorization: `Bearer ${await pds.token(member)}` });
      try {
        covered.add('platform_abort_rollout');
        const aborted = await root.callTool({ name: 'platform_abort_rollout', arguments: { team: TEAM, app: 'web' } });
        expect(aborted.isError, JSON.stringify(aborted.content)).toBeFalsy();
        expect(aborted.structuredContent).toMatchObject({ workflowName: held, rollout: { canaryTag: '0.4.0' } });
        const gone = await settled(held);
        // Kubernetes: "step wait-rollout failed: main: Error (exit code 1): aborted by …" (who aborted is recorded on the Rollout).
        if (k8s) expect(gone.audit).toMatchObject({ status: 'failed', message: expect.stringMatching(new RegExp(`: aborted by ${member} at step 1 \\(10%\\); rolled back to 0\\.3\\.0$`)) });
        else expect(gone.audit).toMatchObject({ status: 'failed', message: `aborted by ${member} at step 1 (10%); rolled back to 0.3.0` });
        expect(gone.steps.find((x: any) => x.name.startsWith('canary step 1/2'))).toMatchObject({ status: 'failed', message: `aborted by ${member} at step 1 (10%); rolled back to 0.3.0` });
        expect(await status()).toMatchObject({
          argocd: { healthStatus: 'Healthy', message: expect.stringContaining(`rolled back: 0.4.0 aborted by ${member} at step 1 (10%)`) },
          service: { imageTag: '0.3.0' },
          rollout: { phase: 'Aborted' },
        });
        covered.add('platform_promote_rollout');
        const nothing = await root.callTool({ name: 'platform_promote_rollout', arguments: { team: TEAM, app: 'web' } });
        expect(nothing.isError).toBe(true);
        const events = (await pds.api('alice', 'GET', `/api/v1/tenants/${TEAM}/events`)).body.items.map((e: any) => e.type);
        expect(events.slice(0, 2)).toEqual(['rollout.aborted', 'rollout.promoted']);
      } finally {
        await root.close();
      }
      succeeded(await run(member, 'deploy-service', strategy({ strategy: 'rolling' })));
    }, 300_000); // a dozen deploys on Kubernetes, each through Argo CD and the Rollouts stand-in

    it('rollouts: a deploy cancelled mid-canary leaves the service Healthy on its previous tag, all traffic on stable', async () => {
      const status = async () => (await pds.api('alice', 'GET', `/api/v1/status/${TEAM}/web`)).body;
      const strategy = (s: Record<string, string>) => ({ action: 'update-config', team_name: TEAM, component_name: 'web', ...s });
      succeeded(await run(ERIN, 'deploy-service', strategy({ strategy: 'canary', canary_steps: t.rollouts.heldSteps })));
      const before = (await status()).service.imageTag;
      const res = await pds.api(ERIN, 'POST', '/api/v1/operations/deploy-service/execute', { action: 'deploy', team_name: TEAM, component_name: 'web', dockerfile_repo: REPO, git_tag: '0.5.0' });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      const name: string = res.body.workflowName;
      workflows.push(name);
      await until('0.5.0 paused at its first weight', async () => {
        const s = await status();
        return s.rollout?.canaryTag === '0.5.0' && s.rollout.phase === 'Paused' && s.rollout.canaryWeight > 0;
      }, t.workflowSeconds);
      const cancelled = await pds.api(ERIN, 'POST', `/api/v1/workflows/${name}/cancel`, { reason: 'mid-canary' });
      expect(cancelled.status, JSON.stringify(cancelled.body)).toBe(200);
      const settled = await until(`${name} to settle`, async () => {
        const w = await pds.api(ERIN, 'GET', `/api/v1/workflows/${name}`);
        return w.body.audit.status !== 'submitted' && w.body;
      }, t.workflowSeconds);
      expect(settled.audit).toMatchObject({ status: 'failed', message: `cancelled by ${ERIN}: mid-canary` });
      // Kubernetes: deploy-service's exit handler aborted the Rollout and reverted the commit (test/cluster/workflow-undo.test.ts).
      expect(await until('the release rolled back', async () => {
        const s = await status();
        return s.rollout?.phase === 'Aborted' && s.argocd.healthStatus === 'Healthy' && s;
      }, t.workflowSeconds)).toMatchObject({
        argocd: { message: expect.stringMatching(/^rolled back: 0\.5\.0 .*; all traffic is on /) },
        service: { imageTag: before },
        rollout: { canaryWeight: 0, stableTag: before, canaryTag: '0.5.0' },
      });
      succeeded(await run(ERIN, 'deploy-service', strategy({ strategy: 'rolling' })));
    });

    it('workflow events: a deploy\'s steps once each as they change, then its settlement, and the stream closes', async () => {
      const res = await pds.api('alice', 'POST', '/api/v1/operations/deploy-service/execute', {
        action: 'deploy', team_name: TEAM, component_name: 'web', dockerfile_repo: REPO, git_tag: '0.1.1',
      });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      workflows.push(res.body.workflowName);
      const follow = async (user: string) =>
        fetch(`${pds.url}/api/v1/workflows/${res.body.workflowName}/events`, {
          headers: { authorization: `Bearer ${await pds.token(user)}` },
          signal: AbortSignal.timeout(t.workflowSeconds * 1000),
        });
      expect((await follow('eve')).status).toBe(404);
      const stream = await follow('dave');
      expect(stream.status).toBe(200);
      const events: EventSourceMessage[] = [];
      const parser = createParser({ onEvent: (e) => events.push(e) });
      const decoder = new TextDecoder();
      for await (const chunk of stream.body!) parser.feed(decoder.decode(chunk as Uint8Array, { stream: true }));
      expect(events.at(-1)!.event).toBe('settled');
      const settled = JSON.parse(events.at(-1)!.data);
      expect(settled).toMatchObject({ workflow: res.body.workflowName, phase: 'succeeded', settled: true });
      // Each step's outcome once, by name (on Kubernetes a step's position can change as others start, and the
      // branches of other actions are reported skipped).
      const steps = events.filter((e) => e.event === 'step').map((e) => JSON.parse(e.data).step as { name: string; status: string });
      const outcomes = steps.filter((s) => s.status !== 'running' && s.status !== 'pending').map((s) => `${s.name} ${s.status}`);
      expect(outcomes.sort()).toEqual(settled.steps.map((s: { name: string; status: string }) => `${s.name} ${s.status}`).sort());
      expect(outcomes.join()).toContain('succeeded');
    });

    it('a viewer may read but not execute; a stranger may do neither', async () => {
      expect((await pds.api('dave', 'GET', `/api/v1/services/${TEAM}/web`)).status).toBe(200);
      expect((await pds.api('dave', 'POST', '/api/v1/operations/rollback-service/execute', { team_name: TEAM, component_name: 'web', target_tag: '0.1.1' })).status).toBe(403);
      expect((await pds.api('mallory', 'GET', `/api/v1/status/${TEAM}/web`)).status).toBe(403);
    });

    it('provision-database, preview-deploy and preview-delete', async () => {
      succeeded(await run('alice', 'provision-database', { team_name: TEAM, component_name: 'web' }));
      expect((await pds.api('alice', 'GET', `/api/v1/services/${TEAM}/web`)).body.hasDatabase).toBe(true);
      succeeded(await run('alice', 'preview-deploy', { team_name: TEAM, component_name: 'web', image_tag: '0.1.1', ttl_hours: '1' }));
      const preview = await pds.api('alice', 'GET', `/api/v1/services/${TEAM}/web-preview-0-1-1`);
      expect(preview.body).toMatchObject({ name: 'web-preview-0-1-1', imageTag: '0.1.1', host: `${TEAM}-web-preview-0-1-1.apps.test`, componentType: 'preview' });
      succeeded(await run('alice', 'preview-delete', { team_name: TEAM, component_name: 'web', image_tag: '0.1.1' }));
      await until('the preview gone', async () => (await pds.api('alice', 'GET', `/api/v1/services/${TEAM}/web-preview-0-1-1`)).status === 404, 30);
    });

    it('workflows and audit: one workflow by name, the trail newest first without message', async () => {
      const last = workflows.at(-1)!;
      const w = await pds.api('alice', 'GET', `/api/v1/workflows/${last}`);
      expect(Object.keys(w.body)).toEqual(expect.arrayContaining(['audit', 'note', 'workflow', 'steps', 'settled']));
      expect(w.body).toMatchObject({ workflow: last, settled: true });
      expect(w.body.audit).toMatchObject({ workflowName: last, status: 'succeeded', userId: 'alice', operation: 'preview-delete' });
      expect((await pds.api('mallory', 'GET', `/api/v1/workflows/${last}`)).status).toBe(404);
      const audit = await pds.api('alice', 'GET', '/api/v1/audit');
      expect(audit.body.count).toBe(audit.body.items.length);
      expect(audit.body.items.slice(0, 3).map((e: any) => e.workflowName)).toEqual(workflows.slice(-3).reverse());
      for (const e of audit.body.items) expect(e).not.toHaveProperty('message');
      // The workflow history of the service, newest first, with the same visibility rule.
      const history = await pds.api('alice', 'GET', `/api/v1/workflows?team=${TEAM}&service=web&limit=3`);
      expect(history.status).toBe(200);
      expect(history.body.items.map((x: any) => x.name)).toEqual(workflows.slice(-3).reverse());
      expect(history.body.items[0]).toMatchObject({ operation: 'preview-delete', userId: 'alice', parameters: { team_name: TEAM, component_name: 'web' } });
      expect((await pds.api('alice', 'GET', `/api/v1/workflows?team=${TEAM}&operation=create-tenant`)).body.items).toHaveLength(1);
      expect((await pds.api('mallory', 'GET', '/api/v1/workflows')).body.items).toEqual([]);
    });

    it('MCP: every operation is a tool, and the read tools answer as REST does', async () => {
      const { tools } = await mcp.listTools();
      const names = tools.map((x) => x.name);
      for (const op of Object.values(OPERATIONS)) expect(names).toContain(op.tool);
      const call = async (name: string, args: Record<string, unknown>) => {
        covered.add(name);
        const r = await mcp.callTool({ name, arguments: args });
        expect(r.isError, `${name}: ${JSON.stringify(r.content)}`).toBeFalsy();
        return r.structuredContent;
      };
      expect(await call('platform_get_status', { team: TEAM, app: 'web' })).toMatchObject({ argocd: { name: `${TEAM}-web`, syncStatus: 'Synced' } });
      expect(await call('platform_list_services', { team: TEAM })).toMatchObject({ count: 1 });
      expect(await call('platform_get_service', { team: TEAM, app: 'web' })).toMatchObject({ name: 'web', hasDatabase: true });
      expect(await call('platform_get_logs', { team: TEAM, app: 'web', lines: 5, since: '1h' })).toMatchObject({ team: TEAM, app: 'web' });
      expect(await call('platform_get_resources', { tenant: TEAM })).toMatchObject({ tenant: TEAM });
      expect(await call('platform_get_tenant', { name: TEAM })).toMatchObject({ tenant: { name: TEAM } });
      expect(await call('platform_list_repos', { team: TEAM })).toMatchObject({ items: [{ fullName: REPO }] });
      expect(await call('platform_list_audit', {})).toMatchObject({ count: expect.any(Number) });
      expect(await call('platform_get_workflow', { name: workflows[0]! })).toMatchObject({ workflow: workflows[0] });
      expect(await call('platform_list_workflows', { team: TEAM, limit: 2 })).toMatchObject({ count: 2 });
      expect(await call('platform_list_operations', {})).toMatchObject({ count: 8 });
      expect(await call('platform_get_operation', { name: 'rollback-service' })).toMatchObject({ name: 'rollback-service' });
      const rolled = await call('platform_rollback_service', { team_name: TEAM, component_name: 'web', target_tag: '0.1.1' });
      expect(rolled).toMatchObject({ operation: 'rollback-service', status: 'submitted' });
      workflows.push(rolled.workflowName);
      await until('the MCP rollback', async () => (await pds.api('alice', 'GET', `/api/v1/workflows/${rolled.workflowName}`)).body.audit.status === 'succeeded', t.workflowSeconds);
      expect((await call('platform_get_service', { team: TEAM, app: 'web' })).imageTag).toBe('0.1.1');

      // The generic operation tool, the diagnosis, repositories and scaffolding.
      const generic = await call('platform_execute_operation', { name: 'rollback-service', parameters: { team_name: TEAM, component_name: 'web', target_tag: '0.1.0' } });
      expect(generic).toMatchObject({ operation: 'rollback-service', status: 'submitted' });
      workflows.push(generic.workflowName);
      await until('the generic rollback', async () => (await pds.api('alice', 'GET', `/api/v1/workflows/${generic.workflowName}`)).body.audit.status === 'succeeded', t.workflowSeconds);
      expect(await call('platform_diagnose_service', { team: TEAM, app: 'web' })).toMatchObject({});
      expect(await call('platform_grant_repo_access', { team_name: TEAM, repo: REPO })).toMatchObject({ team: TEAM, repo: REPO, url: expect.stringContaining('/installations/new') });
      expect(await call('platform_sync_repos', { team: TEAM })).toMatchObject({ items: [{ fullName: REPO }] });
      expect((await call('platform_list_templates', {})).items.length).toBeGreaterThan(0);
      const scaffold = await call('platform_scaffold_repository', {
        team_name: TEAM,
        component_name: 'web',
        files: ['package.json', 'server.js'],
        file_contents: { 'package.json': '{"name":"web","scripts":{"start":"node server.js"}}' },
      });
      expect(JSON.stringify(scaffold)).toContain('Dockerfile');
      // Platform-admin only: a member is refused, as over REST.
      covered.add('platform_list_tenants');
      expect((await mcp.callTool({ name: 'platform_list_tenants', arguments: {} })).isError).toBe(true);
      listed.push(...names);
    });

    it('governance: the tenant policy, a freeze refused at the door, an override audited, the event feed (REST and MCP)', async () => {
      const policyPath = `/api/v1/tenants/${TEAM}/policy`;
      const window = { name: 'always', schedule: '* * * * *', duration: '2m', timeZone: 'Europe/Berlin', operations: ['rollback-service'], reason: 'release freeze' };
      expect(await pds.api('dave', 'GET', policyPath)).toMatchObject({ status: 200, body: { team: TEAM, policy: {} } });
      expect((await pds.api('dave', 'PUT', policyPath, { freezeWindows: [window] })).status).toBe(403);
      const invalid = await pds.api('alice', 'PUT', policyPath, { freezeWindows: [{ ...window, schedule: 'every friday' }] });
      expect(invalid.status).toBe(400);
      expect(invalid.body.error).toMatch(/schedule/);
      // Writes here are the platform admin's (a person too), so the tenant admin's write budget stays for what follows.
      const set = await pds.api(ADMIN, 'PUT', policyPath, { freezeWindows: [window] });
      expect(set.status, JSON.stringify(set.body)).toBe(200);
      expect(set.body.event).toMatchObject({ type: 'policy.changed', userId: ADMIN, data: { old: {}, new: { freezeWindows: [window] } } });

      // Refused at the door, before anything is recorded: REST 403, MCP isError, both naming the window and its end.
      const rollback = { team_name: TEAM, component_name: 'web', target_tag: '0.1.1' };
      const refused = await pds.api(ADMIN, 'POST', '/api/v1/operations/rollback-service/execute', rollback);
      expect(refused.status).toBe(403);
      expect(refused.body.error).toMatch(/window "always" \(release freeze\) until .* Europe\/Berlin \(.*Z\)/);
      expect((await pds.api('alice', 'GET', '/api/v1/audit')).body.items[0].workflowName).toBe(workflows.at(-1));
      const root = await connectHttp(CLIENTS.at(-1)!, `${pds.url}/mcp?toolsets=all`, { authorization: `Bearer ${await pds.token(ADMIN)}` });
      try {
        const mcpRefused = await root.callTool({ name: 'platform_rollback_service', arguments: rollback });
        expect(mcpRefused.isError).toBe(true);
        expect(JSON.stringify(mcpRefused.content)).toMatch(/window \\"always\\"/);

        // Break-glass by an admin acting as a person (signed in: a self-issued token), over MCP.
        const call = async (name: string, args: Record<string, unknown>) => {
          covered.add(name);
          const r = await root.callTool({ name, arguments: args });
          expect(r.isError, `${name}: ${JSON.stringify(r.content)}`).toBeFalsy();
          return r.structuredContent as any;
        };
        const over = await call('platform_rollback_service', { ...rollback, override_reason: 'hotfix for incident 42' });
        expect(over).toMatchObject({ operation: 'rollback-service', status: 'submitted' });
        workflows.push(over.workflowName);
        const run = await until('the override rollback', async () => {
          const w = await pds.api('alice', 'GET', `/api/v1/workflows/${over.workflowName}`);
          return w.body.audit.status !== 'submitted' && w.body;
        }, t.workflowSeconds);
        expect(run.audit.status, JSON.stringify(run)).toBe('succeeded');
        expect(run.audit.parameters).toMatchObject({ target_tag: '0.1.1', override_reason: 'hotfix for incident 42' });

        const events = await call('platform_list_tenant_events', { name: TEAM });
        // Newest first; the rollouts case's promote and abort came before.
        expect(events.items.map((e: any) => e.type).slice(0, 2)).toEqual(['freeze.overridden', 'policy.changed']);
        expect(events.items[0]).toMatchObject({ userId: ADMIN, data: { workflowName: over.workflowName, window: 'always', reason: 'hotfix for incident 42' } });
        expect((await pds.api('dave', 'GET', `/api/v1/tenants/${TEAM}/events?limit=1`)).body).toMatchObject({ count: 1, items: [{ type: 'freeze.overridden' }] });
        expect((await pds.api('mallory', 'GET', `/api/v1/tenants/${TEAM}/events`)).status).toBe(403);
        expect(await call('platform_set_tenant_policy', { name: TEAM, policy: {} })).toMatchObject({ policy: {} });
        expect(await call('platform_get_tenant_policy', { name: TEAM })).toEqual({ team: TEAM, policy: {} });
        // None of it is an execution: the audit trail holds the override's workflow and nothing else new.
        expect((await pds.api('alice', 'GET', '/api/v1/audit')).body.items[0].workflowName).toBe(over.workflowName);
      } finally {
        await root.close();
      }
    });

    it('promotion: one image per source, reused by digest in another tenant; refused until it ran healthy 30m there; promote what runs', async () => {
      const STAGING = `${TEAM}-staging`;
      // A platform admin of its own: writes are limited per user (20 per minute), and the suite's others are spent.
      const OPS = 'ops';
      const execute = (user: string, params: Record<string, string>) => pds.api(user, 'POST', '/api/v1/operations/deploy-service/execute', params);
      const deploy = { action: 'deploy', team_name: TEAM, component_name: 'web', dockerfile_repo: REPO };
      succeeded(await run(OPS, 'create-tenant', { team_name: STAGING, admins: 'alice' }));
      await registerRepository(pds, 'alice', STAGING, REPO);

      // The same source (REPO at TAGS[1]) was built for TEAM: the staging onboarding reuses its image by digest.
      const onboarded = await run(OPS, 'deploy-service', { ...deploy, action: 'onboard', team_name: STAGING, git_tag: TAGS[1]!, port: '8080' });
      succeeded(onboarded);
      expect(JSON.stringify(onboarded.steps)).toMatch(/image \S+\/src\/nova\/web:0\.1\.1(@sha256:[0-9a-f]{64})? exists, build skipped/);

      const policyPath = `/api/v1/tenants/${TEAM}/policy`;
      const rule = { promotion: { from: STAGING, minHealthy: '30m' } };
      expect((await pds.api(OPS, 'PUT', policyPath, rule)).status).toBe(200);
      const before = (await pds.api(OPS, 'GET', '/api/v1/audit')).body.items[0].workflowName;

      // A tag that never ran in staging is refused at the door; nothing is recorded.
      const never = await execute(OPS, { ...deploy, git_tag: TAGS[0]! });
      expect(never.status, JSON.stringify(never.body)).toBe(403);
      expect(never.body.error).toMatch(new RegExp(`must first run Synced and Healthy in ${STAGING}/web for 30m .*; it never ran there`));
      // The staging image runs healthy, but not yet for 30 minutes (pds observes it once Argo CD reports it). Each
      // try is a write (20 per minute): read the status first, then try every 2 s.
      await until('staging Synced/Healthy', async () => {
        const s = await pds.api(OPS, 'GET', `/api/v1/status/${STAGING}/web`);
        return s.body.argocd?.syncStatus === 'Synced' && s.body.argocd.healthStatus === 'Healthy';
      }, 60);
      let young: Awaited<ReturnType<typeof execute>> | undefined;
      for (let i = 0; i < 8 && !young; i++) {
        const r = await execute(OPS, { ...deploy, git_tag: TAGS[1]! });
        expect(r.status, JSON.stringify(r.body)).toBe(403);
        if (/ran healthy in/.test(r.body.error)) young = r;
        else await new Promise((resolve) => setTimeout(resolve, 2000));
      }
      if (!young) throw new Error('the staging image was not observed healthy within 16 s of its status');
      expect(young.body.error).toMatch(new RegExp(`ran healthy in ${STAGING}/web for \\d+[sm] of the 30m required \\(sha256:[0-9a-f]{64}\\), and it is running there now: try again after \\S+Z`));
      expect((await pds.api(OPS, 'GET', '/api/v1/audit')).body.items[0].workflowName).toBe(before);

      // Thirty minutes later (the platform's clock), the same deploy passes, pinned to the verified digest, unbuilt.
      t.advanceClock(31 * 60_000);
      const digest = young.body.error.match(/\((sha256:[0-9a-f]{64})\)/)[1];
      const allowed = await run(OPS, 'deploy-service', { ...deploy, git_tag: TAGS[1]! });
      succeeded(allowed);
      expect(allowed.audit.parameters).toMatchObject({ git_tag: TAGS[1], image_digest: digest, promoted_from: `${STAGING}/web` });
      expect(JSON.stringify(allowed.steps)).toMatch(/exists, build skipped/);

      // Promotion by digest over MCP: what staging runs, audited as deploy-service with image_digest and promoted_from.
      const root = await connectHttp(CLIENTS.at(-1)!, `${pds.url}/mcp?toolsets=all`, { authorization: `Bearer ${await pds.token(OPS)}` });
      try {
        covered.add('platform_promote_image');
        const promoted = await root.callTool({ name: 'platform_promote_image', arguments: { team_name: TEAM, component_name: 'web', from: `${STAGING}/web` } });
        expect(promoted.isError, JSON.stringify(promoted.content)).toBeFalsy();
        const name = (promoted.structuredContent as any).workflowName as string;
        workflows.push(name);
        const w = await until('the promotion', async () => {
          const r = await pds.api(OPS, 'GET', `/api/v1/workflows/${name}`);
          return r.body.audit.status !== 'submitted' && r.body;
        }, t.workflowSeconds);
        succeeded(w);
        expect(w.audit).toMatchObject({ operation: 'deploy-service', parameters: { action: 'deploy', git_tag: TAGS[1], dockerfile_repo: REPO, image_digest: digest, promoted_from: `${STAGING}/web` } });
        const nothing = await root.callTool({ name: 'platform_promote_image', arguments: { team_name: TEAM, component_name: 'web', from: `${STAGING}/api` } });
        expect(nothing.isError).toBe(true);
        expect(JSON.stringify(nothing.content)).toContain('is not running Synced and Healthy now');
      } finally {
        await root.close();
      }
      expect((await pds.api(OPS, 'PUT', policyPath, {})).status).toBe(200);
      succeeded(await run(OPS, 'delete-tenant', { team_name: STAGING }));
    });

    it('cancel mid-run: the deploy settles failed "cancelled by", the service stays on its last good version; retry after failure (MCP)', async () => {
      const before = (await pds.api('alice', 'GET', `/api/v1/status/${TEAM}/web`)).body.service.imageTag;
      const target = before === '0.1.0' ? '0.1.1' : '0.1.0';
      const failed = await cancelledMidRun(ERIN, 'deploy-service', { action: 'deploy', team_name: TEAM, component_name: 'web', dockerfile_repo: REPO, git_tag: target });
      expect(failed.audit).toMatchObject({ status: 'failed', message: `cancelled by ${ERIN}: contract suite` });
      expect(failed).toMatchObject({ phase: 'failed', cancelledBy: ERIN });
      const status = await until('Synced/Healthy', async () => {
        const s = await pds.api('alice', 'GET', `/api/v1/status/${TEAM}/web`);
        return s.body.argocd?.syncStatus === 'Synced' && s.body.argocd.healthStatus === 'Healthy' && s.body;
      }, 30);
      expect(status.service.imageTag).toBe(before);
      expect((await pds.api('dave', 'GET', `/api/v1/tenants/${TEAM}/events?limit=1`)).body.items[0]).toMatchObject({
        type: 'workflow.cancelled', userId: ERIN, data: { workflowName: failed.workflow, operation: 'deploy-service', reason: 'contract suite' },
      });
      const again = await pds.api(ERIN, 'POST', `/api/v1/workflows/${failed.workflow}/cancel`, {});
      expect(again.status).toBe(409);

      // Retry: a viewer may not; the tenant admin retries over MCP and gets the execute answer with retryOf.
      expect((await pds.api('dave', 'POST', `/api/v1/workflows/${failed.workflow}/retry`, {})).status).toBe(403);
      covered.add('platform_retry_workflow');
      const retried = await mcp.callTool({ name: 'platform_retry_workflow', arguments: { name: failed.workflow } });
      expect(retried.isError, JSON.stringify(retried.content)).toBeFalsy();
      const answer = retried.structuredContent as any;
      expect(answer).toMatchObject({ operation: 'deploy-service', status: 'submitted', retryOf: failed.workflow });
      workflows.push(answer.workflowName);
      const run = await until('the retry', async () => {
        const w = await pds.api('alice', 'GET', `/api/v1/workflows/${answer.workflowName}`);
        return w.body.audit.status !== 'submitted' && w.body;
      }, t.workflowSeconds);
      succeeded(run);
      expect(run).toMatchObject({ retryOf: failed.workflow, audit: { userId: 'alice', parameters: { git_tag: target, action: 'deploy' } } });
      await until(`the service on ${target}`, async () => (await pds.api('alice', 'GET', `/api/v1/status/${TEAM}/web`)).body.service?.imageTag === target, 30);
    });

    it('CI: an exchanged GitHub Actions OIDC token deploys its own repository and is refused for any other', async () => {
      const policyPath = `/api/v1/tenants/${TEAM}/policy`;
      expect((await pds.api(ADMIN, 'PUT', policyPath, { ci: { githubOidc: true, refs: ['refs/tags/*'] } })).status).toBe(200);
      const registered = (await pds.api('alice', 'GET', `/api/v1/repos?team=${TEAM}`)).body.items.find((r: any) => r.fullName === REPO);
      expect(registered).toMatchObject({ id: expect.stringMatching(/^\d+$/), ownerId: expect.stringMatching(/^\d+$/) });
      const exchange = async (repository: { name: string; id: string; ownerId: string }, ref = 'refs/tags/0.1.1') => {
        const res = await fetch(`${pds.url}/oauth/token`, {
          method: 'POST',
          headers: { accept: 'application/json' },
          body: new URLSearchParams({
            grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
            subject_token_type: 'urn:ietf:params:oauth:token-type:id_token',
            subject_token: await t.actions.idToken(pds.config.baseUrl, repository, { ref }),
            client_id: 'pds-ci',
          }),
        });
        const body = await res.json();
        expect(res.status, JSON.stringify(body)).toBe(200);
        return body.access_token as string;
      };
      const as = async (token: string, method: string, path: string, body?: unknown) => {
        const res = await fetch(pds.url + path, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
        return { status: res.status, body: await res.json() };
      };
      const own = { name: REPO, id: registered.id, ownerId: registered.ownerId };
      const deploy = { action: 'deploy', team_name: TEAM, component_name: 'web', dockerfile_repo: REPO, git_tag: '0.1.1' };
      const execute = '/api/v1/operations/deploy-service/execute';
      // Refused: a re-created repository of the same name (another id), a ref the policy does not list, any other call.
      expect((await as(await exchange({ ...own, id: `${own.id}7` }), 'POST', execute, deploy)).status).toBe(403);
      expect((await as(await exchange(own, 'refs/heads/dev'), 'POST', execute, deploy)).status).toBe(403);
      const token = await exchange(own);
      expect((await as(token, 'GET', `/api/v1/status/${TEAM}/web`)).status).toBe(403);
      expect((await as(token, 'POST', '/api/v1/operations/rollback-service/execute', { team_name: TEAM, component_name: 'web', target_tag: '0.1.0' })).status).toBe(403);

      const res = await as(token, 'POST', execute, deploy);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      workflows.push(res.body.workflowName);
      const run = await until('the CI deploy', async () => {
        const w = await as(token, 'GET', `/api/v1/workflows/${res.body.workflowName}`);
        expect(w.status).toBe(200);
        return w.body.audit.status !== 'submitted' && w.body;
      }, t.workflowSeconds);
      expect(run.audit).toMatchObject({ status: 'succeeded', userId: `github-actions:${REPO}`, parameters: { ...deploy, ci_run_url: expect.stringMatching(/^https:\/\/github\.com\/nova\/web\/actions\/runs\/\d+$/) } });
      expect((await pds.api('alice', 'GET', `/api/v1/services/${TEAM}/web`)).body.imageTag).toBe('0.1.1');
      expect((await pds.api(ADMIN, 'PUT', policyPath, {})).status).toBe(200);
    });

    it('freeze windows covering every operation that syncs reach the tenant\'s AppProject syncWindows, in step with the policy', async () => {
      const policyPath = `/api/v1/tenants/${TEAM}/policy`;
      const weekend = { name: 'weekend', schedule: '0 18 * * 5', duration: '2d', timeZone: 'Europe/Berlin', operations: ['*'], reason: 'no one on call' };
      const reviews = { name: 'reviews', schedule: '0 9 * * 1', duration: '1h', timeZone: 'UTC', operations: ['deploy-service'], reason: 'release review' };
      const argo = (duration: string) => ({
        kind: 'deny', schedule: '0 18 * * 5', duration, timeZone: 'Europe/Berlin', applications: ['*'], manualSync: true, description: 'pds freeze window "weekend": no one on call',
      });
      // A window someone added by hand stays; only pds's own follow the policy.
      const theirs = { kind: 'allow', schedule: '0 2 * * *', duration: '1h', applications: ['nova-*'], description: 'night syncs' };
      await t.appProject?.addSyncWindow(TEAM, theirs);
      expect((await pds.api(ADMIN, 'PUT', policyPath, { freezeWindows: [weekend, reviews] })).status).toBe(200);
      // Only the window covering every syncing operation is Argo CD's too; the deploy-only one stays pds's.
      if (t.appProject) expect(await t.appProject.syncWindows(TEAM)).toEqual([theirs, argo('48h')]);
      expect((await pds.api(ADMIN, 'PUT', policyPath, { freezeWindows: [{ ...weekend, duration: '63h' }] })).status).toBe(200);
      if (t.appProject) expect(await t.appProject.syncWindows(TEAM)).toEqual([theirs, argo('63h')]);
      expect((await pds.api(ADMIN, 'PUT', policyPath, {})).status).toBe(200);
      if (t.appProject) expect(await t.appProject.syncWindows(TEAM)).toEqual([theirs]);
    });

    it('break-glass during a freeze Argo CD enforces too: refused at the door, an override deploy syncs by hand and runs the new tag', async () => {
      const policyPath = `/api/v1/tenants/${TEAM}/policy`;
      const freeze = { name: 'incident', schedule: '* * * * *', duration: '1h', timeZone: 'UTC', operations: ['*'], reason: 'incident freeze' };
      // The tag the service does not run now, so only a sync can make it run.
      const running = (await pds.api('alice', 'GET', `/api/v1/services/${TEAM}/web`)).body.imageTag;
      // Argo CD applies an earlier deploy's commit in its own time: wait for it before the window holds automated syncs.
      if (t.appProject) await until(`the Deployment on ${running}`, async () => (await t.appProject!.runningImage(TEAM, 'web'))?.includes(`:${running}@`), t.workflowSeconds);
      expect((await pds.api(ADMIN, 'PUT', policyPath, { freezeWindows: [freeze] })).status).toBe(200);
      if (t.appProject) expect(await t.appProject.syncWindows(TEAM)).toContainEqual(expect.objectContaining({ kind: 'deny', schedule: '* * * * *', manualSync: true }));
      const execute = '/api/v1/operations/deploy-service/execute';
      const [next, other] = running === TAGS[0] ? [TAGS[1]!, TAGS[0]!] : [TAGS[0]!, TAGS[1]!];
      const deploy = { action: 'deploy', team_name: TEAM, component_name: 'web', dockerfile_repo: REPO, git_tag: next };
      // What the Deployment runs (an image by digest): only Argo CD's sync can change it.
      const imageBefore = await t.appProject?.runningImage(TEAM, 'web');
      // The tenant admin deploys here (signed in: a person), so the platform admin's write budget stays for what follows.
      const before = (await pds.api('alice', 'GET', '/api/v1/audit')).body.items[0].workflowName;
      const refused = await pds.api('alice', 'POST', execute, deploy);
      expect(refused.status).toBe(403);
      expect(refused.body.error).toMatch(/window "incident" \(incident freeze\)/);
      expect((await pds.api('alice', 'GET', '/api/v1/audit')).body.items[0].workflowName).toBe(before);
      const settle = async (workflowName: string) =>
        until(`the override of ${workflowName}`, async () => {
          const w = await pds.api('alice', 'GET', `/api/v1/workflows/${workflowName}`);
          return w.body.audit.status !== 'submitted' && w.body;
        }, t.workflowSeconds);

      const over = await pds.api('alice', 'POST', execute, { ...deploy, override_reason: 'hotfix for incident 43' });
      expect(over.status, JSON.stringify(over.body)).toBe(200);
      workflows.push(over.body.workflowName);
      const run = await settle(over.body.workflowName);
      expect(run.audit, JSON.stringify(run)).toMatchObject({ status: 'succeeded', parameters: { git_tag: next, override_reason: 'hotfix for incident 43' } });
      expect((await pds.api('alice', 'GET', `/api/v1/services/${TEAM}/web`)).body.imageTag).toBe(next);
      if (t.appProject) {
        // Argo CD's automated sync is held by the window: the manual sync the workflow asked for applied the new tag.
        expect(JSON.stringify(run.steps)).toContain('sync-now');
        const imageAfter = await t.appProject.runningImage(TEAM, 'web');
        expect(imageAfter).toBeDefined();
        expect(imageAfter).not.toBe(imageBefore);

        // A deny window without manualSync holds manual syncs too: the override is then refused by Argo CD, and says so.
        const strict = { kind: 'deny', schedule: '* * * * *', duration: '1h', applications: ['*'], manualSync: false, description: 'no syncs at all' };
        await t.appProject.addSyncWindow(TEAM, strict);
        try {
          const held = await pds.api('alice', 'POST', execute, { ...deploy, git_tag: other, override_reason: 'hotfix for incident 44' });
          expect(held.status, JSON.stringify(held.body)).toBe(200);
          workflows.push(held.body.workflowName);
          const failed = await settle(held.body.workflowName);
          expect(failed.audit.status).toBe('failed');
          expect(JSON.stringify(failed)).toMatch(/Blocked by sync window/);
          expect(await t.appProject.runningImage(TEAM, 'web')).toBe(imageAfter);
        } finally {
          await t.appProject.removeSyncWindow(TEAM, strict.description);
        }
      }
      expect((await pds.api(ADMIN, 'PUT', policyPath, {})).status).toBe(200);
    });

    it('webhooks: set by an admin (secret once), read by members without it, workflow.succeeded delivered signed (REST and MCP)', async () => {
      const receiver = await startReceiver();
      const root = await connectHttp(CLIENTS.at(-1)!, `${pds.url}/mcp?toolsets=all`, { authorization: `Bearer ${await pds.token(ADMIN)}` });
      try {
        const call = async (name: string, args: Record<string, unknown>) => {
          covered.add(name);
          const r = await root.callTool({ name, arguments: args });
          expect(r.isError, `${name}: ${JSON.stringify(r.content)}`).toBeFalsy();
          return r.structuredContent as any;
        };
        const hooksPath = `/api/v1/tenants/${TEAM}/webhooks`;
        const hooks = [{ url: `${receiver.url}/hook`, events: ['workflow.succeeded', 'workflow.failed'] }];
        expect((await pds.api('dave', 'PUT', hooksPath, { hooks })).status).toBe(403);
        const set = await call('platform_set_tenant_webhooks', { name: TEAM, hooks });
        const secret = set.hooks[0].secret as string;
        expect(secret).toMatch(/^pdswh_/);
        receiver.secret('/hook', secret);
        const read = await pds.api('dave', 'GET', hooksPath);
        expect(read).toMatchObject({ status: 200, body: { team: TEAM, hooks: [{ id: set.hooks[0].id, events: hooks[0]!.events, format: 'json' }] } });
        expect(JSON.stringify(read.body)).not.toContain(secret);
        expect((await call('platform_get_tenant_webhooks', { name: TEAM })).hooks).toEqual(read.body.hooks);

        const done = await run(ADMIN, 'deploy-service', { action: 'update-config', team_name: TEAM, component_name: 'web', env_vars: 'WEBHOOK_CHECK=s3cret' });
        succeeded(done);
        const [got] = await receiver.until(`workflow.succeeded of ${done.workflow}`, (all) => all.some((g) => g.json?.data?.workflowName === done.workflow), t.workflowSeconds * 1000);
        expect(got).toMatchObject({ signed: true, headers: { 'x-pds-event': 'workflow.succeeded' } });
        expect(got!.json).toMatchObject({ type: 'workflow.succeeded', team: TEAM, data: { workflowName: done.workflow, phase: 'succeeded', parameters: { env_vars: 'WEBHOOK_CHECK=***' } } });
        expect(got!.body).not.toContain('s3cret');
        const listed = await until('the delivery to be listed delivered', async () => {
          const { items } = await call('platform_list_webhook_deliveries', { name: TEAM });
          return items.find((d: any) => d.outcome === 'delivered' && d.event === 'workflow.succeeded');
        }, 20);
        expect(listed).toMatchObject({ hookId: set.hooks[0].id, attempts: 1, lastStatusCode: 200 });
        expect((await pds.api('dave', 'GET', `${hooksPath}/deliveries`)).body.items[0]).toMatchObject({ id: got!.headers['x-pds-delivery'] });
        expect((await pds.api(ADMIN, 'PUT', hooksPath, { hooks: [] })).status).toBe(200);
      } finally {
        await root.close();
        await receiver.close();
      }
    });

    it('approvals: held, self-approval refused, once per person, MCP only through the person, approve runs, reject and expiry fail', async () => {
      await approvalContract({ pds, team: TEAM, admin: ADMIN, tenantAdmin: 'alice', workflowSeconds: t.workflowSeconds, covered, workflows });
    }, 240_000);

    it('retire-service and delete-tenant (confirmed) remove what was made; a cancelled retire, retried, asks for its own confirmation', async () => {
      const asked = await pds.api(ERIN, 'POST', '/api/v1/operations/retire-service/execute', { team_name: TEAM, component_name: 'web' });
      const cancelled = await cancelledMidRun(ERIN, 'retire-service', { team_name: TEAM, component_name: 'web', confirm: asked.headers.get('pds-confirm')! });
      expect(cancelled.audit.status).toBe('failed');
      expect((await pds.api('alice', 'GET', `/api/v1/services/${TEAM}/web`)).status).toBe(200);
      const first = await pds.api(ERIN, 'POST', `/api/v1/workflows/${cancelled.workflow}/retry`, {});
      expect(first.status).toBe(400);
      expect(first.headers.get('pds-error-code')).toBe('CONFIRMATION_REQUIRED');
      const retried = await pds.api(ERIN, 'POST', `/api/v1/workflows/${cancelled.workflow}/retry`, { confirm: first.headers.get('pds-confirm') });
      expect(retried.status, JSON.stringify(retried.body)).toBe(200);
      expect(retried.body).toMatchObject({ operation: 'retire-service', retryOf: cancelled.workflow });
      workflows.push(retried.body.workflowName);
      succeeded(await until('the retried retire', async () => {
        const w = await pds.api(ERIN, 'GET', `/api/v1/workflows/${retried.body.workflowName}`);
        return w.body.audit.status !== 'submitted' && w.body;
      }, t.workflowSeconds));
      await until('the service gone', async () => (await pds.api('alice', 'GET', `/api/v1/services/${TEAM}/web`)).status === 404, 30);
      expect((await pds.api('alice', 'GET', `/api/v1/status/${TEAM}/web`)).status).toBe(404);
      succeeded(await run(ADMIN, 'delete-tenant', { team_name: TEAM }));
      await until('the tenant gone', async () => (await pds.api(ADMIN, 'GET', `/api/v1/tenants/${TEAM}`)).status === 404, 60);
      expect((await pds.api(ADMIN, 'GET', `/api/v1/resources/${TEAM}`)).status).toBe(404);
    }, 240_000); // two workflows and waits of up to 30 + 60 s

    it('called every tool pds offers (a new tool needs its line in this suite)', () => {
      expect(listed.length).toBeGreaterThan(20);
      expect(listed.filter((n) => !covered.has(n))).toEqual([]);
    });
  });
}
