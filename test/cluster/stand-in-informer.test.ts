/**
 * The stand-in controllers' informer (`test/fixtures/stand-in-informer.ts`) on the real API server: client-node reports
 * the informer's own stop as an error, and the stand-in must not start again on it, nor act on anything after stop().
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { CoreV1Api, makeInformer, type KubeConfig, type V1ConfigMap } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { adminKubeConfig } from '../fixtures/kube-apiserver.js';
import { runStandInInformer } from '../fixtures/stand-in-informer.js';
import { until } from '../helpers/until.js';

const NAMESPACE = 'stand-in-informer';
let admin: KubeConfig;
let core: CoreV1Api;

beforeAll(async () => {
  admin = adminKubeConfig(inject('kubeconfigPath'));
  core = admin.makeApiClient(CoreV1Api);
  await core.createNamespace({ body: { metadata: { name: NAMESPACE } } });
});
afterAll(async () => {
  await core.deleteNamespace({ name: NAMESPACE }).catch(() => {});
});

const configMap = (name: string): V1ConfigMap => ({ metadata: { name, namespace: NAMESPACE } });

describe('runStandInInformer', () => {
  it('hands out events while running; after stop() it neither restarts nor calls a handler', async () => {
    const informer = makeInformer<V1ConfigMap>(admin, `/api/v1/namespaces/${NAMESPACE}/configmaps`, () => core.listNamespacedConfigMap({ namespace: NAMESPACE }));
    const errors: unknown[] = [];
    informer.on('error', (err) => void errors.push(err));
    // client-node calls 'connect' each time the informer (re)starts its list-and-watch.
    let connects = 0;
    informer.on('connect', () => void connects++);
    const added: string[] = [];
    const running = await runStandInInformer(informer, { add: (cm) => void added.push(cm.metadata!.name!) });
    expect(connects).toBe(1);

    await core.createNamespacedConfigMap({ namespace: NAMESPACE, body: configMap('before-stop') });
    await until('the add event of before-stop', () => added.includes('before-stop'), 30);

    await running.stop();
    // The premise: client-node reports its own stop (the aborted watch request) as an error.
    await until('client-node to report the aborted watch', () => errors.length > 0, 10);
    // Four times the restart delay (500 ms): a restart would have connected again by now.
    await sleep(2000);
    expect(connects).toBe(1);

    // An object made after the stop reaches a running informer (the probe), and not the stopped one.
    const probe = makeInformer<V1ConfigMap>(admin, `/api/v1/namespaces/${NAMESPACE}/configmaps`, () => core.listNamespacedConfigMap({ namespace: NAMESPACE }));
    const seen: string[] = [];
    probe.on('add', (cm) => void seen.push(cm.metadata!.name!));
    await probe.start();
    try {
      await core.createNamespacedConfigMap({ namespace: NAMESPACE, body: configMap('after-stop') });
      await until('the probe to see after-stop', () => seen.includes('after-stop'), 30);
    } finally {
      await probe.stop();
    }
    expect(added).toContain('before-stop');
    expect(added).not.toContain('after-stop');
  }, 60_000);
});
