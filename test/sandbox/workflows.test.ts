import { recordingLogger } from '../helpers/log.js';
import { describe, expect, it } from 'vitest';
import { submission } from './submission.js';
import { execute, ONBOARD, openSandbox, run, settled, tempDir, waitFor } from './helpers.js';

describe('sandbox workflows', () => {
  it('creates a tenant with the listed admins, or the submitter when none are listed', async () => {
    const platform = await openSandbox(await tempDir());
    const listed = await run(platform, 'create-tenant', { team_name: 'acme', admins: 'bob, carol', cpu: '2', memory: '4Gi', pods: '10' });
    expect(listed.phase).toBe('succeeded');
    expect(await platform.backend.getTenant('acme')).toMatchObject({
      name: 'acme',
      displayName: 'acme',
      quotas: { cpu: '2', memory: '4Gi', pods: '10' },
      members: [
        { userId: 'bob', role: 'admin' },
        { userId: 'carol', role: 'admin' },
      ],
    });

    await run(platform, 'create-tenant', { team_name: 'beta', display_name: 'Beta Team' }, 'dave');
    expect(await platform.backend.getTenant('beta')).toMatchObject({
      displayName: 'Beta Team',
      quotas: { cpu: '4', memory: '8Gi', pods: '20' },
      members: [{ userId: 'dave', role: 'admin' }],
    });
    expect((await platform.backend.listTenants()).map((t) => t.name)).toEqual(['acme', 'beta']);

    const again = await run(platform, 'create-tenant', { team_name: 'acme' });
    expect(again).toMatchObject({ phase: 'failed', message: 'tenant acme already exists' });
  });

  it('onboards, deploys 0.1.1 and rolls back to 0.1.0, with status following each rollout', async () => {
    const platform = await openSandbox(await tempDir(), { stepMs: 15 });
    await run(platform, 'create-tenant', { team_name: 'acme' });

    const onboarding = await execute(platform, 'deploy-service', { ...ONBOARD, health_check_path: '/readyz' });
    const during = await waitFor(() => platform.backend.getService('acme', 'web'), 'service to appear');
    expect(during).toMatchObject({ imageTag: '', host: 'acme-web.apps.test', port: '8080', componentType: 'base-service', hasDatabase: false });
    expect((await platform.backend.status('acme', 'web')).argocd).toMatchObject({
      name: 'acme-web',
      syncStatus: 'OutOfSync',
      healthStatus: 'Progressing',
      message: 'onboarding 0.1.0',
    });
    expect(await settled(platform, onboarding)).toMatchObject({ phase: 'succeeded' });
    expect(await platform.backend.status('acme', 'web')).toEqual({
      argocd: { name: 'acme-web', syncStatus: 'Synced', healthStatus: 'Healthy', message: 'deployed 0.1.0' },
      service: { team: 'acme', name: 'web', imageTag: '0.1.0', host: 'acme-web.apps.test' },
    });
    expect(await platform.audit.get(onboarding)).toMatchObject({ status: 'succeeded' });

    const deploying = await execute(platform, 'deploy-service', {
      action: 'deploy',
      team_name: 'acme',
      component_name: 'web',
      git_tag: '0.1.1',
      dockerfile_repo: 'acme/web',
    });
    const progressing = await waitFor(async () => {
      const s = await platform.backend.status('acme', 'web');
      return s.argocd.healthStatus === 'Progressing' ? s : undefined;
    }, 'deploy to start');
    expect(progressing.argocd).toMatchObject({ syncStatus: 'OutOfSync', message: 'deploying 0.1.1' });
    expect(progressing.service.imageTag).toBe('0.1.0'); // only changes on success
    expect(await settled(platform, deploying)).toMatchObject({ phase: 'succeeded' });
    expect((await platform.backend.getService('acme', 'web'))?.imageTag).toBe('0.1.1');

    const rollingBack = await run(platform, 'rollback-service', { team_name: 'acme', component_name: 'web', target_tag: '0.1.0' });
    expect(rollingBack.phase).toBe('succeeded');
    expect(await platform.backend.status('acme', 'web')).toMatchObject({
      argocd: { syncStatus: 'Synced', healthStatus: 'Healthy' },
      service: { imageTag: '0.1.0' },
    });

    const { lines } = await platform.backend.logs('acme', 'web', { lines: 1000, sinceSeconds: 3600 });
    const text = lines.map((l) => l.line);
    expect(text).toContain('step 2/9: clone acme/web@0.1.0');
    expect(text).toContain('readiness probe GET /readyz → 200');
    // Images are keyed by their source and pulled by digest (core/images.ts).
    expect(text.some((l) => /^pulled image registry\.apps\.test\/src\/acme\/web:0\.1\.1@sha256:[0-9a-f]{64}$/.test(l))).toBe(true);
    const event = lines.find((l) => l.labels.source === 'deployment');
    expect(event?.labels.pod).toMatch(/^acme-web-[a-z0-9]{10}-[a-z0-9]{5}$/);
    expect(lines.find((l) => l.labels.workflow === deploying)?.labels).toMatchObject({ source: 'workflow' });
    expect(lines.every((l) => /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/.test(l.timestamp))).toBe(true);
    expect([...lines].map((l) => l.timestamp)).toEqual([...lines].map((l) => l.timestamp).sort());
  });

  it('fails a deploy of a service that was never onboarded, and its audit entry with it', async () => {
    const platform = await openSandbox(await tempDir());
    await run(platform, 'create-tenant', { team_name: 'acme' });
    const name = await execute(platform, 'deploy-service', {
      action: 'deploy',
      team_name: 'acme',
      component_name: 'web',
      git_tag: '0.1.1',
      dockerfile_repo: 'acme/web',
    });
    const failed = await settled(platform, name);
    const message = 'service acme/web is not onboarded; run deploy-service with action=onboard first';
    expect(failed).toMatchObject({ phase: 'failed', message });
    expect(failed.finishedAt).toBeDefined();
    expect(await platform.audit.get(name)).toMatchObject({ status: 'failed', message });
    expect(await platform.backend.getService('acme', 'web')).toBeUndefined();
  });

  it('refuses to onboard twice, leaving the service healthy', async () => {
    const platform = await openSandbox(await tempDir());
    await run(platform, 'create-tenant', { team_name: 'acme' });
    await run(platform, 'deploy-service', ONBOARD);
    expect(await run(platform, 'deploy-service', ONBOARD)).toMatchObject({
      phase: 'failed',
      message: 'service acme/web is already onboarded; use action=deploy',
    });
    expect((await platform.backend.status('acme', 'web')).argocd).toMatchObject({ syncStatus: 'Synced', healthStatus: 'Healthy' });
  });

  it('onboarding needs the tenant', async () => {
    const platform = await openSandbox(await tempDir());
    expect(await run(platform, 'deploy-service', ONBOARD)).toMatchObject({
      phase: 'failed',
      message: 'tenant acme does not exist; run create-tenant first',
    });
  });

  it('runs only validated submissions: the contract refuses unknown operations and actions before the engine sees them', async () => {
    // Validation happens once, at the door (issue 8); the engine has no re-checks that could disagree with it.
    expect(() => submission('wf-1', 'scale-service', { team_name: 'acme' }, 'alice')).toThrow(/not an operation/);
    expect(() => submission('wf-2', 'deploy-service', { action: 'explode', team_name: 'acme', component_name: 'web' }, 'alice')).toThrow(
      /action/,
    );
    expect(() =>
      submission('wf-3', 'deploy-service', { action: 'update-config', team_name: 'acme', component_name: 'web', env_vars: 'A=1\nnot a pair' }, 'alice'),
    ).toThrow(/line 2 must be KEY=VALUE/);
  });

  it('updates config, provisions a database, retires a service and deletes a tenant', async () => {
    const platform = await openSandbox(await tempDir());
    await run(platform, 'create-tenant', { team_name: 'acme' });
    await run(platform, 'deploy-service', ONBOARD);
    await run(platform, 'deploy-service', { ...ONBOARD, component_name: 'api', dockerfile_repo: 'acme/api' });

    const config = await run(platform, 'deploy-service', {
      action: 'update-config',
      team_name: 'acme',
      component_name: 'web',
      env_vars: 'LOG_LEVEL=debug\n# comment\n\nGREETING=a=b',
    });
    expect(config).toMatchObject({ phase: 'succeeded', message: 'config of acme/web updated (2 variables)' });
    expect((await platform.backend.status('acme', 'web')).argocd).toMatchObject({ healthStatus: 'Healthy' });
    const { lines } = await platform.backend.logs('acme', 'web', { lines: 1000, sinceSeconds: 3600 });
    expect(lines.some((l) => l.line.includes('a=b'))).toBe(false); // values are never logged

    expect(await run(platform, 'provision-database', { team_name: 'acme', component_name: 'web', storage: '2Gi' })).toMatchObject({ phase: 'succeeded' });
    expect((await platform.backend.getService('acme', 'web'))?.hasDatabase).toBe(true);
    expect(await platform.backend.resources('acme')).toMatchObject({
      allocated: { cpu: '4', memory: '8Gi', pods: '20' },
      used: { cpu: '1', memory: '1Gi', pods: '3' },
    });

    expect(await run(platform, 'retire-service', { team_name: 'acme', component_name: 'web' })).toMatchObject({ phase: 'succeeded' });
    expect((await platform.backend.listServices('acme')).map((s) => s.name)).toEqual(['api']);
    await expect(platform.backend.status('acme', 'web')).rejects.toMatchObject({ code: 'NOT_FOUND' });

    expect(await run(platform, 'delete-tenant', { team_name: 'acme' })).toMatchObject({ phase: 'succeeded' });
    expect(await platform.backend.getTenant('acme')).toBeUndefined();
    expect(await platform.backend.listServices()).toEqual([]);
  });

  it('reports every step change to onChange listeners until unsubscribed, with the steps and who submitted what', async () => {
    const platform = await openSandbox(await tempDir(), { stepMs: 0 });
    const changes: Array<{ phase: string; steps: string[] }> = [];
    const stop = platform.workflows.onChange((r) => {
      if (r.name.startsWith('create-tenant')) changes.push({ phase: r.phase, steps: r.steps.map((s) => s.status) });
    });
    const done = await run(platform, 'create-tenant', { team_name: 'acme' }, 'alice');
    // Listeners are told after the record is written; run() saw the record: wait for the telling too.
    await waitFor(() => changes.at(-1)?.phase === 'succeeded', 'the last change to be told');
    const acme = await platform.backend.getTenantRef('acme');
    expect(done).toMatchObject({ team: 'acme', userId: 'alice', tenantUid: acme!.uid, parameters: { team_name: 'acme' } });
    expect(done).not.toHaveProperty('service');
    expect(done.steps).toHaveLength(5);
    expect(done.steps.every((s) => s.status === 'succeeded' && s.startedAt && s.finishedAt)).toBe(true);
    // Submitted (all pending), then one change per step; the next step shows as running.
    expect(changes[0]).toEqual({ phase: 'submitted', steps: ['pending', 'pending', 'pending', 'pending', 'pending'] });
    expect(changes[1]).toEqual({ phase: 'submitted', steps: ['succeeded', 'running', 'pending', 'pending', 'pending'] });
    expect(changes.at(-1)).toEqual({ phase: 'succeeded', steps: Array(5).fill('succeeded') });
    expect(changes).toHaveLength(6);
    stop();
    const failed = await run(platform, 'create-tenant', { team_name: 'acme' }, 'bob');
    expect(changes).toHaveLength(6);
    expect(failed.phase).toBe('failed');
    expect(failed.steps.map((s) => s.status)).toEqual(['failed', 'skipped', 'skipped', 'skipped', 'skipped']);
    expect(failed.steps[0]!.message).toBe(failed.message);
  });

  it('calls every onSettled listener once per workflow, and settles the audit entry recorded with the submission', async () => {
    const recorded = recordingLogger();
    const platform = await openSandbox(await tempDir(), { stepMs: 0, log: recorded.log });
    const seen: string[] = [];
    platform.workflows.onSettled((r) => seen.push(`${r.name}:${r.phase}`));
    platform.workflows.onSettled(() => {
      throw new Error('a broken listener does not stop the others');
    });
    await platform.workflows.submit(submission('wf-late', 'create-tenant', { team_name: 'acme' }, 'alice'));
    await settled(platform, 'wf-late');
    const acme = await platform.backend.getTenantRef('acme');
    // The entry came with the submission; the tenant it created owns it now.
    expect(await platform.audit.get('wf-late')).toMatchObject({ status: 'succeeded', message: 'tenant acme created', tenantUid: acme!.uid });
    await expect(
      platform.audit.append({
        id: '1', timestamp: new Date().toISOString(), userId: 'alice', operation: 'create-tenant', parameters: { team_name: 'acme' },
        workflowName: 'wf-late', status: 'submitted', riskLevel: 'medium', message: '',
      }, {}),
    ).rejects.toMatchObject({ code: 'CONFLICT' });
    // Settled in the store does not mean the listeners were called yet: await the call, not a fixed pause.
    await waitFor(() => seen.length > 0, 'the onSettled listener');
    expect(seen).toEqual(['wf-late:succeeded']);
    expect(recorded.lines).toContainEqual(
      expect.objectContaining({ level: 'error', workflow: 'wf-late', err: expect.objectContaining({ message: 'a broken listener does not stop the others' }) }),
    );
    await expect(
      platform.workflows.submit(submission('wf-late', 'create-tenant', { team_name: 'other' }, 'a')),
    ).rejects.toMatchObject({ code: 'CONFLICT' });
    expect(await platform.workflows.get('nope')).toBeUndefined();
  });
});
