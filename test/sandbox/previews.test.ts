import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { ONBOARD, openSandbox, run, tempDir, waitFor } from './helpers.js';

const PREVIEW = { team_name: 'acme', component_name: 'web', image_tag: '0.2.0', ttl_hours: '1' };

/** Whether the preview is in the record store, read through a connection of its own (not through the platform). */
async function previewOnDisk(dir: string): Promise<boolean> {
  const db = new BetterSqlite3(path.join(dir, 'pds.db'), { readonly: true });
  try {
    return db.prepare("select 1 from services where team = 'acme' and name = 'web-preview-0-2-0'").get() !== undefined;
  } finally {
    db.close();
  }
}

describe('sandbox previews', () => {
  it('deploys a preview as its own service and removes it when its TTL runs out, with nobody calling', async () => {
    const dir = await tempDir();
    const platform = await openSandbox(dir, { hourMs: 1000 });
    await run(platform, 'create-tenant', { team_name: 'acme' });
    await run(platform, 'deploy-service', ONBOARD);

    const deployed = await run(platform, 'preview-deploy', PREVIEW);
    expect(deployed.phase).toBe('succeeded');
    expect(await platform.backend.getService('acme', 'web-preview-0-2-0')).toEqual({
      team: 'acme',
      name: 'web-preview-0-2-0',
      imageTag: '0.2.0',
      host: 'acme-web-preview-0-2-0.apps.test',
      port: '8080',
      componentType: 'preview',
      hasDatabase: false,
    });
    expect((await platform.backend.resources('acme')).used).toEqual({ cpu: '500m', memory: '512Mi', pods: '2' });
    expect(await previewOnDisk(dir)).toBe(true);

    // Only the database is watched: no call into the platform may be what removes the preview.
    await waitFor(async () => !(await previewOnDisk(dir)), 'the preview to expire');
    await waitFor(async () => (await platform.backend.getService('acme', 'web-preview-0-2-0')) === undefined, 'the read to follow');
    expect(await platform.backend.getService('acme', 'web')).toBeDefined();
    const { lines } = await platform.backend.logs('acme', 'web', { lines: 5, sinceSeconds: 3600 });
    expect(lines.at(-1)).toMatchObject({ line: 'preview web-preview-0-2-0 (0.2.0) expired after 1h and was removed', labels: { source: 'sandbox' } });
  });

  it('removes previews that expired while the sandbox was down as it starts', async () => {
    const dir = await tempDir();
    let clock = Date.parse('2026-01-01T00:00:00Z');
    const now = () => new Date(clock);
    const first = await openSandbox(dir, { now });
    await run(first, 'create-tenant', { team_name: 'acme' });
    await run(first, 'deploy-service', ONBOARD);
    await run(first, 'preview-deploy', { ...PREVIEW, ttl_hours: '24' });
    await first.close();
    expect(await previewOnDisk(dir)).toBe(true);

    clock += 23 * 3_600_000;
    const second = await openSandbox(dir, { now });
    expect(await second.backend.getService('acme', 'web-preview-0-2-0')).toBeDefined();
    await second.close();

    clock += 2 * 3_600_000;
    const third = await openSandbox(dir, { now });
    expect(await third.backend.getService('acme', 'web-preview-0-2-0')).toBeUndefined();
    expect(await previewOnDisk(dir)).toBe(false);
  });

  it('deletes a preview on request and explains what exists when asked for one that does not', async () => {
    const platform = await openSandbox(await tempDir());
    await run(platform, 'create-tenant', { team_name: 'acme' });
    expect(await run(platform, 'preview-deploy', PREVIEW)).toMatchObject({
      phase: 'failed',
      message: 'service acme/web is not onboarded; a preview needs its base service',
    });
    await run(platform, 'deploy-service', ONBOARD);
    await run(platform, 'preview-deploy', PREVIEW);

    expect(await run(platform, 'preview-delete', { team_name: 'acme', component_name: 'web', image_tag: '0.3.0' })).toMatchObject({
      phase: 'failed',
      message: 'no preview of acme/web at 0.3.0; previews exist for 0.2.0',
    });
    expect(await run(platform, 'preview-delete', { team_name: 'acme', component_name: 'web', image_tag: '0.2.0' })).toMatchObject({
      phase: 'succeeded',
    });
    expect((await platform.backend.listServices('acme')).map((s) => s.name)).toEqual(['web']);
  });

  it('retiring the base service removes its previews', async () => {
    const platform = await openSandbox(await tempDir());
    await run(platform, 'create-tenant', { team_name: 'acme' });
    await run(platform, 'deploy-service', ONBOARD);
    await run(platform, 'preview-deploy', PREVIEW);
    expect(await run(platform, 'retire-service', { team_name: 'acme', component_name: 'web-preview-0-2-0' })).toMatchObject({
      phase: 'failed',
      message: 'acme/web-preview-0-2-0 is a preview environment; remove it with preview-delete',
    });
    await run(platform, 'retire-service', { team_name: 'acme', component_name: 'web' });
    expect(await platform.backend.listServices('acme')).toEqual([]);
  });
});
