/**
 * Expiry of preview environments (operation `preview-deploy`, `ttl_hours`): a preview is removed when its time is up,
 * with nobody calling — by a timer armed for the earliest expiry while the sandbox runs, and at start-up for previews
 * that expired while it was down. The removal is logged in the base service's log.
 */
import type { Logger } from '../../core/logger.js';
import type { JournalLine, LogJournal } from './journal.js';
import { serviceKey } from './state.js';
import type { StateStore } from './store.js';

/** Longest delay `setTimeout` accepts (about 24.8 days); later expiries re-arm when it fires. */
const MAX_TIMER_MS = 2 ** 31 - 1;

export interface ReaperOptions {
  store: StateStore;
  journal: LogJournal;
  now: () => Date;
  log: Logger;
}

/** Removes expired previews. Call {@link sweep} at start-up and {@link rearm} whenever a preview may have changed. */
export class PreviewReaper {
  private timer: NodeJS.Timeout | undefined;
  private armedFor: number | undefined;
  private running: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(private readonly options: ReaperOptions) {}

  /** Remove every preview whose expiry has passed, in one state write; then re-arm. */
  sweep(): Promise<void> {
    this.running = this.running.then(() => this.removeExpired()).catch((err: unknown) => {
      this.options.log.error({ err }, 'sandbox: could not remove expired previews');
    });
    return this.running;
  }

  /** Arm the timer for the earliest expiry (no-op when already armed for it). */
  rearm(): void {
    if (this.closed) return;
    const next = this.earliestExpiry();
    if (next === this.armedFor) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.armedFor = next;
    if (next === undefined) return;
    const delay = Math.min(Math.max(0, next - this.options.now().getTime()), MAX_TIMER_MS);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.armedFor = undefined;
      void this.sweep();
    }, delay);
  }

  /** Disarm and wait for a sweep in progress. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
  }

  private earliestExpiry(): number | undefined {
    let earliest: number | undefined;
    for (const service of Object.values(this.options.store.latest.services)) {
      if (!service.preview) continue;
      const at = Date.parse(service.preview.expiresAt);
      if (earliest === undefined || at < earliest) earliest = at;
    }
    return earliest;
  }

  private async removeExpired(): Promise<void> {
    if (this.closed) return;
    const { store, journal, now } = this.options;
    const at = now();
    const expired = Object.values(store.latest.services).filter((s) => s.preview && Date.parse(s.preview.expiresAt) <= at.getTime());
    if (expired.length > 0) {
      let appended: Promise<void> = Promise.resolve();
      await store.mutate((draft) => {
        const lines: JournalLine[] = [];
        for (const { team, name } of expired) {
          const service = draft.services[serviceKey(team, name)];
          if (!service?.preview || Date.parse(service.preview.expiresAt) > at.getTime()) continue;
          delete draft.services[serviceKey(team, name)];
          lines.push({
            team,
            app: service.preview.base,
            timestamp: at.toISOString(),
            line: `preview ${name} (${service.preview.imageTag}) expired after ${service.preview.ttlHours}h and was removed`,
            labels: { source: 'sandbox', preview: name },
          });
        }
        appended = journal.append(lines);
      });
      await appended;
    }
    this.rearm();
  }
}
