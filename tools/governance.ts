/**
 * Governance (issue 20): a tenant's policy and its event feed. The policy document and its validation live in
 * `core/governance/policy.ts`, the events in `core/governance/events.ts`; both are kept by the record store
 * (`adapters/sql/governance.ts`) on either backend.
 */
import { z } from 'zod';
import { Forbidden, NotFound } from '../core/errors.js';
import { EVENTS_DEFAULT_LIMIT, EVENTS_MAX_LIMIT, TenantEvent } from '../core/governance/events.js';
import { TenantPolicy } from '../core/governance/policy.js';
import { TeamName } from '../core/model.js';
import type { PlatformBackend, TenantRef } from '../core/ports.js';
import type { Identity } from '../auth/identity.js';
import { defineTool } from './define.js';

/**
 * The live tenant named `name`.
 * @throws NotFound `tenant not found: <name>`.
 */
export async function tenantRefOf(backend: PlatformBackend, name: string): Promise<TenantRef> {
  const ref = await backend.getTenantRef(name);
  if (!ref) throw new NotFound(`tenant not found: ${name}`);
  return ref;
}

/**
 * Whether the caller is a person acting now rather than a stored credential: a self-issued token (`pds login`, pds's
 * OAuth sign-in, an operator's `pds token`), and not a CI identity (`github-actions:<owner>/<repo>`, the token
 * exchange issue 20 plans). A classic PAT can sit in a CI secret and an external JWT can be a machine's, so neither
 * counts; MCP callers with a self-issued token (pds's OAuth) count as persons.
 */
export function actsAsPerson(identity: Identity): boolean {
  return identity.tokenKind === 'self-issued' && !identity.userId.startsWith('github-actions:');
}

/**
 * The caller must be a person (see {@link actsAsPerson}) to `what`.
 * @throws Forbidden saying which sign-ins count.
 */
export function requirePerson(identity: Identity, what: string): void {
  if (actsAsPerson(identity)) return;
  const kind = identity.tokenKind === 'pat' ? 'a personal access token' : identity.tokenKind === 'external' ? 'an external identity provider token' : 'a CI token';
  throw new Forbidden(
    `${what} needs a person signed in to pds (pds login, the console's sign-in, or an operator's pds token); ` +
      `this call came with ${kind}, which may be stored in CI and cannot stand for a person`,
  );
}

const PolicyAnswer = z.object({
  team: z.string().describe('The tenant, e.g. "acme"'),
  policy: TenantPolicy,
});

export const getTenantPolicy = defineTool({
  name: 'platform_get_tenant_policy',
  title: 'Get a tenant policy',
  description:
    'The governance policy of one tenant: approval rules, freeze windows (cron schedule, duration, time zone, operations, ' +
    'reason) and the promotion rule. {} means none: nothing is frozen, nothing waits. Freeze windows are enforced (an ' +
    'execution during an active window is refused unless a tenant admin gives override_reason), so are approvals (an ' +
    'execution waits for them, see platform_list_approvals) and promotion (a deploy is refused until its image ran ' +
    'healthy in the "from" tenant for "minHealthy"). Needs membership of the tenant (any role). Changes nothing.',
  input: z.object({ name: TeamName.describe('Tenant name, e.g. "acme"') }),
  output: PolicyAnswer,
  rest: { method: 'GET', path: '/api/v1/tenants/{name}/policy' },
  access: { tenant: (i) => i.name, role: 'viewer' },
  kind: 'read',
  toolset: 'tenants',
  annotations: { idempotentHint: true, openWorldHint: false },
  handler: async ({ name }, { platform }) => {
    const ref = await tenantRefOf(platform.backend, name);
    return { team: ref.name, policy: await platform.governance.policy(ref) };
  },
});

export const setTenantPolicy = defineTool({
  name: 'platform_set_tenant_policy',
  title: 'Set a tenant policy',
  description:
    'Replaces the whole governance policy of one tenant (send {} to clear it) and records the change, with the old and ' +
    'new policy, in the tenant\'s event feed (platform_list_tenant_events). Read it first with platform_get_tenant_policy ' +
    'and send it back changed. Example: {"freezeWindows":[{"name":"weekend","schedule":"0 18 * * 5","duration":"63h",' +
    '"timeZone":"Europe/Berlin","operations":["deploy-service"],"reason":"no one on call"}]}. Tenant admins and platform ' +
    'admins only. Approvals apply to executions submitted after the change.',
  input: z.object({
    name: TeamName.describe('Tenant name, e.g. "acme"'),
    policy: TenantPolicy,
  }),
  output: PolicyAnswer.extend({
    event: TenantEvent.describe('The policy.changed event recorded'),
    warnings: z.array(z.string()).describe('Parts of the policy stored but not enforced yet (none today: every rule is enforced)'),
  }),
  rest: { method: 'PUT', path: '/api/v1/tenants/{name}/policy', bodyField: 'policy' },
  access: { tenant: (i) => i.name, role: 'admin' },
  kind: 'write',
  toolset: 'tenants',
  annotations: { destructiveHint: false, idempotentHint: true, openWorldHint: false },
  handler: async ({ name, policy }, { platform, identity }) => {
    const ref = await tenantRefOf(platform.backend, name);
    const event = await platform.governance.setPolicy(ref, policy, { userId: identity.userId, timestamp: new Date().toISOString() });
    // Every rule of the document is enforced today; the field stays so that a rule added later and stored before it
    // is enforced is said in the answer, not only in the description.
    const warnings: string[] = [];
    return { team: ref.name, policy, event, warnings };
  },
});

export const listTenantEvents = defineTool({
  name: 'platform_list_tenant_events',
  title: 'List tenant events',
  description:
    'What happened in one tenant that is not an execution, newest first: policy changes (who, the old and new policy), ' +
    'freeze overrides (who, which window, the reason) and cancelled workflows. Executions are in the audit trail instead. At most ' +
    `${EVENTS_MAX_LIMIT} events (default ${EVENTS_DEFAULT_LIMIT}). Needs membership of the tenant (any role). Changes nothing.`,
  input: z.object({
    name: TeamName.describe('Tenant name, e.g. "acme"'),
    limit: z.coerce
      .number()
      .int()
      .min(1)
      .max(EVENTS_MAX_LIMIT)
      .default(EVENTS_DEFAULT_LIMIT)
      .describe(`How many of the newest events, 1 to ${EVENTS_MAX_LIMIT}, e.g. 20`),
  }),
  output: z.object({ items: z.array(TenantEvent), count: z.number().int() }),
  rest: { method: 'GET', path: '/api/v1/tenants/{name}/events' },
  access: { tenant: (i) => i.name, role: 'viewer' },
  kind: 'read',
  toolset: 'tenants',
  annotations: { idempotentHint: true, openWorldHint: false },
  handler: async ({ name, limit }, { platform }) => {
    const ref = await tenantRefOf(platform.backend, name);
    const items = await platform.governance.events(ref, limit);
    return { items, count: items.length };
  },
});

/** The governance tools. */
export const governanceTools = [getTenantPolicy, setTenantPolicy, listTenantEvents] as const;
