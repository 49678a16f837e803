/**
 * The kubernetes-backend scenario of `npm run bench` (issue 10 "Benchmark"): a real kube-apiserver (envtest, as the
 * cluster tests use) seeded with `BENCH_K8S_TENANTS` tenants (default 50: Namespace, ResourceQuota, three
 * RoleBindings) of `BENCH_K8S_SERVICES` services each (default 4: an Application with status), and the kubernetes
 * platform on it with its records in PostgreSQL. Once the informer caches are warm, each read is called
 * `BENCH_K8S_ITERATIONS` times (default 5000): p50/p99 latency, and API server requests per read counted by the
 * platform's kubeconfig (every authenticated request: calls, watches, log reads). Target: 0 requests per warm read.
 * Also start-up (caches filled) time. Then the same reads through HTTP: pds (`PDS_BACKEND=kubernetes`) in its own
 * process on the same cluster and database, driven by autocannon for `BENCH_K8S_HTTP_SECONDS` per route (default 5;
 * loopback, so the per-user limit is exempt) as a platform admin. Needs the envtest binaries
 * (`scripts/envtest/build.sh`).
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { once } from 'node:events';
import autocannon from 'autocannon';
import { KubernetesObjectApi, type KubernetesObject } from '@kubernetes/client-node';
import { issueSelfToken } from '../auth/self-issued.js';
import { freePort } from '../test/fixtures/redis-server.js';
import { forkEntry } from './child.js';
import { createKubernetesPlatform, type KubernetesPlatform } from '../adapters/kubernetes/index.js';
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
  const services = Number(process.env.BENCH_K8S_SERVICES ?? 4);
  const iterations = Number(process.env.BENCH_K8S_ITERATIONS ?? 5000);
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

    log(`kubernetes: seeding ${tenants} tenants × ${services} services`);
    const objects = admin.makeApiClient(KubernetesObjectApi);
    const create = (o: KubernetesObject) => objects.create(o);
    for (const ns of ['pds', 'pds-workflows', 'argocd']) await create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    for (let t = 0; t < tenants; t++) {
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
      await create({ apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'pds-quota', namespace: team }, spec: { hard: { cpu: '4', memory: '8Gi', pods: '20' } } } as KubernetesObject);
      for (const [role, clusterRole] of [['admin', 'admin'], ['member', 'edit'], ['viewer', 'view']] as const) {
        await create({
          apiVersion: 'rbac.authorization.k8s.io/v1',
          kind: 'RoleBinding',
          metadata: { name: `pds-${role}-u${t}`, namespace: team, labels: { 'pds.dev/role': role }, annotations: { 'pds.dev/member': `${role}${t}@example.com` } },
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: clusterRole },
          subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: `${role}${t}@example.com` }],
        } as KubernetesObject);
      }
      for (let s = 0; s < services; s++) {
        await create({
          apiVersion: 'argoproj.io/v1alpha1',
          kind: 'Application',
          metadata: {
            name: `${team}-svc${s}`,
            namespace: 'argocd',
            labels: { 'pds.dev/tenant': team, 'pds.dev/service': `svc${s}`, 'pds.dev/component-type': 'base-service', 'pds.dev/managed-by': 'pds' },
            annotations: { 'pds.dev/host': `${team}-svc${s}.apps.example.com`, 'pds.dev/port': '8080', 'pds.dev/image-tag': '1.0.0' },
          },
          spec: { project: team, source: { repoURL: 'https://example.com/gitops.git', path: `tenants/${team}/svc${s}` }, destination: { namespace: team } },
          status: { sync: { status: 'Synced' }, health: { status: 'Healthy' } },
        } as KubernetesObject);
      }
    }

    const started = performance.now();
    const platform: KubernetesPlatform = await createKubernetesPlatform({
      kubeconfigPath: server.kubeconfigPath,
      dataDir,
      databaseUrl: postgres.url,
      workflowNamespace: 'pds-workflows',
      argocdNamespace: 'argocd',
      registry: 'registry.example.com/pds',
      domain: 'apps.example.com',
      githubAppSlug: 'pds-platform',
      leaseNamespace: 'pds',
    });
    const startMs = performance.now() - started;
    cleanups.unshift(() => platform.close());
    await platform.workflows.list({ visible: 'all', limit: 1 }); // warm the record store's pool too

    const reads: Array<[string, (i: number) => Promise<unknown>]> = [
      ['status', (i) => platform.backend.status(`team${i % tenants}`, `svc${i % services}`)],
      ['services (one tenant)', (i) => platform.backend.listServices(`team${i % tenants}`)],
      ['services (all)', () => platform.backend.listServices()],
      ['service', (i) => platform.backend.getService(`team${i % tenants}`, `svc${i % services}`)],
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
    const fmt = (ms: number) => `${(ms * 1000).toFixed(0)} µs`;

    log('kubernetes: the same reads through HTTP (pds in its own process)');
    const seconds = Number(process.env.BENCH_K8S_HTTP_SECONDS ?? 5);
    const port = await freePort();
    const baseUrl = `http://127.0.0.1:${port}`;
    const secret = 'bench-k8s-secret-'.padEnd(48, 'x');
    const child = forkEntry('pds-server', {
      env: {
        PORT: String(port),
        HOST: '127.0.0.1',
        PDS_BASE_URL: baseUrl,
        PDS_DATA_DIR: dataDir,
        PDS_JWT_SECRET: secret,
        PDS_BACKEND: 'kubernetes',
        KUBECONFIG: server.kubeconfigPath,
        PDS_DATABASE_URL: postgres.url,
        PDS_ADMINS: 'root',
        PDS_LOG_LEVEL: 'warn',
      },
    });
    cleanups.push(async () => {
      child.send({ type: 'stop' });
      await Promise.race([once(child, 'exit'), new Promise((r) => setTimeout(r, 5000))]);
      if (child.exitCode === null) child.kill('SIGKILL');
    });
    await once(child, 'message');
    const token = await issueSelfToken(new TextEncoder().encode(secret), baseUrl, { sub: 'root', groups: [] }, 3600);
    const http: Array<{ name: string; p50: number; p99: number; rps: number; non2xx: number }> = [];
    for (const [name, route] of [
      ['status', '/api/v1/status/team7/svc1'],
      ['services (one tenant)', '/api/v1/services?team=team7'],
      ['tenant', '/api/v1/tenants/team7'],
      ['tenants (all)', '/api/v1/tenants'],
    ] as const) {
      const options = { url: baseUrl + route, connections: 10, headers: { authorization: `Bearer ${token}` } };
      await autocannon({ ...options, duration: 1 });
      const r = await autocannon({ ...options, duration: seconds });
      http.push({ name, p50: r.latency.p50, p99: r.latency.p99, rps: r.requests.average, non2xx: r.non2xx });
    }
    const report = [
      `kubernetes backend, warm informer caches (${tenants} tenants × ${services} services, ${iterations} reads each; caches filled in ${startMs.toFixed(0)} ms):`,
      '| read | p50 | p99 | API server requests per read |',
      '|---|---|---|---|',
      ...rows.map((r) => `| ${r.name} | ${fmt(r.p50)} | ${fmt(r.p99)} | ${r.requestsPerRead} |`),
      `target: 0 API server requests per warm read — ${ok ? 'met' : 'MISSED'}`,
      '',
      `through HTTP (autocannon, 10 connections, ${seconds} s per route, platform admin, loopback):`,
      '| route | req/s | p50 | p99 | non-2xx |',
      '|---|---|---|---|---|',
      ...http.map((r) => `| ${r.name} | ${r.rps.toFixed(0)} | ${r.p50} ms | ${r.p99} ms | ${r.non2xx} |`),
    ].join('\n');
    return { report, ok };
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
  }
}
