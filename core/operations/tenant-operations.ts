/** The operations on a whole tenant (`docs/api.md#operations`): `create-tenant` and `delete-tenant`. */
import { z } from 'zod';
import { defineOperation } from './contract.js';
import { requireNewTenant, requireTenant } from './preflight.js';
import { CountParam, QuantityParam, TeamNameParam, UserListParam } from './parameters.js';

export const createTenant = defineOperation({
  id: 'create-tenant',
  toolset: 'tenants',
  tool: 'platform_create_tenant',
  title: 'Create a tenant',
  displayName: 'Create Tenant',
  riskLevel: 'medium',
  requiresConfirm: false,
  destructive: false,
  role: 'platform-admin',
  duration: 'under a minute',
  followUp: { tool: 'platform_get_tenant', why: 'see its quotas and members', arguments: (p) => ({ name: p.team_name }) },
  description:
    'Creates a team workspace (tenant): its namespace, ResourceQuota and member roles. Users in "admins" get role ' +
    'admin (the caller when none are named), "members" role member (deploy and operate), "viewers" role viewer (read ' +
    'only). Refused at once when the tenant exists (it never changes one) or the name is reserved (default, kube-*, ' +
    'argo, argocd, pds-*, the workflow and Argo CD namespaces).',
  parameters: z.strictObject({
    team_name: TeamNameParam.describe('Name of the new tenant, a DNS label, e.g. "acme"'),
    display_name: z.string().min(1).max(100).optional().describe('Human-readable name, e.g. "Acme Payments"'),
    description: z.string().max(500).optional().describe('What the team does, e.g. "Payments APIs"'),
    contact_email: z.email('must be an e-mail address, e.g. "team@example.com"').optional().describe('Team contact, e.g. "acme@example.com"'),
    admins: UserListParam.optional().describe('Comma-separated user ids who become tenant admins (default: the caller), e.g. "alice,bob@example.com"'),
    members: UserListParam.optional().describe('Comma-separated user ids who may deploy and operate in the tenant (role member), e.g. "carol"'),
    viewers: UserListParam.optional().describe('Comma-separated user ids who may only read the tenant (role viewer), e.g. "dave"'),
    cpu: QuantityParam('4').optional().describe('CPU quota, a Kubernetes quantity, e.g. "4" (default "4")'),
    memory: QuantityParam('8Gi').optional().describe('Memory quota with unit suffix, e.g. "8Gi" (default "8Gi")'),
    pods: CountParam.optional().describe('Pod quota, e.g. "20" (default "20")'),
  }),
  target: (p) => ({ team: p.team_name }),
  preflight: async (p, ctx) => requireNewTenant(ctx, p.team_name),
  summarize: (p) => `create tenant ${p.team_name}`,
});

export const deleteTenant = defineOperation({
  id: 'delete-tenant',
  toolset: 'tenants',
  tool: 'platform_delete_tenant',
  title: 'Delete a tenant and everything in it',
  displayName: 'Delete Tenant',
  riskLevel: 'high',
  requiresConfirm: true,
  destructive: true,
  role: 'admin',
  duration: '1-3 minutes',
  description:
    'Permanently deletes a tenant with all its services, databases and preview environments. Needs a person\'s ' +
    'confirmation: a client that supports elicitation asks them (yes/no, with the plan); otherwise the first call ' +
    'changes nothing and answers with the plan and a "confirm" value (also in structuredContent) — repeat the call ' +
    'with it (valid 5 minutes, once).',
  parameters: z.strictObject({ team_name: TeamNameParam }),
  target: (p) => ({ team: p.team_name }),
  preflight: async (p, ctx) => requireTenant(ctx, p.team_name),
  summarize: async (p, ctx) => {
    const services = await ctx.backend.listServices(p.team_name);
    const list = services.length ? `: ${services.map((s) => s.name).join(', ')}` : '';
    return `permanently delete tenant ${p.team_name} and its ${services.length} service${services.length === 1 ? '' : 's'}${list}`;
  },
});

/** The tenant operations, by id. */
export const tenantOperations = {
  'create-tenant': createTenant,
  'delete-tenant': deleteTenant,
} as const;
