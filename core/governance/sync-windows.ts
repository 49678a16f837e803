/**
 * Freeze windows as Argo CD sync windows (issue 20 item 1): on Kubernetes, a window of a tenant's policy that covers
 * every operation that syncs is also written to the tenant's AppProject `spec.syncWindows`
 * (https://argo-cd.readthedocs.io/en/stable/user-guide/sync_windows/), as a `deny` window for every Application of
 * the project with `manualSync: true`, so Argo CD holds automated syncs during it too while a sync by hand (an
 * override) still goes through. A window covering only some of them stays pds's alone: Argo CD cannot tell a deploy's
 * sync from a rollback's.
 */
import type { OperationId } from '../operations/index.js';
import { covers, durationMs, type TenantPolicy } from './policy.js';

/** The operations whose workflows change what Argo CD applies for the tenant (its Applications' manifests). */
export const SYNCING_OPERATIONS: readonly OperationId[] = [
  'deploy-service',
  'rollback-service',
  'retire-service',
  'provision-database',
  'preview-deploy',
  'preview-delete',
];

/** What starts the `description` of every sync window pds writes: windows without it are someone else's, kept as they are. */
export const SYNC_WINDOW_MARK = 'pds freeze window';

/** An AppProject sync window as Argo CD's `SyncWindow` spells it, the fields pds sets. */
export interface ArgoSyncWindow {
  kind: 'deny';
  /** Five-field cron, read in `timeZone`. */
  schedule: string;
  /** A Go duration (`time.ParseDuration`), e.g. `63h`, `1h30m`. */
  duration: string;
  timeZone: string;
  applications: string[];
  manualSync: true;
  description: string;
}

/**
 * A duration in milliseconds as Go writes it for `time.ParseDuration`, which has no days: `2d` → `48h`.
 * @example goDuration(5_400_000) // '1h30m'
 */
export function goDuration(ms: number): string {
  const seconds = Math.round(ms / 1000);
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  return `${h ? `${h}h` : ''}${m ? `${m}m` : ''}${s || (!h && !m) ? `${s}s` : ''}`;
}

/**
 * The sync windows `policy` asks of the tenant's AppProject: one per freeze window that covers every
 * {@link SYNCING_OPERATIONS} entry and has a five-field schedule (Argo CD reads no seconds field; a six-field
 * window stays pds's alone).
 * @example argoSyncWindows({ freezeWindows: [{ name: 'weekend', schedule: '0 18 * * 5', duration: '63h', timeZone: 'Europe/Berlin', operations: ['*'], reason: 'no one on call' }] })
 *   // [{ kind: 'deny', schedule: '0 18 * * 5', duration: '63h', timeZone: 'Europe/Berlin', applications: ['*'], manualSync: true,
 *   //    description: 'pds freeze window "weekend": no one on call' }]
 */
export function argoSyncWindows(policy: TenantPolicy): ArgoSyncWindow[] {
  return (policy.freezeWindows ?? []).flatMap((window, index) => {
    if (!SYNCING_OPERATIONS.every((operation) => covers(window.operations, operation))) return [];
    if (window.schedule.trim().split(/\s+/).length !== 5) return [];
    return [
      {
        kind: 'deny' as const,
        schedule: window.schedule,
        duration: goDuration(durationMs(window.duration)!),
        timeZone: window.timeZone,
        applications: ['*'],
        manualSync: true as const,
        description: `${SYNC_WINDOW_MARK} "${window.name ?? `window-${index + 1}`}": ${window.reason}`,
      },
    ];
  });
}
