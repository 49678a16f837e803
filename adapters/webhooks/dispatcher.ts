/**
 * The webhook dispatcher (issue 20 item 5): every pds process runs one. It claims due deliveries from the outbox
 * (`adapters/sql/outbox.ts`) with a lease, POSTs each through the outbound rule's fetch (no redirect followed: a 3xx is
 * a failed attempt), signed as GitHub signs its webhooks
 * (https://docs.github.com/en/webhooks/using-webhooks/validating-webhook-deliveries):
 *
 * - `X-PDS-Signature-256: sha256=<hex HMAC-SHA256 of the raw body, keyed by the hook's secret>`
 * - `X-PDS-Event: <event name>`, `X-PDS-Delivery: <UUID, the same on every attempt>`
 *
 * A 2xx answer delivers. Anything else is retried after `backoffMs`, doubling each time up to one hour, until
 * `giveUpAfterMs` (24 hours) after the event; then the delivery is `failed`, and stays listed with its last status.
 * Finished deliveries are deleted 30 days after their event.
 */
import { createHmac } from 'node:crypto';
import { hostname } from 'node:os';
import type { Logger } from '../../core/logger.js';
import type { AttemptResult, DeliveryRow, RecordStore } from '../sql/index.js';
import type { OutboundFetch } from '../outbound/fetch.js';
import { schemeProblem } from './destination.js';
import type { SecretBox } from './secrets.js';

/** Default delay before the first retry, milliseconds (`PDS_WEBHOOK_BACKOFF_MS`). */
export const WEBHOOK_BACKOFF_MS = 10_000;
/** Longest delay between two attempts, milliseconds. */
export const WEBHOOK_MAX_BACKOFF_MS = 3_600_000;
/** How long after the event attempts continue, milliseconds (24 hours). */
export const WEBHOOK_GIVE_UP_AFTER_MS = 24 * 3_600_000;
/** How long finished deliveries stay listed, milliseconds (30 days). */
export const WEBHOOK_KEEP_MS = 30 * 86_400_000;
/** Milliseconds between prunes of finished deliveries. */
const PRUNE_EVERY_MS = 3_600_000;
/** Deadline of one attempt, milliseconds. */
export const WEBHOOK_TIMEOUT_MS = 10_000;

/** Options of {@link WebhookDispatcher}. */
export interface DispatcherOptions {
  records: RecordStore;
  box: SecretBox;
  /** The outbound rule's fetch (`createOutboundFetch`). */
  fetch: OutboundFetch;
  /** `PDS_OUTBOUND_ALLOW_PRIVATE`: also `http` URLs. */
  allowPrivate: boolean;
  log: Logger;
  backoffMs?: number;
  maxBackoffMs?: number;
  giveUpAfterMs?: number;
  /** Milliseconds between looks at the outbox when idle (default: the smaller of 1 s and `backoffMs`). */
  pollMs?: number;
  /** How long a claim holds a delivery, milliseconds (default 60 s: longer than an attempt's deadline). */
  leaseMs?: number;
  now?: () => number;
}

/** Delay before attempt `attempts + 1` after `attempts` failed ones: `backoffMs · 2^(attempts−1)`, at most `maxMs`. */
export function backoffDelay(attempts: number, backoffMs: number, maxMs: number): number {
  return Math.min(maxMs, backoffMs * 2 ** Math.max(0, attempts - 1));
}

/** The hex HMAC-SHA256 of `body` with `secret`, as `sha256=<hex>` (the `X-PDS-Signature-256` value). */
export function signature(secret: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

/** Delivers the outbox in the background. Call {@link WebhookDispatcher.start} once and {@link WebhookDispatcher.close} at shutdown. */
export class WebhookDispatcher {
  private readonly owner = `${hostname()}:${process.pid}:webhooks`;
  private readonly now: () => number;
  private timer: NodeJS.Timeout | undefined;
  private pruner: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private closed = false;

  constructor(private readonly options: DispatcherOptions) {
    this.now = options.now ?? Date.now;
  }

  private get backoffMs(): number {
    return this.options.backoffMs ?? WEBHOOK_BACKOFF_MS;
  }

  start(): void {
    const pollMs = this.options.pollMs ?? Math.min(1_000, this.backoffMs);
    this.timer = setInterval(() => void this.tick(), pollMs);
    this.timer.unref();
    void this.tick();
    const prune = () =>
      void this.options.records.outbox
        .prune(this.now() - WEBHOOK_KEEP_MS)
        .catch((err: unknown) => this.options.log.warn({ err }, 'webhooks: could not delete old deliveries; retrying later'));
    prune();
    this.pruner = setInterval(prune, PRUNE_EVERY_MS);
    this.pruner.unref();
  }

  /** Stop claiming and wait for the attempts in flight. */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    clearInterval(this.pruner);
    await this.running;
  }

  /** One round unless one is running: claim due deliveries until none is left, attempting each. */
  tick(): Promise<void> {
    this.running ??= (async () => {
      try {
        while (!this.closed && (await this.round()) > 0);
      } catch (err) {
        this.options.log.warn({ err }, 'webhooks: could not read the outbox; retrying');
      } finally {
        this.running = undefined;
      }
    })();
    return this.running;
  }

  /** Claim and attempt up to 10 deliveries. @returns how many were claimed. */
  private async round(): Promise<number> {
    const claimed = await this.options.records.outbox.claim({ owner: this.owner, now: this.now(), leaseMs: this.options.leaseMs ?? 60_000, limit: 10 });
    await Promise.all(claimed.map((row) => this.attempt(row)));
    return claimed.length;
  }

  private async attempt(row: DeliveryRow): Promise<void> {
    const { log } = this.options;
    let result: AttemptResult;
    try {
      result = await this.send(row);
    } catch (err) {
      result = this.failed(row, null, err instanceof Error ? err.message : String(err));
    }
    try {
      const recorded = await this.options.records.outbox.finish(row.id, this.owner, result);
      if (!recorded) log.warn({ delivery: row.id }, 'webhooks: lost the lease of a delivery while attempting it');
    } catch (err) {
      log.error({ err, delivery: row.id }, 'webhooks: could not record an attempt; it will be made again');
    }
    const level = result.outcome === 'failed' ? 'warn' : 'debug';
    log[level]({ delivery: row.id, hook: row.hook_id, event: row.event_type, status: result.status, outcome: result.outcome, error: result.error }, `webhook delivery ${row.id}: ${result.outcome}`);
  }

  private async send(row: DeliveryRow): Promise<AttemptResult> {
    const hook = await this.options.records.webhooks.get(row.hook_id);
    if (!hook) return { outcome: 'failed', status: null, error: 'the webhook was removed', nextAttemptAt: null };
    // Checked again here: a hook set while private addresses were allowed must not be sent to once they are not.
    const scheme = schemeProblem(new URL(hook.url), this.options.allowPrivate);
    if (scheme) return this.failed(row, null, scheme);
    const secret = await this.options.box.open(hook.sealedSecret).catch((err: unknown) => {
      throw new Error(`cannot open the hook's secret (was the server secret changed?): ${(err as Error).message}`);
    });
    const res = await this.options.fetch(hook.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'user-agent': 'pds-webhooks',
        'x-pds-event': row.event_type,
        'x-pds-delivery': row.id,
        'x-pds-signature-256': signature(secret, row.body),
      },
      body: row.body,
      redirect: 'manual',
    });
    await res.body?.cancel().catch(() => {});
    if (res.status >= 200 && res.status < 300) return { outcome: 'delivered', status: res.status, error: null, nextAttemptAt: null };
    const why = res.status >= 300 && res.status < 400 ? `answered ${res.status} (redirects are not followed)` : `answered ${res.status}`;
    return this.failed(row, res.status, why);
  }

  /** A failed attempt: retry later, or give up when the next attempt would come past the deadline. */
  private failed(row: DeliveryRow, status: number | null, error: string): AttemptResult {
    const attempts = row.attempts + 1;
    const next = this.now() + backoffDelay(attempts, this.backoffMs, this.options.maxBackoffMs ?? WEBHOOK_MAX_BACKOFF_MS);
    const giveUpAfterMs = this.options.giveUpAfterMs ?? WEBHOOK_GIVE_UP_AFTER_MS;
    if (next > row.created_ms + giveUpAfterMs) {
      const hours = Math.round((giveUpAfterMs / 3_600_000) * 100) / 100;
      return { outcome: 'failed', status, error: `gave up after ${attempts} attempts over ${hours} h; last: ${error}`, nextAttemptAt: null };
    }
    return { outcome: 'pending', status, error, nextAttemptAt: next };
  }
}
