/**
 * Webhooks on either backend (issue 20 item 5): the {@link WebhookService} port over the record store, and the
 * dispatcher that delivers the outbox. Both platform factories build this with {@link createWebhooks}.
 *
 * | file | what |
 * |---|---|
 * | `destination.ts` | which URLs may receive webhooks (the outbound rule) |
 * | `secrets.ts` | signing secrets, sealed with the server secret |
 * | `dispatcher.ts` | claiming, signing, sending, retrying |
 */
import { randomBytes } from 'node:crypto';
import { InvalidParams } from '../../core/errors.js';
import type { Logger } from '../../core/logger.js';
import { shownUrl, type Webhook, type WebhookInput } from '../../core/governance/webhooks.js';
import type { NewWebhook, WebhookService } from '../../core/ports.js';
import { createOutboundFetch } from '../outbound/fetch.js';
import type { RecordStore, StoredWebhook } from '../sql/index.js';
import { checkDestination, type ResolveAddresses } from './destination.js';
import { WEBHOOK_TIMEOUT_MS, WebhookDispatcher } from './dispatcher.js';
import { newWebhookSecret, secretBox } from './secrets.js';

/** How webhooks are set and sent (from the configuration). */
export interface WebhookOptions {
  /**
   * The server secret that seals signing secrets (the same on every replica). Absent (a platform built without a
   * server, in tests): a random one for this process, so secrets set in it cannot be opened by another.
   */
  secret?: Uint8Array;
  /** `PDS_OUTBOUND_ALLOW_PRIVATE`. */
  allowPrivate: boolean;
  /** `PDS_WEBHOOK_BACKOFF_MS`: delay before the first retry, doubling after each. */
  backoffMs?: number;
  /** How long after the event attempts continue (default 24 hours). */
  giveUpAfterMs?: number;
  /** Name resolution for the check at set time (tests). */
  resolve?: ResolveAddresses;
}

/** The members' view of a stored hook. */
function view(hook: StoredWebhook): Webhook {
  return { id: hook.id, url: shownUrl(hook.url, hook.format), events: hook.events, format: hook.format, createdAt: hook.createdAt, createdBy: hook.createdBy };
}

/**
 * The webhook service and its dispatcher (started; stop it with `close`).
 * @example
 * const webhooks = createWebhooks(records, { secret, allowPrivate: config.outboundAllowPrivate }, log);
 * platform.webhooks = webhooks.service; // … and at shutdown: await webhooks.close();
 */
export function createWebhooks(records: RecordStore, options: WebhookOptions, log: Logger): { service: WebhookService; close(): Promise<void> } {
  const box = secretBox(options.secret ?? randomBytes(32));
  const dispatcher = new WebhookDispatcher({
    records,
    box,
    fetch: createOutboundFetch({ allowPrivate: options.allowPrivate, timeoutMs: WEBHOOK_TIMEOUT_MS, maxBytes: 64 * 1024 }),
    allowPrivate: options.allowPrivate,
    log,
    ...(options.backoffMs !== undefined ? { backoffMs: options.backoffMs } : {}),
    ...(options.giveUpAfterMs !== undefined ? { giveUpAfterMs: options.giveUpAfterMs } : {}),
  });
  dispatcher.start();

  const service: WebhookService = {
    async list(tenant) {
      return (await records.webhooks.list(tenant.uid)).map(view);
    },

    async set(tenant, inputs: WebhookInput[], by) {
      const existing = new Map((await records.webhooks.list(tenant.uid)).map((h) => [h.id, h]));
      const seen = new Set<string>();
      const secrets = new Map<string, string>();
      const next: StoredWebhook[] = [];
      for (const [index, input] of inputs.entries()) {
        const at = `hooks[${index}]`;
        if (input.id !== undefined) {
          const kept = existing.get(input.id);
          if (!kept) throw new InvalidParams(`${at}.id: no hook ${input.id} in ${tenant.name}; leave id out to add a hook (GET lists the ids)`);
          if (seen.has(input.id)) throw new InvalidParams(`${at}.id: hook ${input.id} is listed twice`);
          seen.add(input.id);
          // A URL sent back as GET shows it (query or Slack key hidden) means "unchanged".
          const format = input.format;
          const unchanged = input.url === undefined || input.url === shownUrl(kept.url, kept.format);
          const url = unchanged ? kept.url : input.url!;
          if (!unchanged) await checked(url, at);
          next.push({ ...kept, url, events: input.events, format });
        } else {
          if (input.url === undefined) throw new InvalidParams(`${at}.url: a new hook needs a url, e.g. "https://hooks.example.com/pds"`);
          await checked(input.url, at);
          const id = `wh_${randomBytes(8).toString('hex')}`;
          const secret = newWebhookSecret();
          secrets.set(id, secret);
          next.push({ id, url: input.url, events: input.events, format: input.format, sealedSecret: await box.seal(secret), createdAt: by.timestamp, createdBy: by.userId });
        }
      }
      const old = [...existing.values()].map(view);
      const hooks = next.map(view);
      const event = await records.webhooks.replace(tenant, next, { type: 'webhooks.changed', data: { old, new: hooks }, ...by });
      const answer: NewWebhook[] = hooks.map((h) => (secrets.has(h.id) ? { ...h, secret: secrets.get(h.id)! } : h));
      return { hooks: answer, event };
    },

    async deliveries(tenant, limit) {
      return records.outbox.list(tenant.uid, limit);
    },
  };

  async function checked(url: string, at: string): Promise<void> {
    try {
      await checkDestination(url, { allowPrivate: options.allowPrivate, ...(options.resolve ? { resolve: options.resolve } : {}) });
    } catch (err) {
      if (err instanceof InvalidParams) throw new InvalidParams(`${at}.url: ${err.message}`);
      throw err;
    }
  }

  return { service, close: () => dispatcher.close() };
}
