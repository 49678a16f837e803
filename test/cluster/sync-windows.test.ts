/**
 * Sync windows re-applied at start-up (issue 20 item 1): pds writes a tenant's freeze windows into its Argo CD
 * AppProject when the policy changes; a pds starting up brings every AppProject back in step with the stored policy
 * (an AppProject re-created or edited while no pds ran), and leaves one already in step untouched. On the test API
 * server, under pds's ServiceAccount (test/cluster/platform.ts), records in PostgreSQL shared by the three processes.
 *
 * Start-up's API server requests (issue 23 item 3), seen through a proxy that records them
 * (test/fixtures/counting-proxy.ts): every informer's first list asks for `resourceVersion=0` (the API server's watch
 * cache, not etcd), and the AppProjects are read in one list, not one GET per tenant.
 */
import path from 'node:path';
import { CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../core/logger.js';
import { startCountingProxy } from '../fixtures/counting-proxy.js';
import { recordingLogger } from '../helpers/log.js';
import { ARGOCD, startClusterHarness, WORKFLOWS, type ClusterHarness } from './platform.js';

const TEAM = 'windows-team';
const weekend = { name: 'weekend', schedule: '0 18 * * 5', duration: '2d', timeZone: 'Europe/Berlin', operations: ['*'], reason: 'no one on call' };
const argoWeekend = {
  kind: 'deny', schedule: '0 18 * * 5', duration: '48h', timeZone: 'Europe/Berlin', applications: ['*'], manualSync: true, description: 'pds freeze window "weekend": no one on call',
};
const theirs = { kind: 'allow', schedule: '0 2 * * *', duration: '1h', applications: ['*'], description: 'night syncs' };

describe('AppProject sync windows at start-up', () => {
  let h: ClusterHarness;
  let objects: CustomObjectsApi;
  // More tenants, to tell one list from a GET per tenant: two with an AppProject, one without.
  const others = ['windows-other-a', 'windows-other-b', 'windows-bare'];
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
    for (const name of others) {
      await h.admin.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name, labels: { 'pds.dev/managed-by': 'pds', 'pds.dev/tenant': name } } } });
      if (name === 'windows-bare') continue;
      await objects.createNamespacedCustomObject({
        ...project,
        body: { apiVersion: 'argoproj.io/v1alpha1', kind: 'AppProject', metadata: { name, namespace: ARGOCD }, spec: { sourceRepos: ['*'] } },
      });
    }
  }, 240_000);
  afterAll(async () => {
    for (const name of [TEAM, ...others]) {
      await h?.admin.makeApiClient(CoreV1Api).deleteNamespace({ name }).catch(() => {});
      await objects?.deleteNamespacedCustomObject({ ...project, name }).catch(() => {});
    }
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

  it('starts with every informer listing from the watch cache (resourceVersion=0) and one AppProject list for all tenants', async () => {
    const proxy = await startCountingProxy(h.pdsKubeconfig, path.join(h.work, 'windows-counted.kubeconfig'));
    const { log, lines } = recordingLogger('warn');
    try {
      const p = await h.platform({ kubeconfigPath: proxy.kubeconfigPath, log });
      await p.syncWindowsReapplied;
      const gets = proxy.requests.filter((r) => r.startsWith('GET ')).map((r) => new URL(r.slice(4), 'http://x'));
      const lists = gets.filter((u) => !u.searchParams.has('watch'));
      const informerPaths = [
        '/api/v1/namespaces',
        '/api/v1/resourcequotas',
        '/apis/rbac.authorization.k8s.io/v1/rolebindings',
        '/apis/apps/v1/deployments',
        `/apis/argoproj.io/v1alpha1/namespaces/${ARGOCD}/applications`,
        `/apis/argoproj.io/v1alpha1/namespaces/${WORKFLOWS}/workflows`,
      ];
      for (const informerPath of informerPaths) {
        const first = lists.find((u) => u.pathname === informerPath);
        expect(first?.searchParams.get('resourceVersion'), informerPath).toBe('0');
      }
      const appProjects = `/apis/argoproj.io/v1alpha1/namespaces/${ARGOCD}/appprojects`;
      // Fewer than a page of AppProjects on the test API server, whatever other suites made: one list, no GET of one.
      expect(gets.filter((u) => u.pathname === appProjects)).toHaveLength(1);
      expect(gets.filter((u) => u.pathname.startsWith(`${appProjects}/`)).map((u) => u.pathname)).toEqual([]);
      // The tenant without an AppProject is named in one warning, not one line per tenant.
      const missing = lines.filter((l) => String(l.msg).startsWith('tenants without an Argo CD AppProject'));
      expect(missing).toHaveLength(1);
      expect(missing[0]).toMatchObject({ tenants: expect.arrayContaining(['windows-bare']) });
      expect(lines.filter((l) => String(l.msg).startsWith('tenant has no Argo CD AppProject'))).toEqual([]);
      await p.close();
    } finally {
      await proxy.stop();
    }
  }, 240_000);
});
