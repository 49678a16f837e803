/**
 * Kubernetes calls are bounded (issue 18 item 6): against a stand-in API server on 127.0.0.1 that speaks the wire
 * format (lists, watch streams, `pods/log`, Status bodies) or stalls, client-node's own clients, configured by
 * `adapters/kubernetes/kubeconfig.ts`, fail with `UPSTREAM` instead of waiting forever, and a refused log read is an
 * `Upstream` error with its cause, never "no logs yet".
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { CoreV1Api, CustomObjectsApi, type KubernetesObject, type V1Namespace } from '@kubernetes/client-node';
import { afterEach, describe, expect, it } from 'vitest';
import { ACCEPT_METADATA, ACCEPT_METADATA_LIST, LIST_PAGE_SIZE, metadataOnly, paged, watch } from '../../adapters/kubernetes/informers.js';
import { CountingKubeConfig, isTimeout } from '../../adapters/kubernetes/kubeconfig.js';
import { podLogSource } from '../../adapters/kubernetes/pod-logs.js';
import { PlatformError } from '../../core/errors.js';
import { recordingLogger } from '../helpers/log.js';

const TIMEOUT_MS = 300;

interface StandIn {
  kc: CountingKubeConfig;
  /** Requests seen, as `METHOD path?query`. */
  seen: string[];
  close(): Promise<void>;
}

const servers: StandIn[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

/** An API server on a free loopback port answering with `handle`; a handler that returns without answering stalls. */
async function apiServer(handle: (req: IncomingMessage, res: ServerResponse) => void): Promise<StandIn> {
  const seen: string[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    handle(req, res);
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const kc = new CountingKubeConfig(TIMEOUT_MS);
  kc.loadFromOptions({
    clusters: [{ name: 'stand-in', server: `http://127.0.0.1:${port}`, skipTLSVerify: true }],
    users: [{ name: 'pds', token: 'stand-in-token' }],
    contexts: [{ name: 'stand-in', cluster: 'stand-in', user: 'pds' }],
    currentContext: 'stand-in',
  });
  const standIn = {
    kc,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
  servers.push(standIn);
  return standIn;
}

const json = (res: ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
};

const podList = {
  kind: 'PodList',
  apiVersion: 'v1',
  metadata: { resourceVersion: '7' },
  items: [{ metadata: { name: 'web-1', namespace: 'acme' }, spec: { nodeName: 'node-1', containers: [{ name: 'web' }] } }],
};

/** Resolves with what `promise` rejects with; fails the test if it resolves. */
async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    (value) => expect.fail(`expected a failure, got ${JSON.stringify(value)}`),
    (err: unknown) => err,
  );
}

/** Poll `probe` until truthy. @throws after `ms`, naming `what`. */
async function eventually<T>(what: string, probe: () => T | undefined | false, ms = 10_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('a stalled API server', () => {
  it('fails an API call at the bound: client-node aborts it', async () => {
    const api = await apiServer(() => {}); // accepts, never answers
    const err = await rejection(api.kc.makeApiClient(CoreV1Api).listNamespace());
    expect(isTimeout(err)).toBe(true);
    expect(api.seen).toEqual(['GET /api/v1/namespaces']);
  });

  it('fails a log read with UPSTREAM (502) and the timeout as its cause', async () => {
    const api = await apiServer(() => {});
    const err = await rejection(podLogSource(api.kc).read('acme', 'web', { lines: 10, sinceSeconds: 60 }));
    expect(err).toBeInstanceOf(PlatformError);
    expect(err).toMatchObject({ code: 'UPSTREAM', status: 502 });
    expect((err as Error).message).toMatch(/PDS_KUBE_TIMEOUT_S/);
    expect(isTimeout((err as Error).cause)).toBe(true);
  });

  it('fails a pod log read that stalls after the pods were listed', async () => {
    const api = await apiServer((req, res) => {
      if (req.url?.startsWith('/api/v1/namespaces/acme/pods?')) json(res, 200, podList);
      // the log read stalls
    });
    const err = await rejection(podLogSource(api.kc).read('acme', 'web', { lines: 10, sinceSeconds: 60 }));
    expect(err).toMatchObject({ code: 'UPSTREAM', status: 502 });
    expect((err as Error).message).toMatch(/pod web-1 of acme\/web/);
    expect(api.seen.at(-1)).toMatch(/^GET \/api\/v1\/namespaces\/acme\/pods\/web-1\/log\?/);
  });

  it('bounds a watch (re)connection: the informer reports the timeout and starts again', async () => {
    let watches = 0;
    const api = await apiServer((req, res) => {
      if (req.url?.includes('watch=true')) {
        watches++;
        return; // stalls before the response starts
      }
      json(res, 200, { kind: 'NamespaceList', apiVersion: 'v1', metadata: { resourceVersion: '5' }, items: [] });
    });
    const { log, lines } = recordingLogger('warn');
    const core = api.kc.makeApiClient(CoreV1Api);
    const informer = watch<V1Namespace>(api.kc, 'namespaces', '/api/v1/namespaces', () => core.listNamespace(), {}, log);
    try {
      const line = await eventually('the informer to report its stalled watch', () => lines.find((l) => l.msg === 'informer stopped; starting it again'));
      expect((line.err as { message?: string }).message).toMatch(/^network timeout at: http:\/\/127\.0\.0\.1:\d+\/api\/v1\/namespaces\?/);
      expect(watches).toBeGreaterThanOrEqual(1);
    } finally {
      await informer.stop();
    }
  });

  it('keeps an established watch open while it is quiet for longer than the bound', async () => {
    let watches = 0;
    const api = await apiServer((req, res) => {
      if (req.url?.includes('watch=true')) {
        watches++;
        res.writeHead(200, { 'content-type': 'application/json' });
        res.flushHeaders();
        // Quiet for three bounds, then one event on the same connection.
        const event = { type: 'ADDED', object: { kind: 'Namespace', apiVersion: 'v1', metadata: { name: 'acme', resourceVersion: '6' } } };
        setTimeout(() => res.write(`${JSON.stringify(event)}\n`), 3 * TIMEOUT_MS).unref();
        return;
      }
      json(res, 200, { kind: 'NamespaceList', apiVersion: 'v1', metadata: { resourceVersion: '5' }, items: [] });
    });
    const { log, lines } = recordingLogger('warn');
    const core = api.kc.makeApiClient(CoreV1Api);
    const informer = watch<V1Namespace>(api.kc, 'namespaces', '/api/v1/namespaces', () => core.listNamespace(), {}, log);
    try {
      await eventually('the event sent after the quiet spell', () => informer.get('acme'));
      expect(watches).toBe(1);
      expect(lines).toEqual([]);
    } finally {
      await informer.stop();
    }
  });
});

describe('a refused pods/log read', () => {
  it('is UPSTREAM (502) with the 403 as its cause, never "without readable logs yet"', async () => {
    const api = await apiServer((req, res) => {
      if (req.url?.startsWith('/api/v1/namespaces/acme/pods?')) return json(res, 200, podList);
      json(res, 403, {
        kind: 'Status',
        apiVersion: 'v1',
        status: 'Failure',
        message: 'pods "web-1" is forbidden: User "system:serviceaccount:pds:pds" cannot get resource "pods/log" in API group "" in the namespace "acme"',
        reason: 'Forbidden',
        code: 403,
      });
    });
    const err = await rejection(podLogSource(api.kc).read('acme', 'web', { lines: 10, sinceSeconds: 60 }));
    expect(err).toMatchObject({ code: 'UPSTREAM', status: 502 });
    expect((err as Error).message).toMatch(/HTTP 403: .*pods\/log/);
    expect(((err as Error).cause as { code?: number }).code).toBe(403);
  });

  it('still counts a container that has not started (204 without a body) as "without readable logs yet"', async () => {
    const api = await apiServer((req, res) => {
      if (req.url?.startsWith('/api/v1/namespaces/acme/pods?')) return json(res, 200, podList);
      res.writeHead(204);
      res.end();
    });
    const result = await podLogSource(api.kc).read('acme', 'web', { lines: 10, sinceSeconds: 60 });
    expect(result.lines).toEqual([]);
    expect(result.note).toMatch(/1 pod without readable logs yet/);
  });
});

describe('a metadata-only informer (issue 23 item 3)', () => {
  it('lists page by page (the first from the watch cache, resourceVersion=0) and watches asking for PartialObjectMetadata, and keeps no managedFields', async () => {
    const accepts: string[] = [];
    const total = LIST_PAGE_SIZE + 3;
    const item = (i: number) => ({ apiVersion: 'meta.k8s.io/v1', kind: 'PartialObjectMetadata', metadata: { name: `w${i}`, namespace: 'wf', resourceVersion: '7', managedFields: [{ manager: 'argo' }] } });
    const api = await apiServer((req, res) => {
      const url = new URL(req.url!, 'http://x');
      const rv = url.searchParams.get('resourceVersion');
      accepts.push(`${url.searchParams.get('watch') ? 'watch' : 'list'}${rv !== null && !url.searchParams.get('watch') ? ` resourceVersion=${rv}` : ''} ${req.headers.accept}`);
      if (url.searchParams.get('watch')) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write(`${JSON.stringify({ type: 'ADDED', object: item(total) })}\n`);
        return;
      }
      // The API server's custom-object list: `metadata.continue` (plain JSON), one snapshot's resourceVersion.
      const from = Number(url.searchParams.get('continue') ?? 0);
      const limit = Number(url.searchParams.get('limit'));
      const items = Array.from({ length: Math.min(limit, total - from) }, (_, k) => item(from + k));
      const next = from + items.length < total ? String(from + items.length) : undefined;
      json(res, 200, { apiVersion: 'meta.k8s.io/v1', kind: 'PartialObjectMetadataList', metadata: { resourceVersion: '7', ...(next ? { continue: next } : {}) }, items });
    });
    const custom = api.kc.makeApiClient(CustomObjectsApi);
    const list = paged<KubernetesObject>((page) =>
      custom.listNamespacedCustomObject({ group: 'argoproj.io', version: 'v1alpha1', namespace: 'wf', plural: 'workflows', ...page }, metadataOnly),
    );
    const { log } = recordingLogger('warn');
    const informer = watch(api.kc, 'workflows', '/apis/argoproj.io/v1alpha1/namespaces/wf/workflows', list, { metadataOnly: true }, log);
    try {
      await eventually('the watched object', () => informer.get(`w${total}`, 'wf'));
      expect(informer.list('wf')).toHaveLength(total + 1);
      expect(informer.list('wf').every((o) => o.metadata?.managedFields === undefined)).toBe(true);
      // A continued page carries no resourceVersion: the API server refuses one next to `continue`.
      expect(accepts).toEqual([`list resourceVersion=0 ${ACCEPT_METADATA_LIST}`, `list ${ACCEPT_METADATA_LIST}`, `watch ${ACCEPT_METADATA}`]);
    } finally {
      await informer.stop();
    }
  });
});

describe('paged lists', () => {
  it('reads the list again as consistent pages when the watch cache\'s one answer is cut at its bound', async () => {
    const asked: string[] = [];
    const list = paged<KubernetesObject>(async (page) => {
      asked.push(JSON.stringify(page));
      if (page.resourceVersion === '0') throw Object.assign(new Error('The operation was aborted.'), { name: 'AbortError' });
      const next = page._continue ? undefined : 'p2';
      return { apiVersion: 'v1', kind: 'List', metadata: { resourceVersion: '9', ...(next ? { continue: next } : {}) }, items: [{ metadata: { name: page._continue ?? 'p1' } }] };
    });
    expect((await list()).items.map((o) => o.metadata?.name)).toEqual(['p1', 'p2']);
    expect(asked).toEqual([
      JSON.stringify({ limit: LIST_PAGE_SIZE, resourceVersion: '0' }),
      JSON.stringify({ limit: LIST_PAGE_SIZE }),
      JSON.stringify({ limit: LIST_PAGE_SIZE, _continue: 'p2' }),
    ]);
  });


  it('reads an empty metadata-only list, which the API server sends with items: null', async () => {
    const list = paged<KubernetesObject>(async () => ({ apiVersion: 'meta.k8s.io/v1', kind: 'PartialObjectMetadataList', metadata: { resourceVersion: '3' }, items: null as never }));
    expect(await list()).toMatchObject({ items: [], metadata: { resourceVersion: '3' } });
  });
});
