import { describe, expect, it } from 'vitest';
import { ONBOARD, openSandbox, run, tempDir } from './helpers.js';

describe('sandbox reads', () => {
  it('answers NotFound with the contract messages', async () => {
    const platform = await openSandbox(await tempDir());
    await run(platform, 'create-tenant', { team_name: 'acme' });
    await expect(platform.backend.status('acme', 'web')).rejects.toMatchObject({
      code: 'NOT_FOUND',
      message: 'GitOps application not found: acme-web',
    });
    await expect(platform.backend.logs('acme', 'web', { lines: 10, sinceSeconds: 60 })).rejects.toMatchObject({
      code: 'NOT_FOUND',
      message: 'service not found: acme/web',
    });
    await expect(platform.backend.logs('nope', 'web', { lines: 10, sinceSeconds: 60 })).rejects.toMatchObject({
      code: 'NOT_FOUND',
      message: 'service not found: nope/web (tenant nope does not exist)',
    });
    await expect(platform.backend.resources('nope')).rejects.toMatchObject({ code: 'NOT_FOUND', message: 'tenant not found: nope' });
    expect(await platform.backend.getTenant('nope')).toBeUndefined();
    expect(await platform.backend.getService('acme', 'web')).toBeUndefined();
  });

  it('lists services sorted by team then name, and filters by team', async () => {
    const platform = await openSandbox(await tempDir(), { stepMs: 0 });
    await run(platform, 'create-tenant', { team_name: 'zeta' });
    await run(platform, 'create-tenant', { team_name: 'acme' });
    for (const [team, app] of [['zeta', 'api'], ['acme', 'web'], ['acme', 'api']] as const) {
      await run(platform, 'deploy-service', { ...ONBOARD, team_name: team, component_name: app, dockerfile_repo: `${team}/${app}` });
    }
    expect((await platform.backend.listServices()).map((s) => `${s.team}/${s.name}`)).toEqual(['acme/api', 'acme/web', 'zeta/api']);
    expect((await platform.backend.listServices('zeta')).map((s) => s.name)).toEqual(['api']);
  });

  it('shows the newest lines within the window, oldest first, and says what is left out', async () => {
    let clock = Date.parse('2026-03-01T12:00:00Z');
    const platform = await openSandbox(await tempDir(), { now: () => new Date((clock += 1000)) });
    await run(platform, 'create-tenant', { team_name: 'acme' });
    await run(platform, 'deploy-service', ONBOARD);

    const all = await platform.backend.logs('acme', 'web', { lines: 1000, sinceSeconds: 3600 });
    expect(all.note).toBe(`${all.lines.length} lines from the last 1h of the sandbox's workflow and deployment events for acme/web`);
    const last3 = await platform.backend.logs('acme', 'web', { lines: 3, sinceSeconds: 3600 });
    expect(last3.lines).toEqual(all.lines.slice(-3));
    expect(last3.note).toBe(
      `3 lines from the last 1h of the sandbox's workflow and deployment events for acme/web; ${all.lines.length - 3} older lines not shown`,
    );

    clock += 2 * 3_600_000;
    const later = await platform.backend.logs('acme', 'web', { lines: 100, sinceSeconds: 900 });
    expect(later.lines).toEqual([]);
    expect(later.note).toBe("0 lines from the last 15m of the sandbox's workflow and deployment events for acme/web");
  });

  it('reports quotas and the nominal requests of services and databases', async () => {
    const platform = await openSandbox(await tempDir());
    await run(platform, 'create-tenant', { team_name: 'acme', cpu: '2', memory: '2Gi', pods: '5' });
    expect(await platform.backend.resources('acme')).toMatchObject({
      tenant: 'acme',
      allocated: { cpu: '2', memory: '2Gi', pods: '5' },
      used: { cpu: '0', memory: '0', pods: '0' },
    });
    await run(platform, 'deploy-service', ONBOARD);
    await run(platform, 'deploy-service', { ...ONBOARD, component_name: 'api' });
    await run(platform, 'deploy-service', { ...ONBOARD, component_name: 'worker' });
    const usage = await platform.backend.resources('acme');
    expect(usage.used).toEqual({ cpu: '750m', memory: '768Mi', pods: '3' });
    expect(usage.note).toMatch(/nominal/);
  });
});
