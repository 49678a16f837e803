/** Tenants (`docs/api.md#tenants`): the admin-only list and one tenant with its services. */
import { z } from 'zod';
import { Service, TeamName, Tenant, TenantDetail } from '../core/model.js';
import { defineTool } from './define.js';
import { tenantNotFound } from './not-found.js';

export const listTenants = defineTool({
  name: 'platform_list_tenants',
  title: 'List tenants',
  description:
    'Lists every tenant (team workspace) with display name, description, contact e-mail, quotas and members. ' +
    'Platform admins only; others get "admin access required" — use platform_get_tenant for your own tenant. ' +
    'Changes nothing.',
  input: z.object({}),
  output: z.object({ items: z.array(Tenant), count: z.number().int() }),
  rest: { method: 'GET', path: '/api/v1/tenants' },
  access: 'admin',
  kind: 'read',
  toolset: 'tenants',
  annotations: { idempotentHint: true, openWorldHint: false },
  handler: async (_input, { platform }) => {
    const items = await platform.backend.listTenants();
    return { items, count: items.length };
  },
});

export const getTenant = defineTool({
  name: 'platform_get_tenant',
  title: 'Get a tenant',
  description:
    'One tenant: name, display name, quotas, members with roles, and its services (image tag, host, port). Use to see ' +
    'what a team runs and who may change it. Needs membership of the tenant (any role) or platform admin. Changes nothing.',
  input: z.object({ name: TeamName.describe('Tenant name, e.g. "acme"') }),
  output: z.object({ tenant: TenantDetail, services: z.array(Service) }),
  rest: { method: 'GET', path: '/api/v1/tenants/{name}' },
  access: { tenant: (i) => i.name, role: 'viewer' },
  kind: 'read',
  toolset: 'tenants',
  annotations: { idempotentHint: true, openWorldHint: false },
  handler: async ({ name }, { platform, identity }) => {
    const tenant = await platform.backend.getTenant(name);
    if (!tenant) throw await tenantNotFound(platform.backend, identity, name);
    const { name: n, displayName, quotas, members } = tenant;
    return { tenant: { name: n, displayName, quotas, members }, services: await platform.backend.listServices(name) };
  },
});

export const tenantTools = [listTenants, getTenant] as const;
