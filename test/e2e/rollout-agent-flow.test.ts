/**
 * Issue 22's agent flow, through a real MCP client over HTTP: an agent onboards a service with a canary strategy,
 * deploys a release that waits with progress through each canary step, then deploys a release whose error rate (from
 * a Prometheus stand-in, `PDS_PROMETHEUS_URL`, queried through the outbound rule) fails the analysis: the rollout
 * rolls back by itself, the wait answers the reason, status shows the previous tag Healthy, and one diagnose call
 * explains it.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { errorRateQuery } from '../../core/rollouts.js';
import { startPrometheusFixture, type PrometheusFixture } from '../fixtures/prometheus.js';
import { CLIENTS, connectHttp, type TestClient } from '../helpers/mcp-clients.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const TEAM = 'canary';
let pds: TestServer;
let prometheus: PrometheusFixture;
let client: TestClient;

beforeAll(async () => {
  prometheus = await startPrometheusFixture();
  pds = await startTestServer({
    PDS_SANDBOX_STEP_MS: '20',
    // Pauses at a fiftieth ("5s" holds 100 ms); the stand-in listens on loopback, which the outbound rule refuses unless allowed.
    PDS_SANDBOX_PAUSE_SCALE: '0.02',
    PDS_PROMETHEUS_URL: prometheus.url,
    PDS_OUTBOUND_ALLOW_PRIVATE: 'true',
  });
  client = await connectHttp(CLIENTS.at(-1)!, `${pds.url}/mcp?toolsets=all`, { authorization: `Bearer ${await pds.token('root')}` });
});
afterAll(async () => {
  await client?.close();
  await pds?.stop();
  await prometheus?.close();
});

type Progress = { progress: number; total?: number; message?: string };

async function call(name: string, args: Record<string, unknown>, progress?: Progress[]): Promise<any> {
  const result = await client.callTool({ name, arguments: args }, progress ? { onprogress: (p) => progress.push(p) } : undefined);
  expect(result.isError, `${name}: ${JSON.stringify(result.content)}`).toBeFalsy();
  return result.structuredContent;
}

it('deploys with canary, waits with progress through the steps, sees the automatic rollback and its diagnosis', async () => {
  await call('platform_create_tenant', { team_name: TEAM, admins: 'root', wait_seconds: 30 });
  await call('platform_grant_repo_access', { team_name: TEAM, repo: `${TEAM}/web` });
  await call('platform_sync_repos', { team: TEAM });
  const onboarded = await call('platform_deploy_service', {
    action: 'onboard', team_name: TEAM, component_name: 'web', dockerfile_repo: `${TEAM}/web`, git_tag: '0.1.0', port: '8080',
    strategy: 'canary', canary_steps: '10%:5s,50%:5s', wait_seconds: 30,
  });
  expect(onboarded).toMatchObject({ phase: 'succeeded' });

  // A good release: Prometheus reports 0.4% errors; the wait reports each canary step as it comes.
  prometheus.setErrorRate('canary-web', 0.004);
  const progress: Progress[] = [];
  const good = await call('platform_deploy_service', {
    action: 'deploy', team_name: TEAM, component_name: 'web', dockerfile_repo: `${TEAM}/web`, git_tag: '0.2.0', wait_seconds: 30,
  }, progress);
  expect(good).toMatchObject({ phase: 'succeeded', settled: true });
  const messages = progress.map((p) => p.message ?? '');
  expect(messages.some((m) => /canary step 1\/2: 10% of traffic to 0\.2\.0/.test(m)), JSON.stringify(messages)).toBe(true);
  expect(messages.some((m) => /canary step 2\/2: 50% of traffic to 0\.2\.0/.test(m)), JSON.stringify(messages)).toBe(true);
  const detail = await call('platform_get_workflow', { name: good.workflowName });
  expect(detail.steps.filter((s: any) => s.name.startsWith('canary step')).map((s: any) => s.message)).toEqual([
    'analysis passed: GET /healthz → 200, error rate 0.4% ≤ 5%',
    'analysis passed: GET /healthz → 200, error rate 0.4% ≤ 5%',
  ]);
  expect(prometheus.queries).toContain(errorRateQuery(TEAM, 'canary-web'));

  // A bad release: 7.2% errors. The wait answers the failure with the analysis's reason; nobody rolled back by hand.
  prometheus.setErrorRate('canary-web', 0.072);
  const bad = await call('platform_deploy_service', {
    action: 'deploy', team_name: TEAM, component_name: 'web', dockerfile_repo: `${TEAM}/web`, git_tag: '0.3.0', wait_seconds: 30,
  });
  expect(bad).toMatchObject({ phase: 'failed', settled: true });
  expect(bad.message).toContain('error rate 7.2% > 5% at step 1 (10%); rolled back to 0.2.0');
  const status = await call('platform_get_status', { team: TEAM, app: 'web' });
  expect(status).toMatchObject({
    argocd: { healthStatus: 'Healthy', message: expect.stringMatching(/^rolled back: 0\.3\.0 error rate 7\.2% > 5% at step 1 \(10%\)/) },
    service: { imageTag: '0.2.0' },
    rollout: { strategy: 'canary', phase: 'Aborted', canaryWeight: 0, stableTag: '0.2.0', canaryTag: '0.3.0', workflowName: bad.workflowName },
  });

  const diagnosis = await call('platform_diagnose_service', { team: TEAM, app: 'web' });
  expect(diagnosis.verdict).toBe('degraded');
  expect(diagnosis.summary).toMatch(/canary release of 0\.3\.0 was rolled back \(error rate 7\.2% > 5% at step 1 \(10%\); rolled back to 0\.2\.0\); 0\.2\.0 serves all traffic/);
  expect(diagnosis.findings).toContainEqual(expect.objectContaining({ area: 'rollout', severity: 'warning' }));
  expect(diagnosis.rollout).toMatchObject({ phase: 'Aborted' });
  expect(diagnosis.nextActions.join()).not.toContain('platform_rollback_service');
});
