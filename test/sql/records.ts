/** Record factories for the store tests: a tenant, a service, an audit entry, a workflow, with overridable fields. */
import type { AuditEntry } from '../../core/model.js';
import type { NewTenant, NewWorkflow, ServiceRecord } from '../../adapters/sql/index.js';

export function tenant(name: string, overrides: Partial<NewTenant> = {}): NewTenant {
  return {
    name,
    displayName: name.toUpperCase(),
    description: `the ${name} team`,
    contactEmail: `${name}@example.com`,
    quotas: { cpu: '4', memory: '8Gi', pods: '20' },
    members: [
      { userId: `${name}-admin`, role: 'admin' },
      { userId: `${name}-dev`, role: 'member' },
      { userId: `${name}-viewer`, role: 'viewer' },
    ],
    createdAt: '2026-11-01T10:00:00.000Z',
    ...overrides,
  };
}

export function service(team: string, name: string, overrides: Partial<ServiceRecord> = {}): ServiceRecord {
  return {
    team,
    name,
    imageTag: '0.1.0',
    host: `${team}-${name}.apps.test`,
    port: '8080',
    componentType: 'base-service',
    hasDatabase: false,
    syncStatus: 'Synced',
    healthStatus: 'Healthy',
    message: 'deployed 0.1.0',
    deployedTags: ['0.1.0'],
    env: {},
    healthCheckPath: '/healthz',
    dockerfileRepo: `${team}/${name}`,
    dockerfilePath: 'Dockerfile',
    serviceTemplate: 'default',
    createdAt: '2026-11-01T10:05:00.000Z',
    ...overrides,
  };
}

let counter = 0;

export function auditEntry(workflowName: string, parameters: Record<string, string>, overrides: Partial<AuditEntry> = {}): AuditEntry {
  return {
    id: `audit-${++counter}`,
    timestamp: new Date(Date.UTC(2026, 10, 1, 12, 0, counter)).toISOString(),
    userId: 'alice',
    operation: 'deploy-service',
    parameters,
    workflowName,
    status: 'submitted',
    riskLevel: 'medium',
    message: '',
    ...overrides,
  };
}

export function workflow(name: string, parameters: Record<string, string>, overrides: Partial<NewWorkflow> = {}): NewWorkflow {
  return {
    name,
    operation: 'deploy-service',
    workflowTemplate: 'deploy-service',
    parameters,
    userId: 'alice',
    steps: ['validate', 'build', 'deploy'],
    message: 'queued; step 1/3: validate',
    startedAt: '2026-11-01T12:00:00.000Z',
    ...overrides,
  };
}
