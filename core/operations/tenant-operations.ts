/** The operations on a whole tenant (SPEC.md "Operations"): `create-tenant` and `delete-tenant`. */
import { z } from 'zod';
import { defineOperation } from './contract.js';
import { QuantityParam, TeamNameParam, UserListParam } from './parameters.js';

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
  description:
    'Creates a team workspace (tenant): its namespace, ResourceQuota and member roles. Users in "admins" get role ' +
    'admin (the caller when none are named), "members" role member (deploy and operate), "viewers" role viewer (read ' +
    'only). Returns a workflow name at once. Fails (in the workflow) when the tenant already exists; it never changes ' +
    'an existing tenant.',
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
    pods: z.string().regex(/^[1-9]\d{0,4}$/, 'must be a pod count as text, e.g. "20"').optional().describe('Pod quota, e.g. "20" (default "20")'),
  }),
  target: (p) => ({ team: p.team_name }),
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
  description:
    'Permanently deletes a tenant with all its services, databases and preview environments. Needs confirmation: the ' +
    'first call changes nothing and answers with what would be deleted and a "confirm" value; repeat the call with ' +
    'that value (valid 5 minutes, once) to proceed.',
  parameters: z.strictObject({ team_name: TeamNameParam }),
  target: (p) => ({ team: p.team_name }),
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
