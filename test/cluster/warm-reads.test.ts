/**
 * Warm reads of a workflow through HTTP (issue 23 item 3: `GET /api/v1/workflows/{name}` served from memory): pds's
 * kubeconfig goes through a proxy that records every API server request (test/fixtures/counting-proxy.ts), and the
 * record store's reads are counted on the store itself. A settled workflow, read once, is answered again with no API
 * server request and no record read, its failed step's log tail included; a running one with no API server request
 * while its resourceVersion stands, and with exactly one GET of the Workflow, showing the change, once it moves on.
 *
 * The Workflows are written here as Argo leaves them (status and Argo's phase labels), so the Argo stand-in, which
 * skips Workflows that already have a status, runs none of them.
 */
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { silentLogger } from '../../core/logger.js';
import type { KubernetesPlatform } from '../../adapters/kubernetes/index.js';
import { startCountingProxy, type CountingProxy } from '../fixtures/counting-proxy.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { REGISTRY, startClusterHarness, until, WORKFLOWS, type ClusterHarness } from './platform.js';

const CALLER = 'warm@example.com';
const TEAM = 'warm';
const argo = { group: 'argoproj.io', version: 'v1alpha1', namespace: WORKFLOWS, plural: 'workflows' };
const suffix = randomUUID().slice(0, 5);

let h: ClusterHarness;
let proxy: CountingProxy;
let replica: KubernetesPlatform;
let pds: TestServer;

/** A Workflow as Argo's controller leaves it: `phase`, one Pod node per step (`[step, phase, message?]`), Argo's labels. */
function workflow(name: string, phase: 'Running' | 'Succeeded' | 'Failed', steps: Array<[string, string, string?]>) {
  const finished = phase !== 'Running';
  const nodes: Record<string, unknown> = { [name]: { id: name, name, displayName: name, type: 'Steps', phase, startedAt: '2026-11-26T10:00:00Z' } };
  steps.forEach(([step, stepPhase, message], i) => {
    const id = `${name}-${1000 + i}`;
    nodes[id] = {
      id,
      name: `${name}[${i}].${step}`,
      displayName: step,
      templateName: step,
      type: 'Pod',
      phase: stepPhase,
      ...(message ? { message } : {}),
      startedAt: `2026-11-26T10:00:0${i}Z`,
      ...(stepPhase === 'Running' ? {} : { finishedAt: `2026-11-26T10:00:0${i + 1}Z` }),
    };
  });
  return {
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'Workflow',
    metadata: {
      name,
      namespace: WORKFLOWS,
      labels: { 'pds.dev/managed-by': 'pds', 'pds.dev/tenant': TEAM, 'workflows.argoproj.io/phase': phase, 'workflows.argoproj.io/completed': String(finished) },
    },
    spec: { workflowTemplateRef: { name: 'deploy-service' } },
    status: { phase, startedAt: '2026-11-26T10:00:00Z', ...(finished ? { finishedAt: '2026-11-26T10:01:00Z' } : {}), nodes },
  };
}

/** The workflow record and audit entry a submission writes; settled with `outcome` when given. */
async function record(name: string, outcome?: { phase: 'succeeded' | 'failed'; message: string }) {
  const parameters = { action: 'deploy', team_name: TEAM, component_name: 'web', git_tag: '1.0.0' };
  const startedAt = new Date().toISOString();
  await replica.records.transaction(async (tx) => {
    await tx.audit.append(
      { id: randomUUID(), timestamp: startedAt, userId: CALLER, operation: 'deploy-service', parameters, workflowName: name, status: 'submitted', riskLevel: 'medium', message: '' },
      { tenantUid: `uid-${TEAM}` },
    );
    await tx.workflows.create({ name, operation: 'deploy-service', workflowTemplate: 'deploy-service', parameters, userId: CALLER, steps: [], message: 'submitted', startedAt, tenantUid: `uid-${TEAM}` });
  });
  if (outcome) await replica.records.workflows.settle(name, { ...outcome, finishedAt: new Date().toISOString() });
}

const read = async (name: string) => {
  const answer = await pds.api(CALLER, 'GET', `/api/v1/workflows/${name}`);
  expect(answer.status).toBe(200);
  return answer.body as { phase: string; steps: Array<{ name: string; status: string; message?: string }>; failedStep?: { logTail: string[] } };
};
/** API server requests since `from`, but watches (re)connecting: informers do that on their own time. */
const since = (from: number) => proxy.requests.slice(from).filter((r) => !/[?&]watch=(true|1)/.test(r));

beforeAll(async () => {
  h = await startClusterHarness({});
  proxy = await startCountingProxy(h.pdsKubeconfig, path.join(h.work, 'counted.kubeconfig'));
  replica = await h.platform({ kubeconfigPath: proxy.kubeconfigPath, log: silentLogger });
  await replica.syncWindowsReapplied; // its start-up writes, done before anything is counted
  pds = await startTestServer({ PDS_BACKEND: 'kubernetes', PDS_REGISTRY: REGISTRY, PDS_DOMAIN: 'apps.test' }, { platform: replica });
}, 240_000);
afterAll(async () => {
  await pds?.stop();
  await proxy?.stop();
  await h?.stop();
});

describe('warm workflow reads on the kubernetes backend', () => {
  it('a settled workflow read again through HTTP makes no API server request and no record read, its failed step\'s log tail included', async () => {
    const objects = h.admin.makeApiClient(CustomObjectsApi);
    const succeeded = `warm-ok-${suffix}`;
    const failed = `warm-failed-${suffix}`;
    await record(succeeded, { phase: 'succeeded', message: '2 steps succeeded' });
    await record(failed, { phase: 'failed', message: 'step build-image failed: exit code 1' });
    await objects.createNamespacedCustomObject({ ...argo, body: workflow(succeeded, 'Succeeded', [['clone', 'Succeeded'], ['build-image', 'Succeeded']]) });
    await objects.createNamespacedCustomObject({ ...argo, body: workflow(failed, 'Failed', [['clone', 'Succeeded'], ['build-image', 'Failed', 'exit code 1']]) });
    // The failed step's pod (v2 name: <workflow>-<template>-<node id suffix>) and its main container's log.
    const pod = `${failed}-build-image-1001`;
    await h.admin.makeApiClient(CoreV1Api).createNamespacedPod({
      namespace: WORKFLOWS,
      body: { metadata: { name: pod }, spec: { nodeName: h.kubelet.nodeName, restartPolicy: 'Never', automountServiceAccountToken: false, containers: [{ name: 'main', image: 'argo-steps.local/step' }] } },
    });
    h.kubelet.log(WORKFLOWS, pod, 'docker build failed: no Dockerfile', new Date(), 'main');
    // Created finished, these never enter pds's informer (running Workflows only): the first read fetches each once.
    const recordReads = vi.spyOn(replica.records.workflows, 'get');
    const auditReads = vi.spyOn(replica.records.audit, 'get');
    try {
      for (const name of [succeeded, failed]) {
        const first = await read(name); // cold: the record, the entry and the Workflow; for the failed one, its step's log too
        expect(first.steps.map((s) => s.name)).toEqual(['clone', 'build-image']);
        // The steps fetched are kept with the settled record: every replica reads them from there from now on.
        expect((await replica.records.workflows.get(name))?.steps.map((s) => s.name)).toEqual(['clone', 'build-image']);
        recordReads.mockClear();
        auditReads.mockClear();
        const from = proxy.requests.length;
        for (let i = 0; i < 3; i++) expect(await read(name)).toEqual(first);
        expect(since(from)).toEqual([]);
        expect(recordReads.mock.calls.filter(([n]) => n === name)).toEqual([]);
        expect(auditReads.mock.calls.filter(([n]) => n === name)).toEqual([]);
      }
      expect((await read(failed)).failedStep?.logTail).toEqual(['docker build failed: no Dockerfile']);
    } finally {
      recordReads.mockRestore();
      auditReads.mockRestore();
    }
  });

  it('a running workflow makes no API server request while its resourceVersion stands, and one GET showing the change once it moves on', async () => {
    const objects = h.admin.makeApiClient(CustomObjectsApi);
    const name = `warm-running-${suffix}`;
    const created = (await objects.createNamespacedCustomObject({ ...argo, body: workflow(name, 'Running', [['clone', 'Running']]) })) as { metadata: { resourceVersion: string } };
    await record(name);
    await until('the Workflow in the informer', () => replica.cache.workflows.get(name, WORKFLOWS)?.metadata?.resourceVersion === created.metadata.resourceVersion);
    expect((await read(name)).phase).toBe('running');

    const from = proxy.requests.length;
    for (let i = 0; i < 3; i++) expect((await read(name)).steps).toEqual([expect.objectContaining({ name: 'clone', status: 'running' })]);
    expect(since(from)).toEqual([]);

    // Argo moves on (a message on the running step): a newer resourceVersion, read once, and shown.
    const before = proxy.requests.length;
    const patched = (await objects.patchNamespacedCustomObject({
      ...argo,
      name,
      body: [{ op: 'add', path: `/status/nodes/${name}-1000/message`, value: 'pulling the base image' }],
    })) as { metadata: { resourceVersion: string } };
    await until('the newer resourceVersion in the informer', () => replica.cache.workflows.get(name, WORKFLOWS)?.metadata?.resourceVersion === patched.metadata.resourceVersion);
    for (let i = 0; i < 3; i++) {
      expect((await read(name)).steps).toEqual([expect.objectContaining({ name: 'clone', status: 'running', message: 'pulling the base image' })]);
    }
    // One GET for the new resourceVersion, whoever asked first (a read, or pds following the change).
    expect(since(before)).toEqual([`GET /apis/argoproj.io/v1alpha1/namespaces/${WORKFLOWS}/workflows/${name}`]);
  });
});
