/**
 * The kubernetes backend (`PDS_BACKEND=kubernetes`, issue 10): pds submits and reads; Argo Workflows and Argo CD do
 * the work (DESIGN.md "Where things live").
 *
 * | file | what |
 * |---|---|
 * | `kubeconfig.ts` | in-cluster or `KUBECONFIG`; counts API server requests and bounds each by `PDS_KUBE_TIMEOUT_S` |
 * | `informers.ts` | one informer per kind pds reads; reads are answered from them |
 * | `backend.ts`, `pod-logs.ts` | tenants, services, status, resources; logs from pods (or `../loki/`) |
 * | `operations.ts` | the operation table: each operation's Workflow arguments |
 * | `engine.ts` | Workflows submitted and followed; records settled from the watch; the ghost reconciler |
 * | `kept.ts` | settled records kept in memory once read, so warm workflow reads make no round trip |
 * | `previews.ts` | preview expiry under a Lease |
 * | `observer.ts` | what each service runs Synced and Healthy, by digest, for verified promotion |
 *
 * Records (audit, workflows, registrations, claims, OAuth) are in PostgreSQL through `adapters/sql`.
 */
import { Unavailable, NotFound, InvalidParams } from '../../core/errors.js';
import { silentLogger, type Logger } from '../../core/logger.js';
import { DEFAULT_BUILD_FILE, sourceImage } from '../../core/images.js';
import { RepoFullName } from '../../core/model.js';
import { assertImplementsEveryOperation } from '../../core/operations/index.js';
import type { CodeHost, Platform, TenantRef } from '../../core/ports.js';
import { githubAppCodeHost } from '../github/app.js';
import { kubernetesRollouts, readCanaryWorkflowSteps, readRolloutState, type RolledBackRelease } from './rollouts.js';
import { applicationName } from '../../core/names.js';
import { lokiLogSource } from '../loki/logs.js';
import { openRecordStore, type RecordStore } from '../sql/index.js';
import type { RepositoryStore } from '../sql/repositories.js';
import { governanceWithSyncWindows, reapplySyncWindows } from './app-projects.js';
import { kubernetesBackend, type KubernetesBackend } from './backend.js';
import { ApprovalExpiry } from '../sql/approval-expiry.js';
import { ArgoWorkflowEngine } from './engine.js';
import { ClusterCache } from './informers.js';
import { keptAudit } from './kept.js';
import { CountingKubeConfig, loadKubeConfig, ownNamespace } from './kubeconfig.js';
import { clusterOperations } from './operations.js';
import { podLogSource } from './pod-logs.js';
import { PreviewReaper } from './previews.js';
import { ANNOTATION } from './objects.js';
import { ClusterObserver } from './observer.js';
import { createWebhooks, type WebhookOptions } from '../webhooks/index.js';

export { clusterOperations } from './operations.js';

export interface KubernetesPlatformOptions {
  /** A kubeconfig file; default in-cluster, else `KUBECONFIG`. */
  kubeconfigPath?: string;
  /** `PDS_KUBE_TIMEOUT_S` in milliseconds: the bound of each API call and watch (re)connection (default 10,000). */
  kubeTimeoutMs?: number;
  /** `PDS_DATA_DIR` (unused for records, which are in PostgreSQL). */
  dataDir: string;
  /** `PDS_DATABASE_URL`: required. */
  databaseUrl?: string;
  workflowNamespace: string;
  argocdNamespace: string;
  registry: string;
  domain: string;
  lokiUrl?: string;
  /** The GitHub App; without it, repositories can be listed and asked for but not synced or read. */
  githubApp?: { appId: string; privateKey: string; slug: string; apiUrl: string; webUrl?: string };
  githubAppSlug: string;
  /** Where the preview reaper's Lease lives (default: pds's own namespace). */
  leaseNamespace?: string;
  /** Preview reaper rounds, milliseconds (default 10,000). */
  reaperEveryMs?: number;
  /** Ghost reconciler rounds, milliseconds (default 60,000). */
  reconcileEveryMs?: number;
  /** Milliseconds between reads of running canary releases while anyone follows workflows (default 2,000; tests shorten it). */
  releaseEveryMs?: number;
  /** Seconds an unfinished record may lack its Workflow before it is settled as vanished (default 60). */
  vanishedAfterSeconds?: number;
  /** Milliseconds to wait for the caches at start-up (default 30,000). */
  syncTimeoutMs?: number;
  fetch?: typeof fetch;
  log?: Logger;
  /** The composition root's "shutting down" signal: `Platform.shutdown` aborts with it, before `close()`. */
  shutdown?: AbortSignal;
  /** Clock of governance checks and observations (default: the system clock); tests move it. */
  now?: () => Date;
  /** Webhook signing and delivery (default: private addresses refused, a random sealing key for this process). */
  webhooks?: WebhookOptions;
}

/** The cluster platform, with what tests and the benchmark look at. */
export interface KubernetesPlatform extends Platform {
  readonly backend: KubernetesBackend;
  readonly workflows: ArgoWorkflowEngine;
  readonly kubeconfig: CountingKubeConfig;
  readonly cache: ClusterCache;
  readonly records: RecordStore;
  readonly reaper: PreviewReaper;
  /**
   * Settles when the start-up pass has brought every tenant's AppProject sync windows in step with its policy
   * (`adapters/kubernetes/app-projects.ts` `reapplySyncWindows`), with the names of the tenants it patched. Never rejects.
   */
  readonly syncWindowsReapplied: Promise<string[]>;
}

/**
 * Connect to the cluster and the record store, fill the caches, and start following Workflows and expiring previews.
 * @throws Error when `databaseUrl` is missing (the records of several replicas must be shared), when no cluster is
 *   configured, or when the caches cannot be filled (e.g. 403: the ServiceAccount lacks a rule of deploy/).
 */
export async function createKubernetesPlatform(options: KubernetesPlatformOptions): Promise<KubernetesPlatform> {
  if (!options.databaseUrl) {
    throw new Error('PDS_BACKEND=kubernetes keeps its records in PostgreSQL, shared by every replica: set PDS_DATABASE_URL (postgres://…)');
  }
  assertImplementsEveryOperation('kubernetes', clusterOperations);
  const log = (options.log ?? silentLogger).child({ component: 'kubernetes' });
  const now = options.now ?? (() => new Date());
  const kc = loadKubeConfig(options.kubeconfigPath, options.kubeTimeoutMs);
  const records = await openRecordStore({ dataDir: options.dataDir, databaseUrl: options.databaseUrl, log });
  const cache = new ClusterCache(kc, { workflows: options.workflowNamespace, argocd: options.argocdNamespace }, log);
  try {
    await cache.waitForSync(options.syncTimeoutMs ?? 30_000);
  } catch (err) {
    await cache.stop();
    await records.close();
    throw err;
  }
  /** What deploy-service's exit handler recorded on the Application of a release it rolled back, if anything. */
  const rolledBackOf = (team: string, app: string): RolledBackRelease | undefined => {
    const text = cache.applications.list().find((a) => a.metadata?.name === applicationName(team, app))?.metadata?.annotations?.[ANNOTATION.rolledBack];
    try {
      const record = text ? (JSON.parse(text) as Partial<RolledBackRelease>) : undefined;
      return record && typeof record.workflow === 'string' ? { workflow: record.workflow, canaryTag: String(record.canaryTag ?? ''), stableTag: String(record.stableTag ?? ''), message: String(record.message ?? '') } : undefined;
    } catch {
      return undefined; // not written by pds: ignored
    }
  };
  const hasRollout = (team: string, app: string) => cache.deployments.get(applicationName(team, app), team)?.spec?.replicas === 0;
  const logs = options.lokiUrl ? lokiLogSource({ url: options.lokiUrl, fetch: options.fetch }) : podLogSource(kc);
  const backend = kubernetesBackend({
    cache,
    argocdNamespace: options.argocdNamespace,
    logs,
    rollout: async (team, app) => {
      // Only a canary or blue-green service has a Rollout, and write-rollout leaves its Deployment at 0 replicas (the
      // Rollout runs the pods): a rolling service's status is read from the caches alone, with no API server call.
      if (!hasRollout(team, app)) return undefined;
      return readRolloutState(kc, team, app);
    },
  });
  const tenantRef = (team: string) => backend.getTenantRef(team);
  const engine = new ArgoWorkflowEngine({
    kc,
    cache,
    records,
    namespace: options.workflowNamespace,
    registry: options.registry,
    domain: options.domain,
    tenantUid: async (team) => (await tenantRef(team))?.uid,
    reconcileEveryMs: options.reconcileEveryMs,
    vanishedAfterSeconds: options.vanishedAfterSeconds,
    releaseEveryMs: options.releaseEveryMs,
    releaseSteps: async (run) => (hasRollout(run.team!, run.service!) ? readCanaryWorkflowSteps(kc, run.team!, run.service!, run.name, run.startedAt, rolledBackOf(run.team!, run.service!)) : []),
    log,
  });
  engine.start();
  const reaper = new PreviewReaper({
    kc,
    cache,
    engine,
    records,
    leaseNamespace: options.leaseNamespace ?? ownNamespace(kc),
    argocdNamespace: options.argocdNamespace,
    everyMs: options.reaperEveryMs,
    log,
  });
  reaper.start();
  const expiry = new ApprovalExpiry({ approvals: records.approvals, engine, log });
  expiry.start();
  const observer = new ClusterObserver({ cache, records, tenantRef, now, log });
  observer.start();
  const webhooks = createWebhooks(records, options.webhooks ?? { allowPrivate: false }, log.child({ component: 'webhooks' }));
  const codeHost = options.githubApp
    ? githubAppCodeHost({ ...options.githubApp, baseUrl: options.githubApp.apiUrl, tenantRef, repositories: records.repositories, fetch: options.fetch })
    : unconfiguredCodeHost(options.githubAppSlug, tenantRef, records.repositories);
  const syncWindows = { kc, argocdNamespace: options.argocdNamespace, log };
  // Sync windows are otherwise written only when a policy changes: an AppProject re-created or edited while no pds ran
  // is brought back in step here. In the background, so start-up does not wait on every tenant's AppProject.
  const syncWindowsReapplied = (async () => {
    const tenants = await backend.listTenants();
    const refs = await Promise.all(tenants.map((t) => backend.getTenantRef(t.name)));
    return reapplySyncWindows(records.governance, async () => refs.filter((r): r is TenantRef => r !== undefined), syncWindows);
  })().catch((err: unknown) => {
    log.warn({ err: String(err) }, 'could not re-apply the tenants\' Argo CD sync windows at start-up');
    return [] as string[];
  });
  let closing: Promise<void> | undefined;
  const shutdown = new AbortController();
  options.shutdown?.addEventListener('abort', () => shutdown.abort(), { once: true });
  return {
    kind: 'kubernetes',
    shutdown: shutdown.signal,
    backend,
    workflows: engine,
    // Settled entries kept once read: a warm read of a workflow needs no round trip (kept.ts).
    audit: keptAudit(records.audit),
    codeHost,
    once: records.once,
    oauth: records.oauth,
    // Freeze windows also reach the tenant's AppProject, so Argo CD holds automated syncs during them too.
    governance: governanceWithSyncWindows(records.governance, syncWindows),
    syncWindowsReapplied,
    approvals: records.approvals,
    images: records.images,
    // The WorkflowTemplate builds from `Dockerfile` when a deploy names no build file (deploy/workflows/deploy-service.yaml).
    sourceImage: async (_team, _app, source) => sourceImage(options.registry, { ...source, dockerfilePath: source.dockerfilePath ?? DEFAULT_BUILD_FILE }),
    now,
    rollouts: kubernetesRollouts(kc, async (team, app) => (await backend.getService(team, app)) !== undefined),
    webhooks: webhooks.service,
    kubeconfig: kc,
    cache,
    records,
    reaper,
    /** Ready when every cache is filled and the record store takes writes. */
    async ready() {
      return !shutdown.signal.aborted && cache.isSynced && (await records.writable());
    },
    close() {
      shutdown.abort();
      closing ??= (async () => {
        await syncWindowsReapplied;
        await reaper.close();
        await expiry.close();
        await observer.close();
        await webhooks.close();
        await engine.close();
        await cache.stop();
        await records.close();
      })();
      return closing;
    },
  };
}

/** Repositories without a GitHub App: registrations can be listed and asked for; sync and reads say what is missing. */
function unconfiguredCodeHost(slug: string, tenantRef: (team: string) => Promise<TenantRef | undefined>, repositories: RepositoryStore): CodeHost {
  const tenant = async (team: string) => {
    const ref = await tenantRef(team);
    if (!ref) throw new NotFound(`tenant not found: ${team}`);
    return ref;
  };
  return {
    async listRepositories(team) {
      return repositories.list((await tenant(team)).uid);
    },
    async syncRepositories() {
      throw new Unavailable('no GitHub App is configured: set PDS_GITHUB_APP_ID and PDS_GITHUB_APP_PRIVATE_KEY(_FILE) to sync repositories');
    },
    async grantAccessUrl(team, repo) {
      const parsed = RepoFullName.safeParse(repo);
      if (!parsed.success) throw new InvalidParams(`repo: ${parsed.error.issues[0]?.message ?? 'must be "<owner>/<repo>"'}`);
      await tenant(team);
      return { url: `https://github.com/apps/${encodeURIComponent(slug)}/installations/new?state=${encodeURIComponent(`${team}:${repo}`)}` };
    },
    async readTree(repo) {
      throw new NotFound(`no GitHub App is configured, so the platform cannot read ${repo}; pass the repository's file list instead`);
    },
  };
}
