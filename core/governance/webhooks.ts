/**
 * Per-tenant webhooks (issue 20 item 5): what a hook is, what it is sent, and the shapes the API shows of it and of
 * its deliveries. Kept by the record store (`adapters/sql/webhooks.ts`), sent by the dispatcher
 * (`adapters/webhooks/dispatcher.ts`), read and changed through `tools/webhooks.ts`.
 *
 * A delivery's body is the event as a member reads it through the API: a tenant feed event exactly as
 * `GET /api/v1/tenants/{name}/events` lists it, or a workflow as recorded (parameters with secret values redacted).
 * `format: slack` sends a Slack incoming-webhook message instead (https://api.slack.com/messaging/webhooks), its text
 * escaped as Slack asks (https://api.slack.com/reference/surfaces/formatting#escaping), so no caller-chosen value can
 * mention `@channel` or forge a link.
 */
import { z } from 'zod';

/** The events a hook may subscribe to. Tenant feed events are delivered by their `type`, whatever adds them. */
export const WEBHOOK_EVENTS = [
  'workflow.submitted',
  'workflow.succeeded',
  'workflow.failed',
  'approval.requested',
  'approval.decided',
  'freeze.overridden',
  'policy.changed',
] as const;
/** One of {@link WEBHOOK_EVENTS}. */
export const WebhookEventType = z.enum(WEBHOOK_EVENTS).describe('An event name, e.g. "workflow.failed"');
export type WebhookEventType = z.infer<typeof WebhookEventType>;

/** Body formats: the event as JSON, or a Slack incoming-webhook message. */
export const WebhookFormat = z.enum(['json', 'slack']).describe('"json": the event as JSON; "slack": a Slack incoming-webhook message');
export type WebhookFormat = z.infer<typeof WebhookFormat>;

/** Most hooks one tenant may have. */
export const MAX_WEBHOOKS = 10;

/** A hook's id: `wh_` and 16 hex digits, minted by pds. */
export const WebhookId = z
  .string()
  .regex(/^wh_[0-9a-f]{16}$/, 'must be the id of an existing hook of this tenant as GET shows it, e.g. "wh_3f9c0a1b2c3d4e5f"')
  .describe('The id of an existing hook (keeps it and its secret), e.g. "wh_3f9c0a1b2c3d4e5f"');

/** One hook as a PUT names it: with `id` an existing hook (kept, secret unchanged), without one a new hook. */
export const WebhookInput = z.strictObject({
  id: WebhookId.optional(),
  url: z
    .string()
    .max(2048)
    .refine((s) => URL.canParse(s), 'must be an absolute URL, e.g. "https://hooks.example.com/pds"')
    .optional()
    .describe('Where to POST, e.g. "https://hooks.example.com/pds"; https, public address. Optional with id: keeps the URL'),
  events: z
    .array(WebhookEventType)
    .min(1)
    .max(WEBHOOK_EVENTS.length)
    .refine((list) => new Set(list).size === list.length, 'must not name an event twice')
    .describe(`Events to send, e.g. ["workflow.failed", "approval.requested"]; any of ${WEBHOOK_EVENTS.join(', ')}`),
  format: WebhookFormat.default('json'),
});
export type WebhookInput = z.output<typeof WebhookInput>;

/** A hook as members read it: never its secret; its URL without query, credentials or (Slack) path. */
export const Webhook = z.object({
  id: z.string().describe('e.g. "wh_3f9c0a1b2c3d4e5f"'),
  url: z.string().describe('The URL, shown without query string or credentials; a Slack hook\'s path is hidden (it is its key)'),
  events: z.array(WebhookEventType),
  format: WebhookFormat,
  createdAt: z.string().describe('ISO 8601 UTC'),
  createdBy: z.string().describe('Who added it, e.g. "alice"'),
});
export type Webhook = z.output<typeof Webhook>;

/** What became of one delivery. */
export const DeliveryOutcome = z
  .enum(['pending', 'delivered', 'failed'])
  .describe('"pending": will be (re)tried; "delivered": answered 2xx; "failed": given up after 24 hours, or its hook was removed');

/** One event to one hook, with its attempts so far. */
export const WebhookDelivery = z.object({
  id: z.string().describe('The X-PDS-Delivery header value (UUID), the same on every attempt'),
  hookId: z.string(),
  event: z.string().describe('The X-PDS-Event header value, e.g. "workflow.succeeded"'),
  eventId: z.string().describe('The event\'s id (the body\'s "id")'),
  createdAt: z.string().describe('ISO 8601 UTC: when the event happened'),
  attempts: z.number().int().describe('Attempts made so far'),
  lastStatusCode: z.number().int().nullable().describe('HTTP status of the last attempt; null when none answered (refused, unreachable, timed out)'),
  lastError: z.string().nullable().describe('Why the last attempt failed, when it did'),
  nextAttemptAt: z.string().nullable().describe('ISO 8601 UTC of the next attempt while pending, else null'),
  outcome: DeliveryOutcome,
});
export type WebhookDelivery = z.output<typeof WebhookDelivery>;

/** Deliveries listed by default. */
export const DELIVERIES_DEFAULT_LIMIT = 50;
/** Deliveries listed at most. */
export const DELIVERIES_MAX_LIMIT = 200;

/**
 * What a delivery's JSON body holds: the event's id, type, time, tenant, who caused it and its data (the same
 * envelope as a tenant feed event).
 */
export interface WebhookEvent {
  id: string;
  type: string;
  /** ISO 8601 UTC. */
  timestamp: string;
  team: string;
  userId: string;
  data: unknown;
}

/** A workflow as recorded, for `workflow.*` events: parameters already have their secret values redacted. */
export interface WorkflowEventData {
  workflowName: string;
  operation: string;
  phase: 'submitted' | 'succeeded' | 'failed';
  message: string;
  team: string;
  service?: string;
  userId: string;
  parameters: Record<string, string>;
  startedAt: string;
  finishedAt?: string;
}

/**
 * The URL as members are shown it: no credentials, query or fragment; for `slack`, whose incoming-webhook URL path is
 * the key that lets anyone post, the path is replaced by `/…`.
 * @example shownUrl('https://hooks.slack.com/services/T0/B0/XXXX', 'slack') // 'https://hooks.slack.com/…'
 */
export function shownUrl(url: string, format: WebhookFormat): string {
  const u = new URL(url);
  const path = format === 'slack' ? '/…' : u.pathname;
  return `${u.protocol}//${u.host}${path}${u.search ? '?…' : ''}`;
}

/** `&`, `<` and `>` as Slack's mrkdwn needs them escaped. */
function slackEscape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/**
 * One line saying what happened, for a chat message (not escaped).
 * @example summary(policyChanged) // 'alice changed the policy of acme'
 */
export function summary(event: WebhookEvent): string {
  const data = (event.data ?? {}) as Record<string, any>;
  if (event.type.startsWith('workflow.')) {
    const w = data as WorkflowEventData;
    const what = `${w.operation}${w.service ? ` of ${w.team}/${w.service}` : ` in ${w.team}`}`;
    const verb = event.type === 'workflow.submitted' ? `submitted by ${w.userId}` : `${w.phase}${w.message ? `: ${w.message}` : ''}`;
    return `${what} (${w.workflowName}) ${verb}`;
  }
  if (event.type === 'freeze.overridden') {
    return `${event.userId} overrode freeze window "${data.window}" in ${event.team} for ${data.operation} (${data.workflowName}): ${data.reason}`;
  }
  if (event.type === 'policy.changed') return `${event.userId} changed the policy of ${event.team}`;
  return `${event.type} in ${event.team} by ${event.userId}`;
}

/**
 * The body sent to a hook: the event as JSON, or for `slack` a message `{ text, blocks }` whose text names the event
 * and the tenant and says what happened (escaped), with the event as a code block.
 * @example JSON.parse(deliveryBody(event, 'slack')).text // '[acme] deploy-service of acme/web (deploy-service-x7k2p) succeeded'
 */
export function deliveryBody(event: WebhookEvent, format: WebhookFormat): string {
  if (format === 'json') return JSON.stringify(event);
  const text = `[${event.team}] ${slackEscape(summary(event))}`;
  return JSON.stringify({
    text,
    blocks: [
      { type: 'section', text: { type: 'mrkdwn', text: `*${slackEscape(event.type)}* ${text}` } },
      { type: 'context', elements: [{ type: 'mrkdwn', text: `${slackEscape(event.timestamp)} · event ${slackEscape(event.id)}` }] },
    ],
  });
}
