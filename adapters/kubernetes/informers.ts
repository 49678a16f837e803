/**
 * The cluster as pds reads it: one informer (list, then watch) per kind, so reads are answered from memory and make no
 * API server call once the caches are warm (issue 10 "Reads come from the cluster, through watches/informers, not a
 * copy"). An informer that loses its watch (an error, the API server restarting) starts again after a pause.
 */
import {
  AppsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  ListWatch,
  Observable,
  RbacAuthorizationV1Api,
  Watch,
  type KubeConfig,
  type KubernetesListObject,
  type KubernetesObject,
  type ObjectCache,
  type RequestContext,
  type ResponseContext,
  type V1Deployment,
  type V1Namespace,
  type V1ResourceQuota,
  type V1RoleBinding,
} from '@kubernetes/client-node';
import type { Logger } from '../../core/logger.js';
import { isTimeout } from './kubeconfig.js';
import { ARGO_GROUP, ARGO_LABEL, ARGO_VERSION, LABEL, type Application, type WorkflowMetadata } from './objects.js';

/** Milliseconds before an informer whose list or watch failed starts again. */
const RESTART_MS = 2_000;

/** One kind, watched. */
export interface Watched<T extends KubernetesObject> extends ObjectCache<T> {
  /** Resolves once the first list has filled the cache. */
  readonly synced: Promise<void>;
  /** True once the first list has filled the cache. */
  readonly isSynced: boolean;
  /** The last list or watch failure, until the informer lists again. */
  readonly lastError: unknown;
  /** `cb` is called for each change until {@link Watched.stop} is called, never after. */
  on(verb: 'add' | 'update' | 'delete', cb: (obj: T) => void): void;
  /** Stop for good: no restart, no watch left open, no `on` callback after this is called. */
  stop(): Promise<void>;
}

/**
 * The API server's metadata-only forms (`PartialObjectMetadataList` for a list, `PartialObjectMetadata` for each watch
 * event): objects come back as `{apiVersion, kind, metadata}`, without `spec` or `status`.
 * https://kubernetes.io/docs/reference/using-api/api-concepts/#receiving-resources-as-tables (same mechanism, `as=`)
 */
export const ACCEPT_METADATA_LIST = 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1';
export const ACCEPT_METADATA = 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1';

/** How one kind is watched. */
export interface WatchOptions<T extends KubernetesObject> {
  labelSelector?: string;
  /**
   * Watch `PartialObjectMetadata` only ({@link ACCEPT_METADATA}); `list` must then ask for
   * {@link ACCEPT_METADATA_LIST} too (see {@link metadataOnly}).
   */
  metadataOnly?: boolean;
  /**
   * Drop, in place, what pds never reads of an object before the cache keeps it (listed or watched). Every informer
   * also drops `metadata.managedFields`, which pds never reads and which is often the largest part of the metadata.
   */
  trim?: (obj: T) => void;
}

/** Request options that make a generated client-node API call ask for the metadata-only list form. */
export const metadataOnly = {
  middleware: [
    {
      pre: (context: RequestContext) => {
        context.setHeaderParam('Accept', ACCEPT_METADATA_LIST);
        return new Observable(Promise.resolve(context));
      },
      post: (response: ResponseContext) => new Observable(Promise.resolve(response)),
    },
  ],
  middlewareMergeStrategy: 'append' as const,
};

/**
 * Start an informer on `path` (`/api/v1/namespaces`, `/apis/argoproj.io/v1alpha1/namespaces/argocd/applications`),
 * listing with `list`. It restarts by itself after errors, logging them at `warn`.
 */
export function watch<T extends KubernetesObject>(
  kc: KubeConfig,
  what: string,
  path: string,
  list: () => Promise<KubernetesListObject<T>>,
  options: WatchOptions<T>,
  log: Logger,
): Watched<T> {
  const trim = (obj: T) => {
    if (obj?.metadata) delete obj.metadata.managedFields;
    options.trim?.(obj);
  };
  // client-node's Watch takes its headers from the config's fetch options: ask there for the metadata-only form.
  const config = options.metadataOnly
    ? ({
        getCurrentCluster: () => kc.getCurrentCluster(),
        applyToFetchOptions: (opts: { headers?: Record<string, string> }) =>
          kc.applyToFetchOptions({ ...opts, headers: { ...opts.headers, Accept: ACCEPT_METADATA } }),
      } as unknown as KubeConfig)
    : kc;
  const upstream = new Watch(config);
  let stopped = false;
  // client-node's ListWatch asks for its watch after its list without looking whether it was stopped meanwhile, and
  // stores the request only then: a stop() during the list would leave that watch running. It is aborted here.
  const trimming = {
    watch: async (p: string, query: Record<string, string | number | boolean | undefined>, callback: (phase: string, obj: T, raw: unknown) => void, done: (err: unknown) => void) => {
      const request = await upstream.watch(p, query, (phase, obj: T, raw) => {
        if (phase === 'ADDED' || phase === 'MODIFIED' || phase === 'DELETED') trim(obj);
        callback(phase, obj, raw);
      }, done);
      if (stopped) request.abort();
      return request;
    },
  } as unknown as Watch;
  const listed = async () => {
    const answer = await list();
    for (const item of answer.items ?? []) trim(item);
    return answer;
  };
  const informer = new ListWatch<T>(path, trimming, listed, false, options.labelSelector);
  let isSynced = false;
  let lastError: unknown;
  let markSynced!: () => void;
  const synced = new Promise<void>((resolve) => (markSynced = resolve));
  let timer: NodeJS.Timeout | undefined;
  let errors = 0;
  const start = () => {
    const before = errors;
    // client-node's start() resolves even when its list failed (it reports the failure through 'error' instead).
    informer.start().then(
      () => {
        if (errors !== before) return;
        lastError = undefined;
        isSynced = true;
        markSynced();
      },
      (err: unknown) => restart(err),
    );
  };
  const restart = (err: unknown) => {
    errors++;
    if (stopped) return;
    lastError = err;
    log.warn({ err, informer: what }, 'informer stopped; starting it again');
    clearTimeout(timer);
    timer = setTimeout(start, RESTART_MS);
    timer.unref();
  };
  informer.on('error', restart);
  start();
  return {
    synced,
    get isSynced() {
      return isSynced;
    },
    get lastError() {
      return lastError;
    },
    get: (name, namespace) => informer.get(name, namespace),
    list: (namespace) => informer.list(namespace),
    // A list that answers after stop() still hands its objects out: nothing reaches pds after stop().
    on: (verb, cb) =>
      informer.on(verb, (obj: T) => {
        if (!stopped) cb(obj);
      }),
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await informer.stop();
    },
  };
}

/** The namespaces pds reads from. */
export interface ClusterNamespaces {
  /** `PDS_WORKFLOW_NAMESPACE`. */
  workflows: string;
  /** `PDS_ARGOCD_NAMESPACE`. */
  argocd: string;
}

/** Everything pds reads, watched: tenants, their quotas and bindings, Applications, Deployments and Workflows. */
export class ClusterCache {
  readonly namespaces: Watched<V1Namespace>;
  readonly quotas: Watched<V1ResourceQuota>;
  readonly roleBindings: Watched<V1RoleBinding>;
  readonly applications: Watched<Application>;
  /**
   * The Applications of one tenant (label `pds.dev/tenant`), without a scan of every tenant's: all Applications live in
   * the one `PDS_ARGOCD_NAMESPACE`, whose informer list is all of them (10,000 at issue 23's size).
   */
  readonly applicationsOf: (team: string) => Application[];
  readonly deployments: Watched<V1Deployment>;
  /**
   * pds's Workflows that Argo has not marked completed ({@link RUNNING_WORKFLOWS}), metadata only
   * (`PartialObjectMetadata`): no `spec`, no `status`. One that finishes leaves it with a `delete` event carrying its
   * metadata as it was while it ran (the API server's watch sends `DELETED` for an object that stops matching the
   * label selector: https://kubernetes.io/docs/reference/using-api/api-concepts/#efficient-detection-of-changes).
   */
  readonly workflows: Watched<WorkflowMetadata>;

  constructor(kc: KubeConfig, ns: ClusterNamespaces, log: Logger) {
    const core = kc.makeApiClient(CoreV1Api);
    const rbac = kc.makeApiClient(RbacAuthorizationV1Api);
    const apps = kc.makeApiClient(AppsV1Api);
    const custom = kc.makeApiClient(CustomObjectsApi);
    const managed = `${LABEL.managedBy}=pds`;
    this.namespaces = watch(kc, 'namespaces', '/api/v1/namespaces', paged((page) => core.listNamespace({ labelSelector: managed, ...page })), { labelSelector: managed }, log);
    // Quotas and bindings are few per tenant; their kinds are not labelled by every tool that might make them, so all
    // are watched and filtered by namespace when read.
    this.quotas = watch(kc, 'resourcequotas', '/api/v1/resourcequotas', paged((page) => core.listResourceQuotaForAllNamespaces(page)), {}, log);
    this.roleBindings = watch(
      kc,
      'rolebindings',
      '/apis/rbac.authorization.k8s.io/v1/rolebindings',
      paged((page) => rbac.listRoleBindingForAllNamespaces({ labelSelector: LABEL.role, ...page })),
      { labelSelector: LABEL.role },
      log,
    );
    this.deployments = watch(
      kc,
      'deployments',
      '/apis/apps/v1/deployments',
      paged((page) => apps.listDeploymentForAllNamespaces({ labelSelector: managed, ...page })),
      { labelSelector: managed, trim: trimDeployment },
      log,
    );
    const argo = (namespace: string, plural: string) => ({ group: ARGO_GROUP, version: ARGO_VERSION, namespace, plural });
    this.applications = watch<Application>(
      kc,
      'applications',
      `/apis/${ARGO_GROUP}/${ARGO_VERSION}/namespaces/${ns.argocd}/applications`,
      paged((page) => custom.listNamespacedCustomObject({ ...argo(ns.argocd, 'applications'), labelSelector: managed, ...page })),
      { labelSelector: managed, trim: trimApplication },
      log,
    );
    this.applicationsOf = labelIndex(this.applications, LABEL.tenant);
    // Running Workflows only, metadata only: Argo's labels carry the phase, and a Workflow's status (about 20 KB with
    // its nodes) is fetched when pds needs it (engine.ts). Finished ones, which Argo keeps for its TTL, are left to the
    // API server: the cache, the first list and start-up cost the same whatever Argo keeps (issue 23 item 3).
    this.workflows = watch<WorkflowMetadata>(
      kc,
      'workflows',
      `/apis/${ARGO_GROUP}/${ARGO_VERSION}/namespaces/${ns.workflows}/workflows`,
      paged((page) => custom.listNamespacedCustomObject({ ...argo(ns.workflows, 'workflows'), labelSelector: RUNNING_WORKFLOWS, ...page }, metadataOnly)),
      { labelSelector: RUNNING_WORKFLOWS, metadataOnly: true },
      log,
    );
  }

  private get all(): Watched<KubernetesObject>[] {
    return [this.namespaces, this.quotas, this.roleBindings, this.applications, this.deployments, this.workflows] as Watched<KubernetesObject>[];
  }

  /** Resolves once every cache holds its first list. */
  async synced(): Promise<void> {
    await Promise.all(this.all.map((w) => w.synced));
  }

  /**
   * Wait for the first list of every cache.
   * @throws Error naming each informer not synced within `timeoutMs` and its last error (e.g. a 403: a missing RBAC rule).
   */
  async waitForSync(timeoutMs: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), timeoutMs)));
    const outcome = await Promise.race([this.synced(), timeout]);
    clearTimeout(timer);
    if (outcome !== 'timeout') return;
    const names = ['namespaces', 'resourcequotas', 'rolebindings', 'applications', 'deployments', 'workflows'];
    const stuck = this.all.flatMap((w, i) => (w.isSynced ? [] : [`${names[i]}${w.lastError ? ` (${describe(w.lastError)})` : ''}`]));
    throw new Error(`the cluster caches did not fill within ${timeoutMs / 1000} s: ${stuck.join(', ')}`);
  }

  /** True once every cache holds its first list. */
  get isSynced(): boolean {
    return this.all.every((w) => w.isSynced);
  }

  async stop(): Promise<void> {
    await Promise.all(this.all.map((w) => w.stop()));
  }
}

/**
 * An index of a watched kind by the value of one label, kept by the informer's own events (the first list's `add`s,
 * then the watch's and any re-list's `add`, `update` and `delete`), so the objects with one value are found without
 * a scan of all. An object whose label changes moves; one without the label is not indexed.
 * @returns the objects (as the cache holds them) whose `label` is `value`, in no particular order.
 */
export function labelIndex<T extends KubernetesObject>(watched: Pick<Watched<T>, 'on'>, label: string): (value: string) => T[] {
  const byValue = new Map<string, Map<string, T>>();
  const valueOf = new Map<string, string>();
  const keyOf = (obj: T) => `${obj.metadata?.namespace ?? ''}/${obj.metadata?.name ?? ''}`;
  const remove = (obj: T) => {
    const key = keyOf(obj);
    const value = valueOf.get(key);
    if (value === undefined) return;
    valueOf.delete(key);
    const objects = byValue.get(value)!;
    objects.delete(key);
    if (objects.size === 0) byValue.delete(value);
  };
  const put = (obj: T) => {
    remove(obj);
    const value = obj.metadata?.labels?.[label];
    if (value === undefined) return;
    const key = keyOf(obj);
    valueOf.set(key, value);
    let objects = byValue.get(value);
    if (!objects) byValue.set(value, (objects = new Map()));
    objects.set(key, obj);
  };
  watched.on('add', put);
  watched.on('update', put);
  watched.on('delete', remove);
  return (value) => [...(byValue.get(value)?.values() ?? [])];
}

/**
 * The label selector of the Workflow informer: pds's Workflows (`pds.dev/managed-by=pds`) that Argo has not labelled
 * `workflows.argoproj.io/completed=true` (Argo sets it with the final phase:
 * https://github.com/argoproj/argo-workflows/blob/main/workflow/controller/operator.go `markWorkflowPhase`).
 */
export const RUNNING_WORKFLOWS = `${LABEL.managedBy}=pds,${ARGO_LABEL.completed}!=true`;

/** Objects per page of a first list (client-go's informers list 500 at a time too). */
export const LIST_PAGE_SIZE = 500;

/** What one request of a first list asks for: a page, and where the API server may answer it from. */
export interface ListPage {
  limit: number;
  _continue?: string;
  /** `'0'` on the first request only: any resourceVersion, so the API server's watch cache may answer. */
  resourceVersion?: string;
}

/**
 * An informer's first list, read from the API server's watch cache when it has one: the first request carries
 * `resourceVersion=0` ("any version": the cache's current state, possibly a little behind etcd), as client-go's
 * reflector does, and the informer's watch then starts from the resourceVersion that list carries, so nothing is
 * missed. Without it the API server reads every object whole from etcd for each page, even for a metadata-only list
 * (the Workflows: about 20 KB each with their status), which made start-up grow with what Argo keeps (issue 23 item 3).
 *
 * The kube-apiserver the tests run (1.20, `scripts/envtest/build.sh`) answers `resourceVersion=0` from its cache in
 * one response whatever `limit` says (no `continue`); a server that pages its cache, or has none (`--watch-cache=false`),
 * answers with `continue` tokens, which are followed without `resourceVersion` (the API server refuses both together).
 * Should that one large answer not arrive within `PDS_KUBE_TIMEOUT_S`, the list is read again as consistent pages from
 * etcd, each small enough for its bound. https://kubernetes.io/docs/reference/using-api/api-concepts/#resource-versions
 */
export function paged<T extends KubernetesObject>(
  list: (page: ListPage) => Promise<KubernetesListObject<T>>,
): () => Promise<KubernetesListObject<T>> {
  return async () => {
    try {
      return await pages(list, '0');
    } catch (err) {
      if (!isTimeout(err)) throw err;
      return pages(list, undefined);
    }
  };
}

/** Every page of one list (`limit`, `continue`); the pages are one snapshot, whose resourceVersion the last carries. */
async function pages<T extends KubernetesObject>(
  list: (page: ListPage) => Promise<KubernetesListObject<T>>,
  resourceVersion: string | undefined,
): Promise<KubernetesListObject<T>> {
  const items: T[] = [];
  let _continue: string | undefined;
  for (;;) {
    const page = await list({ limit: LIST_PAGE_SIZE, ...(_continue ? { _continue } : resourceVersion ? { resourceVersion } : {}) });
    items.push(...(page.items ?? [])); // the API server answers an empty metadata-only list with `items: null`
    // Typed lists name it `_continue`; custom-object lists come back as plain JSON, `continue`.
    const meta = page.metadata as { _continue?: string; continue?: string } | undefined;
    _continue = meta?._continue || meta?.continue || undefined;
    if (!_continue) return { ...page, items };
  }
}

/** An Application as pds reads it (`backend.ts`, `previews.ts`): its metadata and the status fields of {@link Application}. */
function trimApplication(app: Application): void {
  const s = app.status;
  delete (app as { spec?: unknown }).spec;
  if (!s) return;
  app.status = {
    ...(s.sync ? { sync: { status: s.sync.status } } : {}),
    ...(s.health ? { health: { status: s.health.status, message: s.health.message } } : {}),
    ...(s.conditions ? { conditions: s.conditions.map((c) => ({ type: c.type, message: c.message })) } : {}),
    ...(s.operationState ? { operationState: { phase: s.operationState.phase, message: s.operationState.message } } : {}),
  };
}

/**
 * A Deployment as pds reads it: metadata, the container images (`backend.ts`), and the replicas (`index.ts`: 0 when an
 * Argo Rollouts Rollout runs its pods through `workloadRef`).
 */
function trimDeployment(deployment: V1Deployment): void {
  const containers = deployment.spec?.template?.spec?.containers ?? [];
  deployment.spec = {
    ...(deployment.spec?.replicas !== undefined ? { replicas: deployment.spec.replicas } : {}),
    selector: {},
    template: { spec: { containers: containers.map((c) => ({ name: c.name, image: c.image })) } },
  };
  delete deployment.status;
}

/** An API error in one line: `HTTP 403: <message>`, a request cut at its bound, or the error's message. */
export function describe(err: unknown): string {
  if (isTimeout(err)) return 'no answer from the Kubernetes API server within PDS_KUBE_TIMEOUT_S';
  const e = err as { code?: number; body?: unknown; message?: string };
  let detail: string | undefined;
  if (typeof e.body === 'string') {
    try {
      detail = (JSON.parse(e.body) as { message?: string }).message;
    } catch {
      detail = e.body.slice(0, 200);
    }
  } else if (e.body && typeof e.body === 'object') detail = (e.body as { message?: string }).message;
  return `${e.code ? `HTTP ${e.code}: ` : ''}${detail ?? e.message ?? String(err)}`;
}
