/**
 * The sandbox engine's cancel (issue 22 item 5) with two processes on one PostgreSQL database: one holds the
 * workflow's lease with a step held open (`test/helpers/step-hold.ts`), the other cancels. The step then finds the
 * workflow settled and commits nothing; the service is back on its last good tag; the queue lets the next workflow of
 * the service run.
 */
import { describe, expect, it } from 'vitest';
import { testLocation } from '../sql/helpers.js';
import { stepHolds } from '../helpers/step-hold.js';
import { execute, ONBOARD, openSandbox, run, settled, tempDir } from './helpers.js';

describe('cancelling a workflow another process runs', () => {
  it('settles it failed "cancelled by", and the process holding the lease runs none of its later steps', async () => {
    const { databaseUrl } = await testLocation('postgres');
    const holds = stepHolds();
    const a = await openSandbox(await tempDir(), { databaseUrl, stepMs: 5, beforeStep: holds.beforeStep });
    await run(a, 'create-tenant', { team_name: 'acme' });
    await run(a, 'deploy-service', ONBOARD);
    const held = holds.hold('deploy-service-', 3);
    const { team_name, component_name, dockerfile_repo } = ONBOARD;
    const deploy = await execute(a, 'deploy-service', { action: 'deploy', team_name, component_name, dockerfile_repo, git_tag: '0.2.0' });
    try {
      await held.reached;
      // b starts while a holds the lease (a runs the workflow; b only cancels it).
      const b = await openSandbox(await tempDir(), { databaseUrl, stepMs: 5 });
      const cancelled = await b.workflows.cancel(deploy, { userId: 'bob' });
      expect(cancelled).toMatchObject({ phase: 'failed', message: 'cancelled by bob', cancelledBy: 'bob' });
      await expect(b.workflows.cancel(deploy, { userId: 'bob' })).rejects.toMatchObject({ code: 'CONFLICT' });
    } finally {
      held.release();
    }
    expect(await a.backend.status('acme', 'web')).toMatchObject({ argocd: { syncStatus: 'Synced', healthStatus: 'Healthy' }, service: { imageTag: '0.1.0' } });
    const next = await execute(a, 'rollback-service', { team_name: 'acme', component_name: 'web', target_tag: '0.1.0' });
    expect((await settled(a, next)).phase).toBe('succeeded');
    const run1 = await a.workflows.get(deploy);
    expect(run1).toMatchObject({ phase: 'failed', message: 'cancelled by bob' });
    expect(run1!.steps.map((s) => s.status)).toEqual(['succeeded', 'succeeded', 'succeeded', 'failed', ...run1!.steps.slice(4).map(() => 'skipped')]);
    expect(await a.audit.get(deploy)).toMatchObject({ status: 'failed', message: 'cancelled by bob' });
  });
});
