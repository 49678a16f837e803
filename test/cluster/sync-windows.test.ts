/**
 * Sync windows re-applied at start-up (issue 20 item 1): pds writes a tenant's freeze windows into its Argo CD
 * AppProject when the policy changes; a pds starting up brings every AppProject back in step with the stored policy
 * (an AppProject re-created or edited while no pds ran), and leaves one already in step untouched. On the test API
 * server, under pds's ServiceAccount (test/cluster/platform.ts), records in PostgreSQL shared by the three processes.
 */
import { CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../core/logger.js';
import { ARGOCD, startClusterHarness, type ClusterHarness } from './platform.js';

const TEAM = 'windows-team';
const weekend = { name: 'weekend', schedule: '0 18 * * 5', duration: '2d', timeZone: 'Europe/Berlin', operations: ['*'], reason: 'no one on call' };
const argoWeekend = {
  kind: 'deny', schedule: '0 18 * * 5', duration: '48h', timeZone: 'Europe/Berlin', applications: ['*'], manualSync: true, description: 'pds freeze window "weekend": no one on call',
};
const theirs = { kind: 'allow', schedule: '0 2 * * *', duration: '1h', applications: ['*'], description: 'night syncs' };

describe('AppProject sync windows at start-up', () => {
  let h: ClusterHarness;
  let objects: CustomObjectsApi;
  const project = { group: 'argoproj.io', version: 'v1alpha1', namespace: ARGOCD, plural: 'appprojects', name: TEAM };
  const read = async () => (await objects.getNamespacedCustomObject(project)) as { metadata: { resourceVersion: string }; spec: { syncWindows?: unknown[] } };

  beforeAll(async () => {
    h = await startClusterHarness({});
    objects = h.admin.makeApiClient(CustomObjectsApi);
    // A tenant as create-tenant leaves it, as far as pds reads it here: its Namespace and its AppProject.
    await h.admin.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: TEAM, labels: { 'pds.dev/managed-by': 'pds', 'pds.dev/tenant': TEAM } } } });
    await objects.createNamespacedCustomObject({
      ...project,
      body: { apiVersion: 'argoproj.io/v1alpha1', kind: 'AppProject', metadata: { name: TEAM, namespace: ARGOCD }, spec: { sourceRepos: ['*'] } },
    });
  }, 240_000);
  afterAll(async () => {
    await h?.admin.makeApiClient(CoreV1Api).deleteNamespace({ name: TEAM }).catch(() => {});
    await objects?.deleteNamespacedCustomObject(project).catch(() => {});
    await h?.stop();
  });

  it('writes the stored policy\'s windows back into an AppProject that lost them, keeps windows added by hand, and patches nothing when in step', async () => {
    const first = await h.platform({ log: silentLogger });
    // Other suites' tenants may share the API server: only this tenant is asserted on.
    expect(await first.syncWindowsReapplied).not.toContain(TEAM);
    const tenant = await first.backend.getTenantRef(TEAM);
    expect(tenant).toBeDefined();
    await first.governance.setPolicy(tenant!, { freezeWindows: [weekend] }, { userId: 'root', timestamp: new Date().toISOString() });
    expect((await read()).spec.syncWindows).toEqual([argoWeekend]);
    await first.close();

    // While no pds runs, the AppProject is re-made without pds's window (someone else's window is there now).
    await objects.patchNamespacedCustomObject({ ...project, body: [{ op: 'add', path: '/spec/syncWindows', value: [theirs] }] });
    const second = await h.platform({ log: silentLogger });
    expect(await second.syncWindowsReapplied).toContain(TEAM);
    const after = await read();
    expect(after.spec.syncWindows).toEqual([theirs, argoWeekend]);
    await second.close();

    // Idempotent: a pds starting against an AppProject in step reads it and writes nothing.
    const third = await h.platform({ log: silentLogger });
    expect(await third.syncWindowsReapplied).not.toContain(TEAM);
    expect((await read()).metadata.resourceVersion).toBe(after.metadata.resourceVersion);
    await third.close();
  }, 240_000);
});
