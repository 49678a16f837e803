/**
 * The expiry of approvals (issue 20 item 2): a pending approval past its `expiresAt` is closed `expired` and its
 * workflow settled `failed` through the engine ({@link WorkflowEngine.settleAwaiting}), which records the
 * `approval.decided` event as `EXPIRY_USER`; a promote's (issue 22 item 4) is closed alone
 * ({@link ApprovalStore.closePromote}). Every replica runs one: the close is conditional on the approval still
 * being pending (its row locked on PostgreSQL), so when two replicas sweep at once one settles it and the other finds
 * nothing to do. Each sweeper wakes at the earliest expiry it knows of — from the record store, and from the
 * submissions its own engine reports — and at least every `maxDelayMs` to see other replicas' requests.
 */
import { EXPIRY_USER } from '../../core/governance/approvals.js';
import type { Logger } from '../../core/logger.js';
import type { ApprovalStore, WorkflowEngine } from '../../core/ports.js';

/** Options of {@link ApprovalExpiry}. */
export interface ApprovalExpiryOptions {
  approvals: ApprovalStore;
  engine: Pick<WorkflowEngine, 'settleAwaiting' | 'onChange'>;
  log: Logger;
  now?: () => Date;
  /** Longest sleep between sweeps, milliseconds (default 30,000): how late another replica's request may expire. */
  maxDelayMs?: number;
}

/** Approvals expired per sweep at most; a longer backlog continues at once. */
const BATCH = 50;

/** The expiry sweeper of one pds process. Call {@link start} once and {@link close} at shutdown. */
export class ApprovalExpiry {
  private timer: NodeJS.Timeout | undefined;
  /** When the timer fires, milliseconds since the epoch. */
  private armedAt = Infinity;
  private sweeping: Promise<void> | undefined;
  private unsubscribe: (() => void) | undefined;
  private closed = false;
  private readonly now: () => Date;
  private readonly maxDelayMs: number;

  constructor(private readonly options: ApprovalExpiryOptions) {
    this.now = options.now ?? (() => new Date());
    this.maxDelayMs = options.maxDelayMs ?? 30_000;
  }

  /** Sweep now, then whenever the next expiry is due. */
  start(): void {
    this.unsubscribe = this.options.engine.onChange((run) => {
      if (run.approval?.state === 'pending') this.arm(Date.parse(run.approval.expiresAt));
    });
    void this.sweep();
  }

  /**
   * Expire every pending approval due now.
   * @returns once this round has finished (a round already running is joined, not doubled).
   */
  sweep(): Promise<void> {
    this.sweeping ??= (async () => {
      try {
        for (;;) {
          const due = await this.options.approvals.due(this.now(), BATCH);
          for (const approval of due) {
            if (this.closed) return;
            const outcome = { state: 'expired' as const, userId: EXPIRY_USER, reason: `no decision by ${approval.expiresAt}`, timestamp: this.now().toISOString() };
            // A promote held for approval has no workflow waiting: it just never happens (the release keeps its pauses).
            if (approval.subject === 'promote') await this.options.approvals.closePromote(approval.id, outcome);
            else await this.options.engine.settleAwaiting(approval.workflowName, outcome);
          }
          if (due.length < BATCH || this.closed) break;
        }
      } catch (err) {
        this.options.log.warn({ err }, 'approvals: could not expire due approvals; trying again later');
      } finally {
        this.sweeping = undefined;
      }
      await this.rearm();
    })();
    return this.sweeping;
  }

  /** Stop sweeping; waits for a round under way. */
  async close(): Promise<void> {
    this.closed = true;
    this.unsubscribe?.();
    clearTimeout(this.timer);
    await this.sweeping;
  }

  private async rearm(): Promise<void> {
    if (this.closed) return;
    const next = await this.options.approvals.nextExpiry().catch(() => undefined);
    this.armedAt = Infinity;
    this.arm(next ? next.getTime() : Infinity);
  }

  /** Sweep at `at` (milliseconds since the epoch), or within `maxDelayMs`, whichever is first. */
  private arm(at: number): void {
    if (this.closed) return;
    const when = Math.min(at, this.now().getTime() + this.maxDelayMs);
    if (when >= this.armedAt) return;
    clearTimeout(this.timer);
    this.armedAt = when;
    // A few milliseconds late, so the store's `expires_at <= now` holds when it fires.
    this.timer = setTimeout(() => {
      this.armedAt = Infinity;
      void this.sweep();
    }, Math.max(0, when - this.now().getTime()) + 5);
    this.timer.unref?.();
  }
}
