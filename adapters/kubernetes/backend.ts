/**
 * The kubernetes backend's {@link PlatformBackend} (issue 10): every read answered from the informers' caches
 * (`informers.ts`), so a warm read makes no API server call. Logs are the exception: they are read per request from
 * the pods (or Loki).
 *
 * | contract resource (`docs/api.md#resources-and-their-fields`) | read from |
 * |---|---|
 * | Tenant | Namespace labelled `pds.dev/managed-by=pds` (annotations: display name, description, contact, uid), ResourceQuota `pds-quota`, RoleBindings labelled `pds.dev/role` |
 * | Service | Application `<team>-<service>` in `PDS_ARGOCD_NAMESPACE` (labels and annotations the templates write), its live Deployment |
 * | Status | the Application's `status.sync.status`, `status.health.status`, message from health, conditions or operation state |
 * | Resource usage | the ResourceQuota's `status.hard` and `status.used` (kube-controller-manager keeps them) |
 */
import type { V1Deployment, V1Namespace } from '@kubernetes/client-node';
import { z } from 'zod';
import { NotFound } from '../../core/errors.js';
import { HealthStatus, SyncStatus, type LogLine, type Member, type MemberRole, type ResourceUsage, type Service, type Status, type Tenant } from '../../core/model.js';
import { applicationName } from '../../core/names.js';
import type { RolloutView } from '../../core/rollouts.js';
import type { RolloutRead } from './rollouts.js';
import type { PlatformBackend, TenantRef } from '../../core/ports.js';
import type { ClusterCache } from './informers.js';
import { ANNOTATION, LABEL, QUOTA_NAME, type Application } from './objects.js';
import { splitImage } from '../../core/images.js';

/** Where service logs come from: the pods through the API server, or Loki. */
export interface LogSource {
  /** Lines of the service's pods, oldest first: the newest `lines` of the last `sinceSeconds`. */
  read(team: string, app: string, query: { lines: number; sinceSeconds: number }): Promise<{ lines: LogLine[]; note: string }>;
}

/** The read side of the cluster, with the tenant identity the access checks use. */
export interface KubernetesBackend extends PlatformBackend {
  /** The tenant's identity: the Namespace's `pds.dev/uid` annotation (its metadata.uid when it has none). */
  getTenantRef(name: string): Promise<TenantRef | undefined>;
}

export interface KubernetesBackendOptions {
  cache: ClusterCache;
  argocdNamespace: string;
  logs: LogSource;
  /**
   * The canary or blue-green release of a service, from its Argo Rollouts `Rollout`, and whether the Rollout's status is
   * of its current spec (`rollouts.ts` readRolloutState); `undefined` for a rolling service. Absent: status carries no
   * `rollout`.
   */
  rollout?: (team: string, app: string) => Promise<RolloutRead | undefined>;
}

const ROLES: readonly MemberRole[] = ['admin', 'member', 'viewer'];

/** Create the backend over warm (or warming) caches; reads wait for the first list of every cache. */
export function kubernetesBackend({ cache, argocdNamespace, logs, rollout: rolloutOf }: KubernetesBackendOptions): KubernetesBackend {
  const live = (ns: V1Namespace | undefined) => (ns && !ns.metadata?.deletionTimestamp && ns.metadata?.labels?.[LABEL.tenant] !== undefined ? ns : undefined);
  const namespaceOf = (name: string) => live(cache.namespaces.get(name));

  function toTenant(ns: V1Namespace): Tenant {
    const name = ns.metadata!.name!;
    const a = ns.metadata?.annotations ?? {};
    const hard = cache.quotas.get(QUOTA_NAME, name)?.spec?.hard ?? {};
    const members: Member[] = cache.roleBindings
      .list(name)
      .flatMap((rb) => {
        const role = rb.metadata?.labels?.[LABEL.role] as MemberRole | undefined;
        const userId = rb.metadata?.annotations?.[ANNOTATION.member] ?? rb.subjects?.[0]?.name;
        return role && ROLES.includes(role) && userId ? [{ userId, role }] : [];
      })
      .sort((x, y) => ROLES.indexOf(x.role) - ROLES.indexOf(y.role) || compare(x.userId, y.userId));
    return {
      name,
      displayName: a[ANNOTATION.displayName] || name,
      description: a[ANNOTATION.description] ?? '',
      contactEmail: a[ANNOTATION.contactEmail] ?? '',
      quotas: { cpu: hard.cpu ?? '0', memory: hard.memory ?? '0', pods: hard.pods ?? '0' },
      members,
    };
  }

  /** The Applications pds made, not being deleted, of `team` (every team when absent). */
  const applications = (team?: string): Application[] =>
    (team === undefined ? cache.applications.list(argocdNamespace) : cache.applicationsOf(team)).filter((a) => !a.metadata?.deletionTimestamp && a.metadata?.labels?.[LABEL.service]);

  function applicationOf(team: string, app: string): Application | undefined {
    const found = cache.applications.get(applicationName(team, app), argocdNamespace);
    const labels = found?.metadata?.labels ?? {};
    // `<team>-<app>` is ambiguous ("a-b"+"c" and "a"+"b-c"): the labels say whose it is.
    return found && !found.metadata?.deletionTimestamp && labels[LABEL.tenant] === team && labels[LABEL.service] === app ? found : undefined;
  }

  function toService(application: Application): Service {
    const labels = application.metadata?.labels ?? {};
    const a = application.metadata?.annotations ?? {};
    const team = labels[LABEL.tenant]!;
    const name = labels[LABEL.service]!;
    return {
      team,
      name,
      imageTag: a[ANNOTATION.imageTag] || deployedTag(cache.deployments.get(applicationName(team, name), team)),
      host: a[ANNOTATION.host] ?? '',
      port: a[ANNOTATION.port] ?? '',
      componentType: labels[LABEL.componentType] ?? 'base-service',
      hasDatabase: Boolean(labels[LABEL.database]),
    };
  }

  return {
    async listTenants() {
      await cache.synced();
      return cache.namespaces
        .list()
        .filter((ns) => live(ns))
        .map(toTenant)
        .sort((a, b) => compare(a.name, b.name));
    },

    async getTenant(name) {
      await cache.synced();
      const ns = namespaceOf(name);
      return ns && toTenant(ns);
    },

    async getTenantRef(name) {
      await cache.synced();
      const ns = namespaceOf(name);
      return ns && { name, uid: ns.metadata?.annotations?.[ANNOTATION.uid] ?? ns.metadata!.uid! };
    },

    async listServices(team) {
      await cache.synced();
      return applications(team)
        .map(toService)
        .sort((a, b) => compare(a.team, b.team) || compare(a.name, b.name));
    },

    async getService(team, app) {
      await cache.synced();
      const application = applicationOf(team, app);
      return application && toService(application);
    },

    /** @throws NotFound `GitOps application not found: <team>-<app>` (`docs/api.md#errors`: 404 when the Application is missing). */
    async status(team, app): Promise<Status> {
      await cache.synced();
      const application = applicationOf(team, app);
      if (!application) throw new NotFound(`GitOps application not found: ${applicationName(team, app)}`);
      const service = toService(application);
      const s = application.status ?? {};
      const sync = SyncStatus.safeParse(s.sync?.status);
      const health = HealthStatus.safeParse(s.health?.status);
      const message =
        s.health?.message || s.conditions?.map((c) => c.message).filter(Boolean).join('; ') || s.operationState?.message || '';
      const rollout = rolledBackView(application, service.imageTag, await rolloutOf?.(team, app));
      // An aborted release is not the service's state: the stable tag serves all traffic (wait-rollout failed the
      // deploy, so pds.dev/image-tag still names it), and the message says what was rolled back.
      const rolledBack = rollout?.phase === 'Aborted' && rollout.stableTag
        ? `rolled back: ${rollout.canaryTag} ${rollout.message.replace(/^RolloutAborted: /, '') || 'aborted'}; all traffic is on ${rollout.stableTag} again`
        : undefined;
      return {
        argocd: {
          name: applicationName(team, app),
          syncStatus: sync.success ? sync.data : 'Unknown',
          healthStatus: rolledBack ? 'Healthy' : health.success ? health.data : 'Unknown',
          message: rolledBack ?? message,
        },
        service: { team, name: app, imageTag: service.imageTag, host: service.host },
        ...(rollout && { rollout }),
      };
    },

    /** @throws NotFound `service not found: <team>/<app>` (saying whether the tenant or the service is missing). */
    async logs(team, app, query) {
      await cache.synced();
      if (!namespaceOf(team)) throw new NotFound(`service not found: ${team}/${app} (tenant ${team} does not exist)`);
      if (!applicationOf(team, app)) throw new NotFound(`service not found: ${team}/${app}`);
      return logs.read(team, app, query);
    },

    /** @throws NotFound `tenant not found: <tenant>`. */
    async resources(tenant): Promise<ResourceUsage> {
      await cache.synced();
      if (!namespaceOf(tenant)) throw new NotFound(`tenant not found: ${tenant}`);
      const quota = cache.quotas.get(QUOTA_NAME, tenant);
      const hard = quota?.status?.hard ?? quota?.spec?.hard ?? {};
      const used = quota?.status?.used ?? {};
      const pick = (q: Record<string, string>) => ({ cpu: q.cpu ?? q['requests.cpu'] ?? '0', memory: q.memory ?? q['requests.memory'] ?? '0', pods: q.pods ?? '0' });
      return {
        tenant,
        allocated: pick(hard),
        used: pick(used),
        note: quota
          ? `ResourceQuota ${QUOTA_NAME} in namespace ${tenant}: allocated is status.hard, used is status.used (requests of the tenant's pods, counted by Kubernetes)`
          : `namespace ${tenant} has no ResourceQuota ${QUOTA_NAME}; nothing is allocated or counted`,
      };
    },
  };
}

/** What deploy-service's exit handler records on the Application when it rolls a release back (`ANNOTATION.rolledBack`). */
const RolledBack = z.object({ workflow: z.string(), canaryTag: z.string(), stableTag: z.string(), message: z.string() });

/**
 * The release as status shows it. Once the exit handler has reverted an aborted release in Git, the Rollout is Healthy
 * on its stable template again and its annotations name the release before; the Application's record of the rollback
 * then says what was rolled back (as the aborted Rollout did) until a deploy records another tag or the service runs
 * another one. So it does while the revert is applied and the Rollouts controller has not taken it up yet (`observed`
 * false): the annotations are then the release before's and the status still the aborted one's, which together would
 * name the wrong tags (that release "rolled back", traffic on the one before it).
 */
function rolledBackView(application: Application, imageTag: string, read: RolloutRead | undefined): RolloutView | undefined {
  if (!read) return undefined;
  const rollout = read.view;
  if (rollout.phase !== 'Healthy' && read.observed) return rollout;
  let record: z.infer<typeof RolledBack> | undefined;
  try {
    const parsed = RolledBack.safeParse(JSON.parse(application.metadata?.annotations?.[ANNOTATION.rolledBack] || 'null'));
    record = parsed.success ? parsed.data : undefined;
  } catch {
    record = undefined; // not written by pds: ignored
  }
  if (!record || !record.stableTag || record.stableTag !== imageTag) return rollout;
  const { pausedUntil: _paused, ...view } = rollout;
  return { ...view, phase: 'Aborted', canaryWeight: 0, canaryTag: record.canaryTag, stableTag: record.stableTag, message: record.message, workflowName: record.workflow };
}

/** The tag of the first container's image of a Deployment (`registry/acme/web:0.1.0` → `0.1.0`), or ''. */
function deployedTag(deployment: V1Deployment | undefined): string {
  // Manifests name images by digest (`…:<tag>@sha256:…`, core/images.ts): the tag is before it.
  const { image } = splitImage(deployment?.spec?.template?.spec?.containers?.[0]?.image ?? '');
  const at = image.lastIndexOf(':');
  return at > image.lastIndexOf('/') ? image.slice(at + 1) : '';
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
