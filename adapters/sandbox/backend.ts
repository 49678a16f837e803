/**
 * The sandbox's {@link PlatformBackend}: tenants, services, GitOps status, logs and resource usage, all read from what
 * the sandbox itself recorded and ran (`docs/api.md#resources-and-their-fields`, "Services and status").
 */
import { NotFound } from '../../core/errors.js';
import type { LogLine, ResourceUsage, Service, Status, Tenant } from '../../core/model.js';
import type { PlatformBackend } from '../../core/ports.js';
import type { RecordStore } from '../sql/index.js';
import { toService, toTenant } from './state.js';

/**
 * Nominal requests the sandbox counts per running thing, in millicores, MiB and pods. A real cluster reports what
 * the pods request; the sandbox has no pods, so `resources` says these are nominal.
 */
export const NOMINAL_REQUESTS = {
  service: { cpuMilli: 250, memoryMi: 256, pods: 1 },
  database: { cpuMilli: 500, memoryMi: 512, pods: 1 },
} as const;

export interface BackendOptions {
  store: RecordStore;
  now: () => Date;
}

/** Create the read side over the record store. */
export function sandboxBackend({ store, now }: BackendOptions): PlatformBackend {
  return {
    async listTenants(): Promise<Tenant[]> {
      return (await store.tenants.list()).map(toTenant).sort((a, b) => compare(a.name, b.name));
    },

    async getTenant(name) {
      const tenant = await store.tenants.get(name);
      return tenant && toTenant(tenant);
    },

    /** The live tenant's name and the uid minted when it was created, or `undefined`. */
    async getTenantRef(name) {
      const tenant = await store.tenants.get(name);
      return tenant && { name: tenant.name, uid: tenant.uid };
    },

    async listServices(team?: string): Promise<Service[]> {
      return (await store.services.list(team)).map(toService).sort((a, b) => compare(a.team, b.team) || compare(a.name, b.name));
    },

    async getService(team, app) {
      const service = await store.services.get(team, app);
      return service && toService(service);
    },

    /** @throws NotFound `GitOps application not found: <team>-<app>`. */
    async status(team, app): Promise<Status> {
      const service = await store.services.get(team, app);
      if (!service) throw new NotFound(`GitOps application not found: ${team}-${app}`);
      return {
        argocd: {
          name: `${team}-${app}`,
          syncStatus: service.syncStatus,
          healthStatus: service.healthStatus,
          message: service.message,
        },
        service: { team, name: app, imageTag: service.imageTag, host: service.host },
        ...(service.rollout ? { rollout: service.rollout } : {}),
      };
    },

    /**
     * The workflow and deployment lines the sandbox wrote for the service since it was created, oldest first: the
     * newest `lines` of those no older than `sinceSeconds`.
     * @throws NotFound `service not found: <team>/<app>` (saying whether the tenant or the service is missing).
     */
    async logs(team, app, { lines, sinceSeconds }) {
      if (!(await store.tenants.get(team))) throw new NotFound(`service not found: ${team}/${app} (tenant ${team} does not exist)`);
      const service = await store.services.get(team, app);
      if (!service) throw new NotFound(`service not found: ${team}/${app}`);
      const from = new Date(now().getTime() - sinceSeconds * 1000).toISOString();
      const since = service.createdAt > from ? service.createdAt : from;
      const read = await store.logs.read(team, app, { since, limit: lines });
      const result: LogLine[] = read.lines.map((l) => ({ timestamp: l.timestamp, line: l.line, labels: { ...l.labels } }));
      const what = `${plural(result.length, 'line')} from the last ${duration(sinceSeconds)} of the sandbox's workflow and deployment events for ${team}/${app}`;
      return { lines: result, note: read.hidden > 0 ? `${what}; ${plural(read.hidden, 'older line')} not shown` : what };
    },

    /** @throws NotFound `tenant not found: <tenant>`. */
    async resources(tenant): Promise<ResourceUsage> {
      const record = await store.tenants.get(tenant);
      if (!record) throw new NotFound(`tenant not found: ${tenant}`);
      let cpuMilli = 0;
      let memoryMi = 0;
      let pods = 0;
      let counted = 0;
      let databases = 0;
      for (const service of await store.services.list(tenant)) {
        counted++;
        cpuMilli += NOMINAL_REQUESTS.service.cpuMilli;
        memoryMi += NOMINAL_REQUESTS.service.memoryMi;
        pods += NOMINAL_REQUESTS.service.pods;
        if (service.hasDatabase) {
          databases++;
          cpuMilli += NOMINAL_REQUESTS.database.cpuMilli;
          memoryMi += NOMINAL_REQUESTS.database.memoryMi;
          pods += NOMINAL_REQUESTS.database.pods;
        }
      }
      const { service: s, database: d } = NOMINAL_REQUESTS;
      return {
        tenant,
        allocated: { ...record.quotas },
        used: { cpu: formatCpu(cpuMilli), memory: formatMemory(memoryMi), pods: String(pods) },
        note:
          `sandbox: nominal requests of ${plural(counted, 'service')} (previews included) and ${plural(databases, 'database')}; ` +
          `each service counts ${formatCpu(s.cpuMilli)} CPU, ${formatMemory(s.memoryMi)}, ${s.pods} pod and each database ` +
          `${formatCpu(d.cpuMilli)} CPU, ${formatMemory(d.memoryMi)}, ${d.pods} pod; allocated is the tenant's quota`,
      };
    },
  };
}

/** Millicores as a Kubernetes quantity: `750m`, `1`, `1250m`, `0`. */
export function formatCpu(milli: number): string {
  return milli % 1000 === 0 ? String(milli / 1000) : `${milli}m`;
}

/** MiB as a Kubernetes quantity: `768Mi`, `1Gi`, `0`. */
export function formatMemory(mi: number): string {
  if (mi === 0) return '0';
  return mi % 1024 === 0 ? `${mi / 1024}Gi` : `${mi}Mi`;
}

/** Seconds as the shortest of `24h`, `15m`, `90s`, `1h30m`. */
export function duration(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const rest = s % 60;
  const parts = [h ? `${h}h` : '', m ? `${m}m` : '', rest ? `${rest}s` : ''].filter(Boolean);
  return parts.join('') || '0s';
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
