/**
 * `watch()` (`adapters/kubernetes/informers.ts`) stopped while its first list is still on its way, on the real API
 * server: client-node's ListWatch goes on to hand out the list and to open its watch anyway. Nothing may reach pds after
 * stop(), and no watch may stay open.
 */
import { CoreV1Api, type KubeConfig, type V1ConfigMap } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { watch } from '../../adapters/kubernetes/informers.js';
import { silentLogger } from '../../core/logger.js';
import { adminKubeConfig } from '../fixtures/kube-apiserver.js';
import { until } from '../helpers/until.js';

const NAMESPACE = 'informer-stop';
let admin: KubeConfig;
let core: CoreV1Api;

beforeAll(async () => {
  admin = adminKubeConfig(inject('kubeconfigPath'));
  core = admin.makeApiClient(CoreV1Api);
  await core.createNamespace({ body: { metadata: { name: NAMESPACE } } });
  await core.createNamespacedConfigMap({ namespace: NAMESPACE, body: { metadata: { name: 'before' } } });
});
afterAll(async () => {
  await core.deleteNamespace({ name: NAMESPACE }).catch(() => {});
});

describe('watch() stopped during its first list', () => {
  it('hands nothing out after stop(), and opens no watch', async () => {
    const path = `/api/v1/namespaces/${NAMESPACE}/configmaps`;
    let listed!: () => void;
    const listAnswered = new Promise<void>((resolve) => (listed = resolve));
    const list = async () => {
      const answer = await core.listNamespacedConfigMap({ namespace: NAMESPACE });
      listed();
      return answer;
    };
    const watched = watch<V1ConfigMap>(admin, 'configmaps', path, list, {}, silentLogger);
    const seen: string[] = [];
    watched.on('add', (cm) => void seen.push(cm.metadata!.name!));
    await watched.stop(); // the list is on its way
    await listAnswered;

    // A running informer (the probe) sees an object made now; the stopped one's callbacks see nothing, before or after.
    const probe = watch<V1ConfigMap>(admin, 'probe', path, () => core.listNamespacedConfigMap({ namespace: NAMESPACE }), {}, silentLogger);
    const probeSeen: string[] = [];
    probe.on('add', (cm) => void probeSeen.push(cm.metadata!.name!));
    try {
      await probe.synced;
      await core.createNamespacedConfigMap({ namespace: NAMESPACE, body: { metadata: { name: 'after' } } });
      await until('the probe to see after', () => probeSeen.includes('after'), 30);
    } finally {
      await probe.stop();
    }
    expect(probeSeen).toContain('before');
    expect(seen).toEqual([]);
    // The stopped informer's cache was filled by the list but never by a watch: it has no 'after'.
    expect(watched.get('after', NAMESPACE)).toBeUndefined();
  }, 60_000);
});
