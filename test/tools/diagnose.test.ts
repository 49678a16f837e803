/**
 * `platform_diagnose_service` (issue 11 item 8) on the real sandbox: status, the last workflow's failure, error log
 * lines, quota pressure and the image's HEALTHCHECK path against the platform's probe path, each a finding with the
 * next calls in the caller's words; over invoke() (MCP words) and over REST (`GET /api/v1/diagnose/{team}/{app}`).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../config.js';
import { NotFound } from '../../core/errors.js';
import type { Identity } from '../../auth/identity.js';
import type { CodeHost, Platform } from '../../core/ports.js';
import { diagnoseService, healthcheckPath, probeOutcome, type Diagnosis } from '../../tools/diagnose.js';
import { invoke, type InvokeDeps } from '../../tools/invoke.js';
import { execute, ONBOARD, openSandbox, run, settled, tempDir } from '../sandbox/helpers.js';
import { stepHolds, type StepHolds } from '../helpers/step-hold.js';
import { executeAndWait, registerRepository, startTestServer, type TestServer } from '../helpers/server.js';

const who = (userId: string, admin = false): Identity => ({ userId, groups: [], admin, tokenKind: 'self-issued' });

/** What the repositories hold, for a code host that can read them (the sandbox's cannot). */
const BUILD_FILES: Record<string, string> = {
  'acme/web': 'FROM node:20-alpine\nHEALTHCHECK --interval=30s --timeout=5s --start-period=15s --retries=3 \\\n  CMD wget -qO- http://127.0.0.1:8787/healthz || exit 1\n',
};

async function setUp(dataDir?: string, stepMs = 0, beforeStep?: StepHolds['beforeStep']): Promise<{ platform: Platform; deps: InvokeDeps }> {
  const sandbox = await openSandbox(dataDir ?? (await tempDir()), { stepMs, ...(beforeStep && { beforeStep }) });
  const codeHost: CodeHost = {
    ...sandbox.codeHost,
    async readTree(repo, options) {
      const text = BUILD_FILES[repo];
      if (text === undefined) throw new NotFound(`repository ${repo} not found`);
      const wanted = options?.read ?? [];
      const files: Record<string, string> = wanted.includes('Dockerfile') ? { Dockerfile: text } : {};
      return { paths: ['Dockerfile'], files };
    },
  };
  const platform: Platform = { ...sandbox, kind: sandbox.kind, codeHost, ready: () => sandbox.ready(), close: () => sandbox.close() };
  const deps: InvokeDeps = { platform, config: loadConfig({ PDS_DOMAIN: 'apps.test' }), confirmSecret: new TextEncoder().encode('x'.repeat(32)) };
  return { platform, deps };
}

const diagnose = (deps: InvokeDeps, team = 'acme', app = 'web', user = who('alice')) =>
  invoke(diagnoseService, { team, app }, user, deps) as Promise<Diagnosis>;

describe('platform_diagnose_service', () => {
  it('finds a healthy service healthy, with its quota use, and names the service to verify', async () => {
    const { platform, deps } = await setUp();
    await run(platform, 'create-tenant', { team_name: 'acme', admins: 'alice' });
    await run(platform, 'deploy-service', ONBOARD);
    const d = await diagnose(deps);
    expect(d.verdict, JSON.stringify(d.findings)).toBe('healthy');
    expect(d.summary).toBe('acme/web is healthy: 0.1.0 runs at https://acme-web.apps.test');
    expect(d.status).toMatchObject({ syncStatus: 'Synced', healthStatus: 'Healthy' });
    expect(d.lastWorkflow).toMatchObject({ operation: 'deploy-service', status: 'succeeded' });
    expect(d.lastWorkflow?.failedStep).toBeUndefined();
    expect(d.errorLines).toEqual([]);
    expect(d.quota.map((q) => q.resource)).toEqual(['cpu', 'memory', 'pods']);
    expect(d.nextActions).toEqual(['platform_get_service {"team":"acme","app":"web"}']);
  });

  it('reports the failed last workflow with its message, its error lines, and the workflow to read', async () => {
    const { platform, deps } = await setUp();
    await run(platform, 'create-tenant', { team_name: 'acme', admins: 'alice' });
    await run(platform, 'deploy-service', ONBOARD);
    // A second onboarding the preflight would refuse, submitted past it, so its workflow fails inside the engine.
    const name = await execute(platform, 'deploy-service', ONBOARD);
    await settled(platform, name);
    const d = await diagnose(deps);
    expect(d.verdict).toBe('failing');
    expect(d.findings).toContainEqual({
      area: 'workflow',
      severity: 'error',
      message: `last workflow deploy-service (onboard) ${name} failed at step "validate onboarding of acme/web": service acme/web is already onboarded; use action=deploy`,
    });
    expect(d.summary).toMatch(/^acme\/web is failing: last workflow deploy-service \(onboard\) .* failed/);
    expect(d.errorLines.at(-1)?.line).toMatch(/failed/);
    expect(d.nextActions).toContain(`platform_get_workflow {"name":"${name}"}`);
    expect(d.nextActions).toContain('platform_get_logs {"team":"acme","app":"web","since":"1h"}');
    // The service still runs 0.1.0 and is healthy: nothing to roll back to.
    expect(d.nextActions.some((a) => a.startsWith('platform_rollback_service'))).toBe(false);
  });

  it('takes a cancelled last workflow as information, not a failure, and offers to retry it', async () => {
    const holds = stepHolds();
    const { platform, deps } = await setUp(undefined, 0, holds.beforeStep);
    await run(platform, 'create-tenant', { team_name: 'acme', admins: 'alice' });
    await run(platform, 'deploy-service', ONBOARD);
    const held = holds.hold('deploy-service-', 2);
    const { team_name, component_name, dockerfile_repo } = ONBOARD;
    const name = await execute(platform, 'deploy-service', { action: 'deploy', team_name, component_name, dockerfile_repo, git_tag: '0.2.0' });
    try {
      await held.reached;
      await platform.workflows.cancel(name, { userId: 'bob', reason: 'wrong tag' });
    } finally {
      held.release();
    }
    const d = await diagnose(deps);
    expect(d.verdict).toBe('healthy');
    expect(d.findings).toContainEqual({
      area: 'workflow',
      severity: 'info',
      message: `last workflow deploy-service (deploy) ${name} was cancelled by bob: wrong tag; the service runs what it ran before`,
    });
    expect(d.nextActions).toContain(`platform_retry_workflow {"name":"${name}"}`);
  });

  it('reports quota pressure: a full dimension is an error naming the tenant\'s usage', async () => {
    const { platform, deps } = await setUp();
    await run(platform, 'create-tenant', { team_name: 'acme', admins: 'alice', pods: '1' });
    await run(platform, 'deploy-service', ONBOARD);
    const d = await diagnose(deps);
    expect(d.quota).toContainEqual({ resource: 'pods', allocated: '1', used: '1', percent: 100 });
    expect(d.findings).toContainEqual({ area: 'quota', severity: 'error', message: 'pods 1 of 1 used (100%): new pods, rollouts and previews cannot start' });
    expect(d.nextActions).toContain('platform_get_resources {"tenant":"acme"}');
  });

  it('reports an image HEALTHCHECK that requests another path than the platform\'s probes', async () => {
    const { platform, deps } = await setUp();
    await run(platform, 'create-tenant', { team_name: 'acme', admins: 'alice' });
    await run(platform, 'deploy-service', { ...ONBOARD, health_check_path: '/api/health' });
    const d = await diagnose(deps);
    expect(d.verdict).toBe('degraded');
    expect(d.findings).toContainEqual({
      area: 'probe',
      severity: 'warning',
      message: expect.stringMatching(/^the platform probes \/api\/health but the image's HEALTHCHECK in acme\/web\/Dockerfile requests \/healthz/),
    });
    // With the default probe path the two agree.
    const { platform: p2, deps: d2 } = await setUp();
    await run(p2, 'create-tenant', { team_name: 'acme', admins: 'alice' });
    await run(p2, 'deploy-service', ONBOARD);
    expect((await diagnose(d2)).findings.filter((f) => f.area === 'probe')).toEqual([]);
  });

  it('judges the service itself: a queued preview is information, not degraded', async () => {
    const dir = await tempDir();
    const onboarded = await setUp(dir);
    await run(onboarded.platform, 'create-tenant', { team_name: 'acme', admins: 'alice' });
    await run(onboarded.platform, 'deploy-service', ONBOARD);
    await onboarded.platform.close();
    // The same records, with an engine whose first step waits a minute: the preview stays queued while we look.
    const { platform, deps } = await setUp(dir, 60_000);
    const preview = await execute(platform, 'preview-deploy', { team_name: 'acme', component_name: 'web', image_tag: '0.2.0', ttl_hours: '24' });
    expect((await platform.workflows.get(preview))?.phase).toBe('submitted');
    const d = await diagnose(deps);
    expect(d.verdict, JSON.stringify(d.findings)).toBe('healthy');
    expect(d.status).toMatchObject({ syncStatus: 'Synced', healthStatus: 'Healthy' });
    expect(d.lastWorkflow).toMatchObject({ operation: 'deploy-service', status: 'succeeded' });
    expect(d.findings).toContainEqual({ area: 'workflow', severity: 'info', message: expect.stringMatching(new RegExp(`^preview workflow preview-deploy ${preview} \\(0\\.2\\.0\\) is queued`)) });
    expect(d.nextActions).toContain(`platform_get_workflow {"name":"${preview}"}`);
  });

  it('answers 404 for a missing service or tenant and refuses a non-member, reading nothing', async () => {
    const { platform, deps } = await setUp();
    await run(platform, 'create-tenant', { team_name: 'acme', admins: 'alice' });
    await expect(diagnose(deps, 'acme', 'nope')).rejects.toMatchObject({ code: 'NOT_FOUND', message: expect.stringMatching(/^service not found: acme\/nope/) });
    await expect(diagnose(deps, 'ghost', 'web', who('root', true))).rejects.toMatchObject({ code: 'NOT_FOUND', message: 'tenant not found: ghost' });
    await expect(diagnose(deps, 'acme', 'web', who('mallory'))).rejects.toMatchObject({ code: 'FORBIDDEN' });
  });
});

describe('reading probe lines and HEALTHCHECK lines', () => {
  it('reads Kubernetes and sandbox probe lines', () => {
    expect(probeOutcome('Readiness probe failed: HTTP probe failed with statuscode: 404')).toEqual({ code: '404', path: undefined, failed: true });
    expect(probeOutcome('Liveness probe failed: Get "http://10.0.0.7:8080/healthz": dial tcp: connection refused')?.failed).toBe(true);
    expect(probeOutcome('readiness probe GET /healthz → 200')).toEqual({ code: '200', path: '/healthz', failed: false });
    expect(probeOutcome('readiness probe GET /healthz → 401')).toEqual({ code: '401', path: '/healthz', failed: true });
    expect(probeOutcome('container started on port 8080')).toBeUndefined();
  });

  it('reads the path of a HEALTHCHECK, across continuation lines; none for NONE or no URL', () => {
    expect(healthcheckPath(BUILD_FILES['acme/web']!)).toBe('/healthz');
    expect(healthcheckPath('HEALTHCHECK CMD ["curl", "-f", "http://localhost:8000/api/health"]')).toBe('/api/health');
    expect(healthcheckPath('HEALTHCHECK NONE')).toBeUndefined();
    expect(healthcheckPath('FROM scratch')).toBeUndefined();
  });
});

describe('GET /api/v1/diagnose/{team}/{app}', () => {
  let pds: TestServer;
  beforeAll(async () => {
    pds = await startTestServer();
    await executeAndWait(pds, 'root', 'create-tenant', { team_name: 'acme', admins: 'alice', viewers: 'dave' });
    await registerRepository(pds, 'alice', 'acme', 'acme/web');
    await executeAndWait(pds, 'alice', 'deploy-service', { action: 'onboard', team_name: 'acme', component_name: 'web', dockerfile_repo: 'acme/web', git_tag: '0.1.0', port: '8080' });
  });
  afterAll(() => pds.stop());

  it('answers a viewer with the diagnosis in REST words, and non-members with 403', async () => {
    const res = await pds.api('dave', 'GET', '/api/v1/diagnose/acme/web');
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ team: 'acme', app: 'web', verdict: 'healthy', nextActions: ['GET /api/v1/services/acme/web'] });
    expect((await pds.api('mallory', 'GET', '/api/v1/diagnose/acme/web')).status).toBe(403);
    const missing = await pds.api('dave', 'GET', '/api/v1/diagnose/acme/nope');
    expect(missing).toMatchObject({ status: 404, body: { error: 'service not found: acme/nope; the tenant\'s services: GET /api/v1/services?team=acme' } });
  });
});
