/**
 * The cluster's observations for verified promotion (issue 20 item 4): on every change of a service's Argo CD
 * Application or of its Deployment (both from the informers, `informers.ts`), what the service is — Synced and Healthy
 * running which image by digest, or not — goes to the record store's intervals (`adapters/sql/images.ts`).
 *
 * The digest is read from the live Deployment's pod template (`spec.template.spec.containers[0].image`,
 * `<image>@sha256:…`), not from the GitOps repository or from what pds submitted: Synced and Healthy are Argo CD's word
 * about the live objects, and the live Deployment is what they describe — a manifest edited by hand, or a sync that
 * has not happened yet, runs something else than pds wrote. The kubelet pulls that exact digest, so it is what the
 * pods run. An image without a digest (a manifest written before images were pinned) is never counted.
 *
 * Every replica observes; the store's writes are idempotent. pds sees changes while it runs: at start-up it reads
 * every Application once, and an interval still open continues only if the service still runs that digest healthy
 * (a blip while no pds was watching is not seen).
 */
import type { V1Deployment } from '@kubernetes/client-node';
import { splitImage } from '../../core/images.js';
import type { Logger } from '../../core/logger.js';
import { applicationName } from '../../core/names.js';
import type { RunningImage, TenantRef } from '../../core/ports.js';
import type { RecordStore } from '../sql/index.js';
import type { ClusterCache } from './informers.js';
import { ANNOTATION, LABEL, type Application } from './objects.js';

export interface ClusterObserverOptions {
  cache: ClusterCache;
  records: RecordStore;
  tenantRef(team: string): Promise<TenantRef | undefined>;
  now: () => Date;
  log: Logger;
}

/** Follows the Application and Deployment informers until {@link ClusterObserver.close}. */
export class ClusterObserver {
  private chain: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(private readonly options: ClusterObserverOptions) {}

  /** Subscribe, and observe every service once as it is now. */
  start(): void {
    const { cache } = this.options;
    const ofApplication = (app: Application, gone = false) => {
      const team = app.metadata?.labels?.[LABEL.tenant];
      const service = app.metadata?.labels?.[LABEL.service];
      if (team && service && app.metadata?.labels?.[LABEL.componentType] !== 'preview') this.enqueue(team, service, gone);
    };
    const ofDeployment = (deployment: V1Deployment) => {
      const team = deployment.metadata?.labels?.[LABEL.tenant];
      const service = deployment.metadata?.labels?.[LABEL.service];
      if (team && service) this.enqueue(team, service);
    };
    cache.applications.on('add', (a) => ofApplication(a));
    cache.applications.on('update', (a) => ofApplication(a));
    cache.applications.on('delete', (a) => ofApplication(a, true));
    cache.deployments.on('add', ofDeployment);
    cache.deployments.on('update', ofDeployment);
    cache.deployments.on('delete', ofDeployment);
    for (const app of cache.applications.list()) ofApplication(app);
  }

  private enqueue(team: string, service: string, gone = false): void {
    if (this.closed) return;
    // One at a time, in the order of the events: each reads the caches as they are then, so the last one wins.
    this.chain = this.chain
      .then(() => this.observe(team, service, gone))
      .catch((err: unknown) => this.options.log.warn({ err, team, app: service }, 'could not record what a service runs'));
  }

  /** What `team`/`service` runs Synced and Healthy now, by digest, or `undefined`. */
  running(team: string, service: string): RunningImage | undefined {
    const { cache } = this.options;
    const name = applicationName(team, service);
    const app = cache.applications.list().find((a) => a.metadata?.name === name);
    if (app?.status?.sync?.status !== 'Synced' || app.status.health?.status !== 'Healthy') return undefined;
    const reference = cache.deployments.get(name, team)?.spec?.template?.spec?.containers?.[0]?.image;
    const { image, digest } = splitImage(reference ?? '');
    if (!digest) return undefined;
    const a = app.metadata?.annotations ?? {};
    return {
      image,
      digest,
      ...(a[ANNOTATION.dockerfileRepo] && { repo: a[ANNOTATION.dockerfileRepo] }),
      ...(a[ANNOTATION.dockerfilePath] && { dockerfilePath: a[ANNOTATION.dockerfilePath] }),
    };
  }

  private async observe(team: string, service: string, gone: boolean): Promise<void> {
    const tenant = await this.options.tenantRef(team);
    if (!tenant) return;
    await this.options.records.images.observe(tenant, service, gone ? undefined : this.running(team, service), this.options.now());
  }

  /** Stop following, after the observations already queued. */
  async close(): Promise<void> {
    this.closed = true;
    await this.chain;
  }
}
