/**
 * A refused `pods/log` read on the real API server (issue 18 item 6): a ServiceAccount that may list pods but lacks
 * `pods/log` gets the API server's own 403, and pds reports it as `Upstream` (502) with that 403 as its cause, never
 * as a pod "without readable logs yet".
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { CoreV1Api, RbacAuthorizationV1Api, type KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { loadKubeConfig } from '../../adapters/kubernetes/kubeconfig.js';
import { LABEL } from '../../adapters/kubernetes/objects.js';
import { podLogSource } from '../../adapters/kubernetes/pod-logs.js';
import { PlatformError } from '../../core/errors.js';
import { adminKubeConfig } from '../fixtures/kube-apiserver.js';
import { serviceAccountKubeConfig } from './deploy.js';

const TEAM = 'nolog-acme';
const ACCOUNT = { namespace: TEAM, name: 'pds-without-pod-logs' };
let admin: KubeConfig;
let dir: string;
let kubeconfigPath: string;

beforeAll(async () => {
  admin = adminKubeConfig(inject('kubeconfigPath'));
  const core = admin.makeApiClient(CoreV1Api);
  const rbac = admin.makeApiClient(RbacAuthorizationV1Api);
  await core.createNamespace({ body: { metadata: { name: TEAM } } });
  await core.createNamespacedServiceAccount({ namespace: TEAM, body: { metadata: { name: ACCOUNT.name } } });
  // Pods, but not their logs: what a ServiceAccount made from an older rule set, or a trimmed one, would hold.
  await rbac.createNamespacedRole({
    namespace: TEAM,
    body: { metadata: { name: ACCOUNT.name }, rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get', 'list', 'watch'] }] },
  });
  await rbac.createNamespacedRoleBinding({
    namespace: TEAM,
    body: {
      metadata: { name: ACCOUNT.name },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: ACCOUNT.name },
      subjects: [{ kind: 'ServiceAccount', namespace: TEAM, name: ACCOUNT.name }],
    },
  });
  await core.createNamespacedPod({
    namespace: TEAM,
    body: {
      metadata: { name: 'web-1', labels: { [LABEL.tenant]: TEAM, [LABEL.service]: 'web' } },
      // Its own ServiceAccount (made above), not "default", which the controller manager makes a moment after the
      // namespace: the ServiceAccount admission plugin refuses a pod whose account does not exist yet.
      spec: { nodeName: 'node-1', serviceAccountName: ACCOUNT.name, automountServiceAccountToken: false, containers: [{ name: 'web', image: 'registry.localhost/pds/nolog-acme/web:0.1.0' }] },
    },
  });
  dir = mkdtempSync(path.join(tmpdir(), 'pds-pod-logs-rbac-'));
  kubeconfigPath = (await serviceAccountKubeConfig(admin, ACCOUNT, dir)).path;
});

afterAll(async () => {
  await admin.makeApiClient(CoreV1Api).deleteNamespace({ name: TEAM }).catch(() => {});
  rmSync(dir, { recursive: true, force: true });
});

describe('a ServiceAccount without pods/log', () => {
  it('gets UPSTREAM (502) with the API server\'s 403 as the cause, not "without readable logs yet"', async () => {
    const source = podLogSource(loadKubeConfig(kubeconfigPath, 5_000));
    const err = await source.read(TEAM, 'web', { lines: 10, sinceSeconds: 60 }).then(
      (result) => expect.fail(`expected a refusal, got ${JSON.stringify(result)}`),
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(PlatformError);
    expect(err).toMatchObject({ code: 'UPSTREAM', status: 502 });
    expect((err as Error).message).toMatch(/HTTP 403: .*pods\/log/);
    expect(((err as Error).cause as { code?: number }).code).toBe(403);
  });
});
