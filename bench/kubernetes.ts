/**
 * The kubernetes-backend scenario of `npm run bench` (issue 10 "Benchmark"): a real kube-apiserver (envtest, as the
 * cluster tests use) seeded with `BENCH_K8S_TENANTS` tenants (default 50: Namespace, ResourceQuota, three
 * RoleBindings) and `BENCH_K8S_APPLICATIONS` Argo CD Applications with status (default `BENCH_K8S_SERVICES` (4) per
 * tenant; Application j is service `svc<⌊j / tenants⌋>` of tenant `team<j mod tenants>`), and the kubernetes
 * platform on it with its records in PostgreSQL. Once the informer caches are warm, each read is called
 * `BENCH_K8S_ITERATIONS` times (default 5000): p50/p99 latency, and API server requests per read counted by the
 * platform's kubeconfig (every authenticated request: calls, watches, log reads). Target: 0 requests per warm read.
 * Also start-up (caches filled) time. Then the same reads through HTTP: pds (`PDS_BACKEND=kubernetes`, compiled, with
 * the image's Node flags or `BENCH_PDS_FLAGS`, and `--expose-gc`) in its own process on the same cluster and database,
 * its kubeconfig through a proxy that counts its API server requests (test/fixtures/counting-proxy.ts), driven by
 * autocannon for `BENCH_K8S_HTTP_SECONDS` per route (default 5; loopback, so the per-user limit is exempt) as a
 * platform admin, then again at a fixed `BENCH_K8S_HTTP_RATE` requests per second (default 1,000; 0 leaves it out),
 * open loop from a process of its own (`bench/open-loop.ts`), for every route whose full speed is at least twice that.
 * `BENCH_PDS_STDOUT=<file>` keeps that pds's stdout (what `--trace-gc` in `BENCH_PDS_FLAGS` prints). Needs the
 * envtest binaries (`scripts/envtest/build.sh`).
 *
 * `BENCH_K8S_WORKFLOWS` (default 0; bench only, never in `npm test`) adds that many finished Argo Workflows with a
 * realistic status (9 `Pod` nodes and the stored template spec, about 20 KB each, as a deploy leaves them; the status
 * is written in the create, as the test CRD has no status subresource), each with its workflow record and audit entry
 * in PostgreSQL (settled before pds kept steps, so each one's first read fetches its status once), with etcd's
 * `--quota-backend-bytes` raised to hold them (`PDS_ETCD_QUOTA_BYTES`, default 8 GiB here). Everything is seeded
 * `BENCH_K8S_SEED_CONCURRENCY` requests at a time (default 32). It reports how long seeding took, the heap and RSS the
 * platform holds once started, reads of a workflow in-process (first read and warm) and through HTTP
 * (`GET /api/v1/workflows/{name}`, rotating over `BENCH_K8S_HTTP_WORKFLOWS` names, default 1,000), and the settle
 * delay: from an Argo phase change (status and labels patched, as Argo's controller does) to the settled audit entry,
 * over `BENCH_K8S_SETTLES` workflows (default 20). Caches may take up to `BENCH_K8S_SYNC_TIMEOUT_S` (default 600) to
 * fill in the bench process, so a slow start-up is measured rather than cut off.
 */
import { existsSync, openSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { once } from 'node:events';
import autocannon from 'autocannon';
import { openLoopInChild, type OpenLoopResult } from './open-loop.js';
import { CustomObjectsApi, KubernetesObjectApi, type KubernetesObject } from '@kubernetes/client-node';
import { readFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { openRecordStore, type RecordStore, type Settlement } from '../adapters/sql/index.js';
import { issueSelfToken } from '../auth/self-issued.js';
import { freePort } from '../test/fixtures/free-port.js';
import { forkEntry } from './child.js';
import { pdsNodeFlags } from './run.js';
import { createKubernetesPlatform } from '../adapters/kubernetes/index.js';
import { startCountingProxy } from '../test/fixtures/counting-proxy.js';
import { adminKubeConfig, envtestDir, installCrds, startKubeApiServer } from '../test/fixtures/kube-apiserver.js';
import { startPostgres } from '../test/fixtures/postgres.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const CRDS = [path.resolve(here, '../test/fixtures/crds'), path.resolve(here, '../../test/fixtures/crds')].find((d) => existsSync(d))!;

interface ReadRow {
  name: string;
  p50: number;
  p99: number;
  requestsPerRead: number;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** True when the envtest binaries are built. */
export function envtestAvailable(): boolean {
  return existsSync(path.join(envtestDir(), 'kube-apiserver'));
}

/** Run the scenario; `log` gets progress. @returns the report and whether the target (0 requests per read) held. */
export async function kubernetesBenchmark(log: (line: string) => void): Promise<{ report: string; ok: boolean }> {
  const tenants = Number(process.env.BENCH_K8S_TENANTS ?? 50);
  const applications = Number(process.env.BENCH_K8S_APPLICATIONS ?? tenants * Number(process.env.BENCH_K8S_SERVICES ?? 4));
  const iterations = Number(process.env.BENCH_K8S_ITERATIONS ?? 5000);
  const workflows = Number(process.env.BENCH_K8S_WORKFLOWS ?? 0);
  const settles = Number(process.env.BENCH_K8S_SETTLES ?? 20);
  const concurrency = Math.max(1, Number(process.env.BENCH_K8S_SEED_CONCURRENCY ?? 32));
  const httpWorkflows = Math.min(workflows, Number(process.env.BENCH_K8S_HTTP_WORKFLOWS ?? 1000));
  const syncTimeoutMs = Number(process.env.BENCH_K8S_SYNC_TIMEOUT_S ?? 600) * 1000;
  if (tenants < 1 || applications < 1) throw new Error('bench: BENCH_K8S_TENANTS and BENCH_K8S_APPLICATIONS must be at least 1');
  /** Application j: service `svc<⌊j / tenants⌋>` of tenant `team<j mod tenants>` (every tenant gets one before any gets two). */
  const app = (j: number) => ({ team: `team${j % tenants}`, service: `svc${Math.floor(j / tenants)}` });
  // etcd's default quota (2 GiB) fills with the revisions of tens of thousands of 20 KB Workflows.
  if (workflows > 0) process.env.PDS_ETCD_QUOTA_BYTES ??= String(8 * 1024 ** 3);
  const cleanups: (() => Promise<unknown>)[] = [];
  try {
    log('kubernetes: starting kube-apiserver, etcd, kube-controller-manager and PostgreSQL');
    const server = await startKubeApiServer();
    cleanups.push(() => server.stop());
    const admin = adminKubeConfig(server.kubeconfigPath);
    await installCrds(admin, CRDS);
    const postgres = await startPostgres({ durable: true });
    cleanups.push(() => postgres.stop());
    const dataDir = await mkdtemp(path.join(tmpdir(), 'pds-bench-k8s-'));
    cleanups.push(() => rm(dataDir, { recursive: true, force: true }));

    log(`kubernetes: seeding ${tenants} tenants and ${applications} Applications, ${concurrency} requests at a time`);
    const objects = admin.makeApiClient(KubernetesObjectApi);
    let seedRetries = 0;
    // Seeding tens of thousands of objects can meet etcd stalling ("etcdserver: request timed out", 500) or the API
    // server's flow control (429); such a create is sent again (a create that did land meanwhile answers 409).
    const create = async (o: KubernetesObject) => {
      for (let attempt = 1; ; attempt++) {
        try {
          return await objects.create(o);
        } catch (err) {
          const status = (err as { code?: number }).code;
          if (attempt > 1 && status === 409) return;
          if (attempt >= 6 || !(status === 429 || (status !== undefined && status >= 500))) throw err;
          seedRetries++;
          await new Promise((resolve) => setTimeout(resolve, 500 * attempt));
        }
      }
    };
    const seedClusterStart = performance.now();
    for (const ns of ['pds', 'pds-workflows', 'argocd']) await create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    await inPool(tenants, concurrency, async (t) => {
      const team = `team${t}`;
      await create({
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: {
          name: team,
          labels: { 'pds.dev/tenant': team, 'pds.dev/managed-by': 'pds' },
          annotations: { 'pds.dev/display-name': `Team ${t}`, 'pds.dev/uid': `uid-${t}`, 'pds.dev/contact-email': `${team}@example.com` },
        },
      });
      await Promise.all([
        create({ apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'pds-quota', namespace: team }, spec: { hard: { cpu: '4', memory: '8Gi', pods: '20' } } } as KubernetesObject),
        ...([['admin', 'admin'], ['member', 'edit'], ['viewer', 'view']] as const).map(([role, clusterRole]) =>
          create({
            apiVersion: 'rbac.authorization.k8s.io/v1',
            kind: 'RoleBinding',
            metadata: { name: `pds-${role}-u${t}`, namespace: team, labels: { 'pds.dev/role': role }, annotations: { 'pds.dev/member': `${role}${t}@example.com` } },
            roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: clusterRole },
            subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: `${role}${t}@example.com` }],
          } as KubernetesObject),
        ),
      ]);
    });
    await inPool(applications, concurrency, async (j) => {
      const { team, service } = app(j);
      await create({
        apiVersion: 'argoproj.io/v1alpha1',
        kind: 'Application',
        metadata: {
          name: `${team}-${service}`,
          namespace: 'argocd',
          labels: { 'pds.dev/tenant': team, 'pds.dev/service': service, 'pds.dev/component-type': 'base-service', 'pds.dev/managed-by': 'pds' },
          annotations: { 'pds.dev/host': `${team}-${service}.apps.example.com`, 'pds.dev/port': '8080', 'pds.dev/image-tag': '1.0.0' },
        },
        spec: { project: team, source: { repoURL: 'https://example.com/gitops.git', path: `tenants/${team}/${service}` }, destination: { namespace: team } },
        status: { sync: { status: 'Synced' }, health: { status: 'Healthy' } },
      } as KubernetesObject);
    });
    const seedClusterMs = performance.now() - seedClusterStart;

    const platformOptions = {
      kubeconfigPath: server.kubeconfigPath,
      dataDir,
      databaseUrl: postgres.url,
      workflowNamespace: 'pds-workflows',
      argocdNamespace: 'argocd',
      registry: 'registry.example.com/pds',
      domain: 'apps.example.com',
      githubAppSlug: 'pds-platform',
      leaseNamespace: 'pds',
      syncTimeoutMs,
    };
    /** Start a platform: milliseconds until its caches are filled, and the heap it added (after a full GC when exposed). */
    const startPlatform = async () => {
      globalThis.gc?.();
      const heapBefore = process.memoryUsage().heapUsed;
      const t0 = performance.now();
      const p = await createKubernetesPlatform(platformOptions);
      const ms = performance.now() - t0;
      globalThis.gc?.();
      return { platform: p, ms, heapMiB: (process.memoryUsage().heapUsed - heapBefore) / 2 ** 20 };
    };
    // The reference of the same run: the same cluster before any Workflow exists.
    let empty: { ms: number; heapMiB: number } | undefined;
    if (workflows > 0) {
      const reference = await startPlatform();
      empty = { ms: reference.ms, heapMiB: reference.heapMiB };
      await reference.platform.close();
    }
    let seedWorkflowsMs = 0;
    if (workflows > 0) {
      log(`kubernetes: seeding ${workflows} finished Workflows with status, and their records, ${concurrency} at a time`);
      const seedStart = performance.now();
      const records = await openRecordStore({ dataDir, databaseUrl: postgres.url, poolSize: Math.min(concurrency, 20) });
      try {
        let done = 0;
        await inPool(workflows, concurrency, async (i) => {
          const { team, service } = app(i % applications);
          const name = `wf-bench-${i}`;
          await create(benchWorkflow(name, team, service, 'Succeeded'));
          // Submitted and settled in one transaction, as a pds before issue 23 left it (no steps kept).
          await seedRecord(records, name, team, service, `uid-${i % tenants}`, { phase: 'succeeded', message: '9 steps succeeded', finishedAt: new Date().toISOString() });
          if (++done % 5000 === 0) log(`kubernetes: ${done} Workflows seeded, ${(done / ((performance.now() - seedStart) / 1000)).toFixed(0)}/s`);
        });
      } finally {
        await records.close();
      }
      seedWorkflowsMs = performance.now() - seedStart;
    }

    log('kubernetes: starting the platform on the seeded cluster');
    const { platform, ms: startMs, heapMiB: heapGrowthMiB } = await startPlatform();
    cleanups.unshift(() => platform.close());
    await platform.workflows.list({ visible: 'all', limit: 1 }); // warm the record store's pool too
    // Its start-up pass lists the AppProjects in the background: over before reads are counted.
    await platform.syncWindowsReapplied;
    const platformMemory = process.memoryUsage();

    const reads: Array<[string, (i: number) => Promise<unknown>]> = [
      ['status', (i) => platform.backend.status(app(i % applications).team, app(i % applications).service)],
      ['services (one tenant)', (i) => platform.backend.listServices(`team${i % tenants}`)],
      ['services (all)', () => platform.backend.listServices()],
      ['service', (i) => platform.backend.getService(app(i % applications).team, app(i % applications).service)],
      ['tenant', (i) => platform.backend.getTenant(`team${i % tenants}`)],
      ['tenants (all)', () => platform.backend.listTenants()],
      ['resources', (i) => platform.backend.resources(`team${i % tenants}`)],
    ];
    const rows: ReadRow[] = [];
    for (const [name, read] of reads) {
      for (let i = 0; i < 100; i++) await read(i); // warm up JIT
      const before = platform.kubeconfig.requests;
      const times: number[] = [];
      for (let i = 0; i < iterations; i++) {
        const t0 = performance.now();
        await read(i);
        times.push(performance.now() - t0);
      }
      times.sort((a, b) => a - b);
      rows.push({ name, p50: percentile(times, 50), p99: percentile(times, 99), requestsPerRead: (platform.kubeconfig.requests - before) / iterations });
    }
    const ok = rows.every((r) => r.requestsPerRead === 0);
    const workflowRows: ReadRow[] = [];
    let settleLine = '';
    if (workflows > 0) {
      // First read of each: the status is fetched once and its steps kept in the record. Warm reads then turn over the
      // names the HTTP route reads (kept in memory up to the engine's bound; beyond it, read from the record).
      const sample = Math.min(workflows, iterations);
      const warm = Math.max(1, Math.min(sample, httpWorkflows));
      for (const [name, count, names] of [['workflow and audit entry (first read: fetch, keep steps)', sample, sample], [`workflow and audit entry (warm, ${warm} names in turn)`, iterations, warm]] as const) {
        const before = platform.kubeconfig.requests;
        const times: number[] = [];
        for (let i = 0; i < count; i++) {
          const t0 = performance.now();
          // As GET /api/v1/workflows/{name} reads it: the audit entry, then the run.
          await platform.audit.get(`wf-bench-${i % names}`);
          const run = await platform.workflows.get(`wf-bench-${i % names}`);
          times.push(performance.now() - t0);
          if (!run?.steps.length) throw new Error(`wf-bench-${i % names}: no steps read`);
        }
        times.sort((a, b) => a - b);
        workflowRows.push({ name, p50: percentile(times, 50), p99: percentile(times, 99), requestsPerRead: (platform.kubeconfig.requests - before) / count });
      }
      // Settle delay: a running Workflow (record unfinished) turns Succeeded; time until its audit entry says so.
      const delays: number[] = [];
      const records = platform.records;
      const workflowsApi = admin.makeApiClient(CustomObjectsApi);
      for (let i = 0; i < settles; i++) {
        const name = `wf-settle-${i}`;
        await seedRecord(records, name, 'team0', 'svc0', 'uid-0');
        await create(benchWorkflow(name, 'team0', 'svc0', 'Running'));
        await until(() => platform.cache.workflows.get(name, 'pds-workflows') !== undefined);
        const finished = benchWorkflow(name, 'team0', 'svc0', 'Succeeded');
        const t0 = performance.now();
        await workflowsApi.patchNamespacedCustomObject({
          group: 'argoproj.io',
          version: 'v1alpha1',
          namespace: 'pds-workflows',
          plural: 'workflows',
          name,
          body: [
            { op: 'add', path: '/status', value: (finished as { status?: unknown }).status },
            { op: 'add', path: '/metadata/labels', value: finished.metadata!.labels },
          ],
        });
        await until(async () => (await records.audit.get(name))?.status === 'succeeded');
        delays.push(performance.now() - t0);
      }
      delays.sort((a, b) => a - b);
      settleLine = `settle delay (Argo phase change → settled audit entry, ${settles} workflows): p50 ${percentile(delays, 50).toFixed(0)} ms, p99 ${percentile(delays, 99).toFixed(0)} ms`;
    }
    const fmt = (ms: number) => `${(ms * 1000).toFixed(0)} µs`;

    log('kubernetes: the same reads through HTTP (pds in its own process, its API server requests counted by a proxy)');
    const seconds = Number(process.env.BENCH_K8S_HTTP_SECONDS ?? 5);
    const fixedRate = Number(process.env.BENCH_K8S_HTTP_RATE ?? 1000);
    const proxy = await startCountingProxy(server.kubeconfigPath, path.join(dataDir, 'counted.kubeconfig'));
    cleanups.push(() => proxy.stop());
    const port = await freePort();
    const baseUrl = `http://127.0.0.1:${port}`;
    const secret = 'bench-k8s-secret-'.padEnd(48, 'x');
    // The image's Node flags (or BENCH_PDS_FLAGS), as the other pds rows run, and a GC to call before reading memory.
    const childFlags = [...pdsNodeFlags(), '--expose-gc'];
    const child = forkEntry('pds-server', {
      execArgv: childFlags,
      // Its log lines dropped, as in the other bench rows (here one warning naming the tenants without an AppProject), or
      // written to BENCH_PDS_STDOUT with what a flag such as --trace-gc prints.
      stdio: process.env.BENCH_PDS_STDOUT ? openSync(process.env.BENCH_PDS_STDOUT, 'w') : 'ignore',
      env: {
        PORT: String(port),
        HOST: '127.0.0.1',
        PDS_BASE_URL: baseUrl,
        PDS_DATA_DIR: dataDir,
        PDS_JWT_SECRET: secret,
        PDS_BACKEND: 'kubernetes',
        KUBECONFIG: proxy.kubeconfigPath,
        PDS_DATABASE_URL: postgres.url,
        PDS_ADMINS: 'root',
        PDS_LOG_LEVEL: 'warn',
      },
    });
    cleanups.push(async () => {
      if (child.exitCode !== null) return;
      child.send({ type: 'stop' });
      await Promise.race([once(child, 'exit'), new Promise((r) => setTimeout(r, 5000))]);
      if (child.exitCode === null) child.kill('SIGKILL');
    });
    const childStarted = performance.now();
    // A pds that cannot start (e.g. its caches do not fill within its 30 s) exits: say so rather than wait forever.
    const started = await Promise.race([once(child, 'message').then(() => true), once(child, 'exit').then(() => false)]);
    const childStartMs = performance.now() - childStarted;
    const http: Array<{ name: string; p50: number; p99: number; rps: number; non2xx: number; requestsPerRead: number; fixed?: OpenLoopResult }> = [];
    let childLines: string[];
    if (!started) {
      childLines = [`pds server process (PDS_BACKEND=kubernetes): did not start (exit code ${child.exitCode}, after ${childStartMs.toFixed(0)} ms); no figures through HTTP`];
    } else {
      const childMemory = async () => {
        child.send({ type: 'heap' });
        const [usage] = (await once(child, 'message')) as [NodeJS.MemoryUsage];
        return `RSS ${(usage.rss / 2 ** 20).toFixed(0)} MiB, heap used ${(usage.heapUsed / 2 ** 20).toFixed(0)} MiB`;
      };
      const ready = await childMemory();
      // Its start-up pass (the AppProjects listed) runs in the background: over before reads are counted.
      const startupRequests = await quiet(proxy.requests);
      const token = await issueSelfToken(new TextEncoder().encode(secret), baseUrl, { sub: 'root', groups: [] }, 3600);
      const names = Array.from({ length: httpWorkflows }, (_, i) => `wf-bench-${i}`);
      for (const [name, route] of [
        ['status', `/api/v1/status/${app(7 % applications).team}/${app(7 % applications).service}`],
        ['services (one tenant)', `/api/v1/services?team=team${7 % tenants}`],
        ['tenant', `/api/v1/tenants/team${7 % tenants}`],
        ['tenants (all)', '/api/v1/tenants'],
        ...(workflows > 0 ? ([[`workflow (${httpWorkflows} names in turn)`, '/api/v1/workflows/']] as const) : []),
      ] as const) {
        let next = 0;
        // The workflow route turns over many names, so a warm read is one of many kept, not one hot entry.
        const requests = route.endsWith('/') ? [{ setupRequest: (req: Record<string, unknown>) => ({ ...req, path: route + names[next++ % names.length] }) }] : undefined;
        const options = { url: baseUrl + route, connections: 10, headers: { authorization: `Bearer ${token}` }, ...(requests && { requests }) };
        await autocannon({ ...options, duration: Math.max(1, Math.ceil(httpWorkflows / 1000)) });
        const from = proxy.requests.length;
        const r = await autocannon({ ...options, duration: seconds });
        const calls = proxy.requests.slice(from).filter((q) => !/[?&]watch=(true|1)/.test(q)).length;
        // The same read at a fixed offered rate, open loop, where the route's full speed leaves room for it (at least
        // twice the rate): the latency of a read on a busy pds rather than of ten connections queued on a full one.
        const fixed =
          fixedRate > 0 && r.requests.average >= 2 * fixedRate
            ? await openLoopInChild({ url: baseUrl + route, suffixes: requests ? names : undefined, headers: options.headers, rate: fixedRate, seconds })
            : undefined;
        http.push({ name, p50: r.latency.p50, p99: r.latency.p99, rps: r.requests.average, non2xx: r.non2xx, requestsPerRead: calls / Math.max(1, r.requests.total), fixed });
      }
      childLines = [
        `pds server process (PDS_BACKEND=kubernetes, compiled, ${childFlags.join(' ')}): ready ${childStartMs.toFixed(0)} ms after fork; after a full GC: ${ready} when ready, ${await childMemory()} after the HTTP reads`,
        `API server requests of its start-up (lists and the AppProject pass; watches aside): ${startupRequests}`,
      ];
    }
    const memory = process.memoryUsage();
    const report = [
      `kubernetes backend, warm informer caches (${tenants} tenants, ${applications} Applications, ${workflows} Workflows, ${iterations} reads each; caches filled in ${startMs.toFixed(0)} ms):`,
      `seeding ${tenants} tenants and ${applications} Applications (${concurrency} at a time): ${(seedClusterMs / 1000).toFixed(1)} s`,
      ...(workflows > 0 ? [`seeding ${workflows} Workflows with status and their records (${concurrency} at a time): ${(seedWorkflowsMs / 1000).toFixed(1)} s (${(workflows / (seedWorkflowsMs / 1000)).toFixed(0)}/s); creates sent again after a 5xx or 429: ${seedRetries}`] : []),
      ...(empty ? [`reference, the same cluster before the Workflows were seeded: caches filled in ${empty.ms.toFixed(0)} ms, heap growth over start-up ${empty.heapMiB.toFixed(1)} MiB`] : []),
      `platform in the bench process: heap growth over start-up ${heapGrowthMiB.toFixed(1)} MiB${globalThis.gc ? ' (after a full GC)' : ' (no --expose-gc: includes garbage)'}${empty ? `, ${(heapGrowthMiB - empty.heapMiB).toFixed(1)} MiB over the empty cluster` : ''}; bench process RSS ${(platformMemory.rss / 2 ** 20).toFixed(0)} MiB once started, ${(memory.rss / 2 ** 20).toFixed(0)} MiB at the end (heap used ${(memory.heapUsed / 2 ** 20).toFixed(0)} MiB)`,
      ...childLines,
      '| read | p50 | p99 | API server requests per read |',
      '|---|---|---|---|',
      ...[...rows, ...workflowRows].map((r) => `| ${r.name} | ${fmt(r.p50)} | ${fmt(r.p99)} | ${r.requestsPerRead} |`),
      ...(settleLine ? [settleLine] : []),
      `target: 0 API server requests per warm read — ${ok ? 'met' : 'MISSED'}`,
      '',
      `through HTTP (autocannon, 10 connections, ${seconds} s per route, platform admin, loopback; API server requests counted by the proxy, watches aside):`,
      '| route | req/s | p50 | p99 | non-2xx | API server requests per read |',
      '|---|---|---|---|---|---|',
      ...http.map((r) => `| ${r.name} | ${r.rps.toFixed(0)} | ${r.p50} ms | ${r.p99} ms | ${r.non2xx} | ${r.requestsPerRead.toFixed(3)} |`),
      ...(fixedRate > 0 && http.length > 0
        ? [
            '',
            `the same routes at a fixed ${fixedRate} requests/s, open loop (bench/open-loop.ts, in a process of its own: at most 10 connections, each request timed from its send, a wait for a socket included; ${seconds} s; routes whose full speed above is at least twice that rate):`,
            '| route | answered | p50 | p99 | max | non-2xx | errors | the generator\'s latest send |',
            '|---|---|---|---|---|---|---|---|',
            ...http.map((r) =>
              r.fixed
                ? `| ${r.name} | ${r.fixed.ok} of ${r.fixed.sent} | ${r.fixed.p50.toFixed(2)} ms | ${r.fixed.p99.toFixed(2)} ms | ${r.fixed.max.toFixed(1)} ms | ${r.fixed.non2xx} | ${r.fixed.errors} | ${r.fixed.worstLag.toFixed(1)} ms |`
                : `| ${r.name} | not run: its full speed is under twice the rate | | | | | | |`,
            ),
          ]
        : []),
    ].join('\n');
    return { report, ok };
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
  }
}

/**
 * Wait until no request but watches has been added to `requests` for a second (at most 5 minutes).
 * @returns how many there are then, watches aside.
 */
async function quiet(requests: string[]): Promise<number> {
  const counted = () => requests.filter((q) => !/[?&]watch=(true|1)/.test(q)).length;
  const deadline = Date.now() + 300_000;
  let last = -1;
  while (counted() !== last && Date.now() < deadline) {
    last = counted();
    await new Promise((r) => setTimeout(r, 1000));
  }
  return counted();
}

/** Run `task(0)` … `task(count - 1)`, at most `concurrency` at a time, in index order of starting. */
async function inPool(count: number, concurrency: number, task: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < count; i = next++) await task(i);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
}

/** Resident memory of process `pid`, MiB (`VmRSS` of `/proc/<pid>/status`; 0 where there is no /proc). */
function rssMiB(pid: number): number {
  try {
    const kb = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kb ? Number(kb) / 1024 : 0;
  } catch {
    return 0;
  }
}

/** Poll `check` every 2 ms until it holds (60 s at most). */
async function until(check: () => boolean | Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('bench: a condition did not hold within 60 s');
    await new Promise((r) => setTimeout(r, 2));
  }
}

/** A workflow record and its audit entry, as pds's submit writes them, and settled with `outcome` in the same transaction. */
async function seedRecord(records: RecordStore, name: string, team: string, service: string, tenantUid: string, outcome?: Settlement): Promise<void> {
  const parameters = { action: 'deploy', team_name: team, component_name: service, git_tag: '1.0.1', dockerfile_repo: `acme/${service}` };
  const startedAt = new Date().toISOString();
  await records.transaction(async (tx) => {
    await tx.audit.append(
      { id: randomUUID(), timestamp: startedAt, userId: 'bench@example.com', operation: 'deploy-service', parameters, workflowName: name, status: 'submitted', riskLevel: 'medium', message: '' },
      { tenantUid },
    );
    await tx.workflows.create({ name, operation: 'deploy-service', workflowTemplate: 'deploy-service', parameters, userId: 'bench@example.com', steps: [], message: 'submitted', startedAt, tenantUid });
    if (outcome) await tx.workflows.settle(name, outcome);
  });
}

/** The nine steps of deploy-service, as its WorkflowTemplate names them. */
const DEPLOY_STEPS = ['check-tenant', 'check-repo', 'clone', 'build-image', 'scan-image', 'push-image', 'render-manifests', 'commit-gitops', 'wait-synced'];

/**
 * A deploy-service Workflow as Argo leaves it (`phase` Succeeded, or Running with its first step running): labels and
 * annotations as pds writes them plus Argo's phase labels, the arguments, and a status of 9 `Pod` nodes with outputs and
 * resource durations and the stored WorkflowTemplate spec Argo copies into every Workflow (about 20 KB in all).
 */
function benchWorkflow(name: string, team: string, service: string, phase: 'Succeeded' | 'Running'): KubernetesObject {
  const at = (s: number) => new Date(Date.UTC(2026, 10, 1, 12, 0, s)).toISOString().replace('.000', '');
  const done = phase === 'Succeeded';
  const nodes: Record<string, unknown> = {
    [name]: { id: name, name, displayName: name, type: 'Steps', templateName: 'main', phase, startedAt: at(0), ...(done ? { finishedAt: at(90) } : {}), children: [`${name}-0`] },
  };
  DEPLOY_STEPS.forEach((step, i) => {
    if (!done && i > 0) return;
    const id = `${name}-${1000000000 + i * 7919}`;
    nodes[id] = {
      id,
      name: `${name}[${i}].${step}`,
      displayName: step,
      type: 'Pod',
      templateName: step,
      templateScope: 'namespaced/deploy-service',
      phase: done ? 'Succeeded' : 'Running',
      boundaryID: name,
      startedAt: at(i * 10),
      ...(done ? { finishedAt: at(i * 10 + 9) } : {}),
      progress: '1/1',
      resourcesDuration: { cpu: 7 + i, memory: 180 + i },
      hostNodeName: `worker-${i % 3}.cluster.internal`,
      outputs: { exitCode: '0', parameters: [{ name: 'result', value: `${step} finished for ${team}/${service} at 1.0.1` }] },
      children: i < DEPLOY_STEPS.length - 1 ? [`${name}-${1000000000 + (i + 1) * 7919}`] : [],
    };
  });
  const template = (step: string) => ({
    name: step,
    inputs: { parameters: [{ name: 'team_name' }, { name: 'component_name' }, { name: 'git_tag' }, { name: 'dockerfile_repo' }] },
    metadata: { labels: { 'pds.dev/step': step } },
    script: {
      image: 'registry.example.com/pds/steps:1.4.2',
      command: ['sh'],
      source: `set -eu\n# ${step}: ${'x'.repeat(900)}\necho "${step} {{inputs.parameters.team_name}}/{{inputs.parameters.component_name}}"\n`,
      resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { cpu: '1', memory: '512Mi' } },
      env: [{ name: 'PDS_STEP', value: step }, { name: 'PDS_TENANT', value: '{{inputs.parameters.team_name}}' }],
    },
  });
  return {
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'Workflow',
    metadata: {
      name,
      namespace: 'pds-workflows',
      labels: {
        'pds.dev/operation': 'deploy-service',
        'pds.dev/tenant': team,
        'pds.dev/service': service,
        'pds.dev/managed-by': 'pds',
        'workflows.argoproj.io/phase': phase,
        'workflows.argoproj.io/completed': String(done),
      },
      annotations: { 'pds.dev/user': 'bench@example.com', 'pds.dev/uid': `uid-${team}`, 'workflows.argoproj.io/pod-name-format': 'v2' },
    },
    spec: {
      workflowTemplateRef: { name: 'deploy-service' },
      synchronization: { mutex: { name: `pds-${team}-${service}` } },
      arguments: { parameters: [['action', 'deploy'], ['team_name', team], ['component_name', service], ['git_tag', '1.0.1'], ['dockerfile_repo', `acme/${service}`]].map(([n, value]) => ({ name: n, value })) },
    },
    status: {
      phase,
      startedAt: at(0),
      ...(done ? { finishedAt: at(90), progress: '9/9' } : { progress: '0/9' }),
      nodes,
      storedWorkflowTemplateSpec: { entrypoint: 'main', serviceAccountName: 'pds-workflows', templates: DEPLOY_STEPS.map(template) },
      resourcesDuration: { cpu: 120, memory: 2100 },
      conditions: [{ type: 'PodRunning', status: String(!done) }, ...(done ? [{ type: 'Completed', status: 'True' }] : [])],
    },
  } as KubernetesObject;
}
