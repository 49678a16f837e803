/** Tenant resource usage (`docs/api.md#services-and-status`, `GET /api/v1/resources/{tenant}`). */
import { z } from 'zod';
import { ResourceUsage, TeamName } from '../core/model.js';
import { defineTool } from './define.js';

export const getResources = defineTool({
  name: 'platform_get_resources',
  title: 'Get tenant resource usage',
  description:
    'A tenant\'s quotas (allocated: cpu, memory, pods as Kubernetes quantities) against what its services use. Use ' +
    'before onboarding or opening previews to check there is room. Changes nothing; "tenant not found" when missing.',
  input: z.object({ tenant: TeamName.describe('Tenant name, e.g. "acme"') }),
  output: ResourceUsage,
  rest: { method: 'GET', path: '/api/v1/resources/{tenant}' },
  access: { tenant: (i) => i.tenant, role: 'viewer' },
  kind: 'read',
  toolset: 'observe',
  annotations: { idempotentHint: true, openWorldHint: true },
  handler: ({ tenant }, { platform }) => platform.backend.resources(tenant),
});

export const resourceTools = [getResources] as const;
