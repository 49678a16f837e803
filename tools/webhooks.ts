/**
 * A tenant's webhooks (issue 20 item 5), beside its policy (`tools/governance.ts`): the hooks, their whole list
 * replaced at once, and the deliveries with their attempts. What a hook is and what it is sent:
 * `core/governance/webhooks.ts`; how it is sent: `adapters/webhooks/`.
 */
import { z } from 'zod';
import { TenantEvent } from '../core/governance/events.js';
import {
  DELIVERIES_DEFAULT_LIMIT,
  DELIVERIES_MAX_LIMIT,
  MAX_WEBHOOKS,
  Webhook,
  WebhookDelivery,
  WebhookInput,
} from '../core/governance/webhooks.js';
import { TeamName } from '../core/model.js';
import { defineTool } from './define.js';
import { tenantRefOf } from './governance.js';

export const getTenantWebhooks = defineTool({
  name: 'platform_get_tenant_webhooks',
  title: 'Get tenant webhooks',
  description:
    'The webhooks of one tenant: id, URL (query and Slack key hidden), events and format. Never shows a secret. ' +
    'Needs membership of the tenant (any role). Changes nothing.',
  input: z.object({ name: TeamName.describe('Tenant name, e.g. "acme"') }),
  output: z.object({ team: z.string(), hooks: z.array(Webhook) }),
  rest: { method: 'GET', path: '/api/v1/tenants/{name}/webhooks' },
  access: { tenant: (i) => i.name, role: 'viewer' },
  kind: 'read',
  toolset: 'tenants',
  annotations: { idempotentHint: true, openWorldHint: false },
  handler: async ({ name }, { platform }) => {
    const ref = await tenantRefOf(platform.backend, name);
    return { team: ref.name, hooks: await platform.webhooks.list(ref) };
  },
});

export const setTenantWebhooks = defineTool({
  name: 'platform_set_tenant_webhooks',
  title: 'Set tenant webhooks',
  description:
    'Replaces the whole list of a tenant\'s webhooks; a webhooks.changed event records it. Keep a hook by sending its ' +
    'id (its secret stays); omit id to add one: its signing secret is in this answer only. Hooks left out are removed. ' +
    'URLs: https to public addresses. Tenant admins and platform admins only.',
  input: z.object({
    name: TeamName.describe('Tenant name, e.g. "acme"'),
    hooks: z
      .array(WebhookInput)
      .max(MAX_WEBHOOKS)
      .describe(`The whole list, at most ${MAX_WEBHOOKS}, e.g. [{"url":"https://hooks.example.com/pds","events":["workflow.failed"]}]`),
  }),
  output: z.object({
    team: z.string(),
    hooks: z.array(Webhook.extend({ secret: z.string().optional().describe('New hooks only: the signing secret, shown once') })),
    event: TenantEvent.describe('The webhooks.changed event recorded'),
  }),
  rest: { method: 'PUT', path: '/api/v1/tenants/{name}/webhooks' },
  access: { tenant: (i) => i.name, role: 'admin' },
  kind: 'write',
  toolset: 'tenants',
  annotations: { destructiveHint: false, idempotentHint: false, openWorldHint: true },
  handler: async ({ name, hooks }, { platform, identity }) => {
    const ref = await tenantRefOf(platform.backend, name);
    const set = await platform.webhooks.set(ref, hooks, { userId: identity.userId, timestamp: new Date().toISOString() });
    return { team: ref.name, ...set };
  },
});

export const listWebhookDeliveries = defineTool({
  name: 'platform_list_webhook_deliveries',
  title: 'List webhook deliveries',
  description:
    'Recent webhook deliveries of one tenant, newest first: event, hook, attempts, last status code, next attempt and ' +
    `outcome (failed ones are retried with backoff for 24 hours). At most ${DELIVERIES_MAX_LIMIT}. Needs membership ` +
    'of the tenant. Changes nothing.',
  input: z.object({
    name: TeamName.describe('Tenant name, e.g. "acme"'),
    limit: z.coerce
      .number()
      .int()
      .min(1)
      .max(DELIVERIES_MAX_LIMIT)
      .default(DELIVERIES_DEFAULT_LIMIT)
      .describe(`How many of the newest, 1 to ${DELIVERIES_MAX_LIMIT}, e.g. 20`),
  }),
  output: z.object({ items: z.array(WebhookDelivery), count: z.number().int() }),
  rest: { method: 'GET', path: '/api/v1/tenants/{name}/webhooks/deliveries' },
  access: { tenant: (i) => i.name, role: 'viewer' },
  kind: 'read',
  toolset: 'tenants',
  annotations: { idempotentHint: true, openWorldHint: false },
  handler: async ({ name, limit }, { platform }) => {
    const ref = await tenantRefOf(platform.backend, name);
    const items = await platform.webhooks.deliveries(ref, limit);
    return { items, count: items.length };
  },
});

/** The webhook tools. */
export const webhookTools = [getTenantWebhooks, setTenantWebhooks, listWebhookDeliveries] as const;
