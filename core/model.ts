/**
 * The domain vocabulary of pds as zod schemas: the resources of `docs/api.md#resources-and-their-fields`, and the
 * validators for names and tags that every tool and adapter agrees on. Field names are the contract: case-sensitive,
 * exactly as `docs/api.md` writes them.
 */
import { z } from 'zod';
import { RolloutView } from './rollouts.js';

/** A DNS-1123 label: lowercase letters, digits and `-`, starting with a letter, ending alphanumeric. */
const DNS_LABEL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;

/**
 * Longest team or service name. `<team>-<service>` must fit one 63-character DNS label (it names the Argo CD
 * Application and the host), so each part is capped and the pair is checked again where both are known.
 */
export const MAX_NAME_LENGTH = 40;

/** Tenant (team) name, e.g. `acme`. Used in paths, namespaces and hosts. */
export const TeamName = z
  .string()
  .min(2, 'must be at least 2 characters')
  .max(MAX_NAME_LENGTH, `must be at most ${MAX_NAME_LENGTH} characters`)
  .regex(DNS_LABEL, 'must be a DNS label: lowercase letters, digits and "-", starting with a letter, e.g. "acme"');

/** Service (component) name within a tenant, e.g. `web`. */
export const ServiceName = z
  .string()
  .min(1, 'must not be empty')
  .max(MAX_NAME_LENGTH, `must be at most ${MAX_NAME_LENGTH} characters`)
  .regex(DNS_LABEL, 'must be a DNS label: lowercase letters, digits and "-", starting with a letter, e.g. "web"');

/** `<team>-<service>` must be one DNS label of at most 63 characters. */
export function combinedNameProblem(team: string, service: string): string | undefined {
  const combined = `${team}-${service}`;
  return combined.length > 63
    ? `"${combined}" (<team>-<service>) is ${combined.length} characters; at most 63 are allowed`
    : undefined;
}

/** SemVer `X.Y.Z` without prefix or suffix, e.g. `0.1.0` (`docs/api.md#versioning`). */
export const SemVerTag = z
  .string()
  .regex(/^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)$/, 'must be a SemVer tag X.Y.Z without "v", e.g. "0.1.0"');

/** `<owner>/<repo>` on the code host, e.g. `acme/web`. */
export const RepoFullName = z
  .string()
  .regex(/^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})\/[A-Za-z0-9._-]{1,100}$/, 'must be "<owner>/<repo>", e.g. "acme/web"');

/** `docs/api.md#operation-risk-levels`. */
export const RiskLevel = z.enum(['low', 'medium', 'high']);
export type RiskLevel = z.infer<typeof RiskLevel>;

/** `docs/api.md#quotas-object`: Kubernetes quantities as text. */
export const Quotas = z.object({
  cpu: z.string().describe('CPU quantity, e.g. "4" or "500m"'),
  memory: z.string().describe('Memory quantity with unit suffix, e.g. "8Gi"'),
  pods: z.string().describe('Pod count, e.g. "20"'),
});
export type Quotas = z.infer<typeof Quotas>;

/** Tenant roles: `admin` and `member` may execute operations in the tenant, `viewer` may only read it. */
export const MemberRole = z.enum(['admin', 'member', 'viewer']);
export type MemberRole = z.infer<typeof MemberRole>;

/** `docs/api.md#member`. `viewer` may read the tenant; `member` and `admin` may also execute operations in it. */
export const Member = z.object({
  userId: z.string().describe('User id: GitHub login, e-mail from the identity provider, or token subject'),
  role: MemberRole.describe('Role in the tenant'),
});
export type Member = z.infer<typeof Member>;

/** `docs/api.md#tenant` (list form: every field). */
export const Tenant = z.object({
  name: z.string().describe('Tenant name, used in paths'),
  displayName: z.string(),
  description: z.string(),
  contactEmail: z.string(),
  quotas: Quotas,
  members: z.array(Member),
});
export type Tenant = z.infer<typeof Tenant>;

/** `docs/api.md#tenant`: the tenant detail answer carries name, displayName, quotas and members. */
export const TenantDetail = Tenant.pick({ name: true, displayName: true, quotas: true, members: true });
export type TenantDetail = z.infer<typeof TenantDetail>;

/** `docs/api.md#service`. */
export const Service = z.object({
  team: z.string(),
  name: z.string(),
  imageTag: z.string().describe('Deployed SemVer image tag; empty until the first deploy succeeds'),
  host: z.string().describe('Public host name, <team>-<service>.<domain>'),
  port: z.string().describe('Container port, as text'),
  componentType: z.string().describe('e.g. "base-service"'),
  hasDatabase: z.boolean(),
});
export type Service = z.infer<typeof Service>;

/** Argo CD Application sync status (`docs/api.md#sync-and-health-of-a-deployed-service`). */
export const SyncStatus = z.enum(['Synced', 'OutOfSync', 'Unknown']);
export type SyncStatus = z.infer<typeof SyncStatus>;
/** Argo CD Application health status. */
export const HealthStatus = z.enum(['Healthy', 'Progressing', 'Degraded', 'Suspended', 'Missing', 'Unknown']);
export type HealthStatus = z.infer<typeof HealthStatus>;

/** `docs/api.md#status`: the key `argocd` is part of the interface. */
export const Status = z.object({
  argocd: z.object({
    name: z.string().describe('Argo CD Application name, <team>-<service>'),
    syncStatus: SyncStatus,
    healthStatus: HealthStatus,
    message: z.string(),
  }),
  service: Service.pick({ team: true, name: true, imageTag: true, host: true }),
  rollout: RolloutView.optional().describe('Beside the contract\'s fields: the current or last canary or blue-green release'),
});
export type Status = z.infer<typeof Status>;

/** `docs/api.md#log-line`. */
export const LogLine = z.object({
  timestamp: z.string().describe('ISO 8601 UTC time'),
  line: z.string(),
  labels: z.record(z.string(), z.string()).describe('e.g. {"pod": "web-7d9f", "source": "workflow"}'),
});
export type LogLine = z.infer<typeof LogLine>;

/** `docs/api.md#resource-usage`. */
export const ResourceUsage = z.object({
  tenant: z.string(),
  allocated: Quotas,
  used: Quotas,
  note: z.string(),
});
export type ResourceUsage = z.infer<typeof ResourceUsage>;

/** The progress of one workflow step. `skipped`: not run because the workflow failed (or was superseded) before it. */
export const StepStatus = z.enum(['pending', 'running', 'succeeded', 'failed', 'skipped']);
export type StepStatus = z.infer<typeof StepStatus>;

/**
 * One step of a workflow as pds reports it: what the engines produce (`core/ports.ts` `WorkflowRun.steps`) and what
 * `platform_get_workflow` answers.
 */
export const WorkflowStep = z.object({
  name: z.string(),
  status: StepStatus,
  /** ISO 8601 UTC. */
  startedAt: z.string().optional(),
  /** ISO 8601 UTC. */
  finishedAt: z.string().optional(),
  message: z.string().optional(),
});
export type WorkflowStep = z.infer<typeof WorkflowStep>;

/** Workflow and audit status (`docs/api.md#workflow-and-audit-status`): `submitted` until the workflow settles. */
export const AuditStatus = z.enum(['submitted', 'succeeded', 'failed']);
export type AuditStatus = z.infer<typeof AuditStatus>;

/** `docs/api.md#audit-entry`. `message` appears in the workflow response only. */
export const AuditEntry = z.object({
  id: z.string(),
  timestamp: z.string().describe('ISO 8601 UTC time of submission'),
  userId: z.string().describe('The caller'),
  operation: z.string().describe('Operation name, e.g. "deploy-service"'),
  parameters: z.record(z.string(), z.string()).describe('The parameters submitted'),
  workflowName: z.string(),
  status: AuditStatus,
  riskLevel: RiskLevel,
  message: z.string(),
});
export type AuditEntry = z.infer<typeof AuditEntry>;

/** A repository the platform can build from (the contract leaves the record open; these fields are ours). */
export const Repository = z.object({
  fullName: z.string().describe('<owner>/<repo>'),
  defaultBranch: z.string(),
  private: z.boolean(),
  url: z.string().describe('Web URL of the repository'),
  installationId: z.number().int().optional().describe('Code-host app installation that grants access'),
  registeredBy: z.string().optional().describe('Code-host login whose push access registered it'),
  registeredVia: z.string().optional().describe('How, e.g. "push-access:write"'),
  registeredAt: z.string().optional().describe('ISO 8601 UTC'),
  id: z.string().optional().describe('The code host\'s id of the repository, e.g. "892543218": a re-created repository of the same name has another'),
  ownerId: z.string().optional().describe('The code host\'s id of the repository\'s owner, e.g. "1342004"'),
});
export type Repository = z.infer<typeof Repository>;
