/**
 * Expiry of preview environments (operation `preview-deploy`, `ttl_hours`): a preview is removed when its time is up,
 * with nobody calling — by a timer armed for the earliest expiry while the sandbox runs (asked of the record store's
 * expiry index), and at start-up for previews that expired while it was down. The removal is logged in the base
 * service's log. Several processes on one database may sweep together: a preview is removed (and logged) once, by the
 * one whose delete found it.
 */
import type { Logger } from '../../core/logger.js';
import type { RecordStore } from '../sql/index.js';

/** Longest delay `setTimeout` accepts (about 24.8 days); later expiries re-arm when it fires. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** Re-check for expiries made by other processes at least this often, milliseconds. */
const RECHECK_MS = 60_000;

export interface ReaperOptions {
  store: RecordStore;
  now: () => Date;
  log: Logger;
}

/** Removes expired previews. Call {@link sweep} once at start, {@link rearm} after every change. */
export class PreviewReaper {
  private timer: NodeJS.Timeout | undefined;
  private armedFor: number | undefined;
  private running: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(private readonly options: ReaperOptions) {}

  /** Remove every preview whose expiry has passed; then re-arm. Failures are logged, never thrown. */
  sweep(): Promise<void> {
    this.running = this.running
      .then(() => this.removeExpired())
      .catch((err: unknown) => this.options.log.error({ err }, 'sandbox: could not remove expired previews'))
      .then(() => this.rearm());
    return this.running;
  }

  /** Arm the timer for the earliest expiry (no-op when already armed for it). Failures are logged, never thrown. */
  async rearm(): Promise<void> {
    if (this.closed) return;
    let next: number | undefined;
    try {
      next = await this.options.store.services.nextPreviewExpiry();
    } catch (err) {
      this.options.log.warn({ err }, 'sandbox: could not read preview expiries; retrying');
      next = this.options.now().getTime() + RECHECK_MS;
    }
    if (this.closed || (next === this.armedFor && this.timer)) return;
    if (this.timer) clearTimeout(this.timer);
    this.armedFor = next;
    const delay = Math.min(next === undefined ? RECHECK_MS : Math.max(0, next - this.options.now().getTime()), RECHECK_MS, MAX_TIMER_MS);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.armedFor = undefined;
      void this.sweep();
    }, delay);
    this.timer.unref?.();
  }

  /** Disarm and wait for a sweep in progress. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
  }

  private async removeExpired(): Promise<void> {
    if (this.closed) return;
    const { store, now } = this.options;
    const at = now();
    for (const expired of await store.services.expiredPreviews(at.getTime())) {
      await store.transaction(async (tx) => {
        const service = await tx.services.get(expired.team, expired.name);
        if (!service?.preview || Date.parse(service.preview.expiresAt) > at.getTime()) return;
        if (!(await tx.services.delete(service.team, service.name))) return;
        await tx.logs.append([
          {
            team: service.team,
            app: service.preview.base,
            timestamp: at.toISOString(),
            line: `preview ${service.name} (${service.preview.imageTag}) expired after ${service.preview.ttlHours}h and was removed`,
            labels: { source: 'sandbox', preview: service.name },
          },
        ]);
      });
    }
  }
}
