/** Services and their GitOps status (`docs/api.md#services-and-status`). */
import { z } from 'zod';
import { NotFound } from '../core/errors.js';
import { Service, ServiceName, Status, TeamName } from '../core/model.js';
import { requireTenantAccess, visibleTenants } from './access.js';
import { defineTool } from './define.js';
import { tenantNotFound, withNearService } from './not-found.js';

const Team = TeamName.describe('Tenant name, e.g. "acme"');
const App = ServiceName.describe('Service name within the tenant, e.g. "web"');

export const listServices = defineTool({
  name: 'platform_list_services',
  title: 'List services',
  description:
    'Lists deployed services with image tag, host, port, component type and whether they have a database. With ' +
    '"team", only that tenant\'s (membership needed); without it, every service of the tenants you may see. Preview ' +
    'environments appear with componentType "preview". Changes nothing.',
  input: z.object({ team: Team.optional().describe('Only this tenant, e.g. "acme"') }),
  output: z.object({ items: z.array(Service), count: z.number().int() }),
  rest: { method: 'GET', path: '/api/v1/services' },
  access: 'authenticated',
  kind: 'read',
  toolset: 'observe',
  annotations: { idempotentHint: true, openWorldHint: false },
  handler: async ({ team }, { platform, identity }) => {
    let items: Service[];
    if (team) {
      await requireTenantAccess(platform.backend, identity, team, 'viewer');
      // A platform admin passes access for any name; a tenant that does not exist is then 404, as for its detail.
      if (identity.admin && !(await platform.backend.getTenant(team))) throw await tenantNotFound(platform.backend, identity, team);
      items = await platform.backend.listServices(team);
    } else {
      const visible = await visibleTenants(platform.backend, identity);
      items = (await platform.backend.listServices()).filter((s) => visible === 'all' || visible.has(s.team));
    }
    return { items, count: items.length };
  },
});

export const getService = defineTool({
  name: 'platform_get_service',
  title: 'Get a service',
  description:
    'One service: deployed image tag, public host, container port, component type, database. Use to find the host ' +
    'to verify after a deploy (GET https://<host>/healthz). Changes nothing; "service not found" when it does not exist.',
  input: z.object({ team: Team, app: App }),
  output: Service,
  rest: { method: 'GET', path: '/api/v1/services/{team}/{app}' },
  access: { tenant: (i) => i.team, role: 'viewer' },
  kind: 'read',
  toolset: 'observe',
  annotations: { idempotentHint: true, openWorldHint: false },
  handler: async ({ team, app }, { platform, identity }) => {
    const service = await platform.backend.getService(team, app);
    if (!service) throw await withNearService(new NotFound(`service not found: ${team}/${app}`), platform, identity, team, app);
    return service;
  },
});

export const getStatus = defineTool({
  name: 'platform_get_status',
  title: 'Get deployment status',
  description:
    'Sync status (Synced, OutOfSync, Unknown) and health status (Healthy, Progressing, Degraded, Suspended, Missing, ' +
    'Unknown) of one service as the GitOps controller (Argo CD) reports them, under the key "argocd", with the deployed ' +
    'image tag and host. Use after a deploy or rollback workflow, or to see why a service is unhealthy. Changes nothing.',
  input: z.object({ team: Team, app: App }),
  output: Status,
  rest: { method: 'GET', path: '/api/v1/status/{team}/{app}' },
  access: { tenant: (i) => i.team, role: 'viewer' },
  kind: 'read',
  toolset: 'observe',
  annotations: { idempotentHint: true, openWorldHint: true },
  handler: async ({ team, app }, { platform, identity }) => {
    try {
      return await platform.backend.status(team, app);
    } catch (err) {
      throw await withNearService(err, platform, identity, team, app);
    }
  },
});

export const serviceTools = [listServices, getService, getStatus] as const;
