/**
 * Preview expiry on the cluster (issue 10 "Previews expire"): one replica at a time — the holder of the
 * `coordination.k8s.io` Lease `pds-preview-reaper` in pds's own namespace — submits `preview-delete` for every preview
 * Application whose `pds.dev/expires-at` has passed and that no unfinished preview-delete is already removing.
 * The Lease follows the leader-election convention of client-go: a holder renews `renewTime`; another replica takes
 * it over once `renewTime + leaseDurationSeconds` has passed, with the resourceVersion guarding against two takers.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { CoordinationV1Api, V1MicroTime, type KubeConfig, type V1Lease } from '@kubernetes/client-node';
import type { Logger } from '../../core/logger.js';
import type { AuditEntry } from '../../core/model.js';
import { previewName } from '../../core/names.js';
import { operationContract } from '../../core/operations/index.js';
import type { RecordStore } from '../sql/index.js';
import type { ClusterCache } from './informers.js';
import type { ArgoWorkflowEngine } from './engine.js';
import { ANNOTATION, LABEL } from './objects.js';

/** The user id preview-delete workflows of expired previews are recorded under. */
export const REAPER_USER = 'system:pds-preview-reaper';
export const REAPER_LEASE = 'pds-preview-reaper';

export interface PreviewReaperOptions {
  kc: KubeConfig;
  cache: ClusterCache;
  engine: ArgoWorkflowEngine;
  records: RecordStore;
  /** Where the Lease lives: pds's own namespace. */
  leaseNamespace: string;
  argocdNamespace: string;
  log: Logger;
  now?: () => Date;
  /** Seconds a held Lease lasts without renewal (default 30). */
  leaseSeconds?: number;
  /** Milliseconds between rounds (default 10,000). */
  everyMs?: number;
  /** This replica's identity (default `<host>-<random>`). */
  identity?: string;
}

/** Submits preview-delete for expired previews while this replica holds the Lease. */
export class PreviewReaper {
  readonly identity: string;
  private readonly leases: CoordinationV1Api;
  private readonly now: () => Date;
  private timer: NodeJS.Timeout | undefined;
  private round: Promise<void> | undefined;
  private closed = false;

  constructor(private readonly options: PreviewReaperOptions) {
    this.identity = options.identity ?? `${hostname()}-${randomBytes(3).toString('hex')}`;
    this.leases = options.kc.makeApiClient(CoordinationV1Api);
    this.now = options.now ?? (() => new Date());
  }

  start(): void {
    this.timer = setInterval(() => void this.tick(), this.options.everyMs ?? 10_000);
    this.timer.unref();
    void this.tick();
  }

  /** One round: take or renew the Lease, and when held, sweep. Never throws. */
  tick(): Promise<void> {
    if (this.closed) return Promise.resolve();
    this.round ??= (async () => {
      try {
        if (await this.hold()) await this.sweep();
      } catch (err) {
        this.options.log.warn({ err }, 'preview reaper round failed');
      } finally {
        this.round = undefined;
      }
    })();
    return this.round;
  }

  /**
   * Take or renew the Lease.
   * @returns true when this replica holds it now.
   */
  async hold(): Promise<boolean> {
    const namespace = this.options.leaseNamespace;
    const seconds = this.options.leaseSeconds ?? 30;
    const now = this.now();
    const spec = { holderIdentity: this.identity, leaseDurationSeconds: seconds, renewTime: new V1MicroTime(now.getTime()) };
    let lease: V1Lease;
    try {
      lease = await this.leases.readNamespacedLease({ name: REAPER_LEASE, namespace });
    } catch (err) {
      if ((err as { code?: number }).code !== 404) throw err;
      try {
        await this.leases.createNamespacedLease({
          namespace,
          body: { metadata: { name: REAPER_LEASE }, spec: { ...spec, acquireTime: new V1MicroTime(now.getTime()), leaseTransitions: 0 } },
        });
        return true;
      } catch (createErr) {
        if ((createErr as { code?: number }).code === 409) return false; // another replica created it first
        throw createErr;
      }
    }
    const holder = lease.spec?.holderIdentity;
    const renewed = lease.spec?.renewTime ? new Date(lease.spec.renewTime).getTime() : 0;
    const expired = renewed + (lease.spec?.leaseDurationSeconds ?? seconds) * 1000 < now.getTime();
    if (holder !== this.identity && holder && !expired) return false;
    const takeOver = holder !== this.identity;
    try {
      await this.leases.replaceNamespacedLease({
        name: REAPER_LEASE,
        namespace,
        body: {
          ...lease,
          spec: {
            ...lease.spec,
            ...spec,
            ...(takeOver ? { acquireTime: new V1MicroTime(now.getTime()), leaseTransitions: (lease.spec?.leaseTransitions ?? 0) + 1 } : {}),
          },
        },
      });
      return true;
    } catch (err) {
      if ((err as { code?: number }).code === 409) return false; // someone renewed or took it in between
      throw err;
    }
  }

  /**
   * Submit preview-delete for every expired preview not already being removed.
   * @returns the workflow names submitted.
   */
  async sweep(): Promise<string[]> {
    await this.options.cache.synced();
    const now = this.now().getTime();
    const busy = new Set(
      (await this.options.records.workflows.unfinished())
        .filter((w) => w.operation === 'preview-delete')
        .map((w) => `${w.parameters.team_name}/${previewName(w.parameters.component_name ?? '', w.parameters.image_tag ?? '')}`),
    );
    const contract = operationContract('preview-delete');
    const submitted: string[] = [];
    for (const app of this.options.cache.applications.list(this.options.argocdNamespace)) {
      const labels = app.metadata?.labels ?? {};
      const annotations = app.metadata?.annotations ?? {};
      const expiresAt = Date.parse(annotations[ANNOTATION.expiresAt] ?? '');
      if (labels[LABEL.componentType] !== 'preview' || app.metadata?.deletionTimestamp || !(expiresAt <= now)) continue;
      const team = labels[LABEL.tenant];
      const base = labels[LABEL.previewOf];
      const tag = annotations[ANNOTATION.imageTag];
      if (!team || !base || !tag || busy.has(`${team}/${labels[LABEL.service]}`)) continue;
      const parameters = { team_name: team, component_name: base, image_tag: tag };
      const name = `preview-delete-${randomBytes(4).toString('hex').slice(0, 5)}`;
      const audit: AuditEntry = {
        id: crypto.randomUUID(),
        timestamp: this.now().toISOString(),
        userId: REAPER_USER,
        operation: 'preview-delete',
        parameters,
        workflowName: name,
        status: 'submitted',
        riskLevel: contract.riskLevel,
        message: '',
      };
      try {
        await this.options.engine.submit({ name, operation: 'preview-delete', parameters, recorded: parameters, userId: REAPER_USER, audit });
        submitted.push(name);
        this.options.log.info({ workflow: name, team, preview: labels[LABEL.service] }, 'preview expired; submitted preview-delete');
      } catch (err) {
        this.options.log.warn({ err, team, preview: labels[LABEL.service] }, 'could not submit preview-delete for an expired preview');
      }
    }
    return submitted;
  }

  /** Stop, and give the Lease up if held, so another replica takes over at once rather than after it expires. */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    await this.round;
    try {
      const lease = await this.leases.readNamespacedLease({ name: REAPER_LEASE, namespace: this.options.leaseNamespace });
      if (lease.spec?.holderIdentity !== this.identity) return;
      await this.leases.replaceNamespacedLease({
        name: REAPER_LEASE,
        namespace: this.options.leaseNamespace,
        body: { ...lease, spec: { ...lease.spec, holderIdentity: undefined, renewTime: new V1MicroTime(0) } },
      });
    } catch (err) {
      this.options.log.debug({ err }, 'could not give up the preview reaper Lease; it expires by itself');
    }
  }
}
