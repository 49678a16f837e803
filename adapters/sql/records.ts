/**
 * The records the store reads and writes, in the shapes the engines work with (camelCase, lists as arrays, times as
 * the API shows them). Tenants, services and workflows match the sandbox's records (`adapters/sandbox/state.ts`,
 * STATE_VERSION 1) plus what the database adds: a tenant's `uid`, a workflow's `seq` and queue. Rows are mapped to
 * these in the store files; nothing outside `adapters/sql/` sees a row.
 */
import type { AuditStatus, HealthStatus, SyncStatus, Tenant } from '../../core/model.js';
import type { RolloutStrategy, RolloutView } from '../../core/rollouts.js';

/** A tenant: the `docs/api.md#tenant`, when it was created, and its identity. */
export interface TenantRecord extends Tenant {
  /** Identity beyond the name: a name may be reused after delete-tenant, a uid never is (issue 7 item 4). */
  uid: string;
  /** ISO 8601 UTC. */
  createdAt: string;
}

/** A tenant to create; the store makes a uid unless one is given (the import keeps none: old state had no uid). */
export type NewTenant = Omit<TenantRecord, 'uid'> & { uid?: string };

/** A service or preview environment, with what its Argo CD Application would report and what redeploys need. */
export interface ServiceRecord {
  team: string;
  name: string;
  /** Deployed SemVer tag; '' until the first deploy succeeds. */
  imageTag: string;
  host: string;
  port: string;
  componentType: string;
  hasDatabase: boolean;
  syncStatus: SyncStatus;
  healthStatus: HealthStatus;
  /** The Argo CD message shown by `status`. */
  message: string;
  /** Tags deployed successfully, oldest first, each once: what `rollback-service` may return to. */
  deployedTags: string[];
  /** The environment as applied by `update-config` (values never logged, never returned by a read). */
  env: Record<string, string>;
  healthCheckPath: string;
  dockerfileRepo: string;
  dockerfilePath: string;
  serviceTemplate: string;
  database?: { engine: string; storage: string };
  /** Preview environments only: the base service, the previewed tag, and when it is removed (ISO 8601 UTC). */
  preview?: { base: string; imageTag: string; ttlHours: string; expiresAt: string };
  /** The workflow currently rolling this service out. */
  activeWorkflow?: string;
  /** ISO 8601 UTC. */
  createdAt: string;
  /** How releases are rolled out (issue 22); absent: rolling. */
  strategy?: RolloutStrategy;
  /** Normalized `canary_steps` text, canary only. */
  canarySteps?: string;
  /** The current or last canary or blue-green release. */
  rollout?: RolloutView;
}

/** A promote or abort by hand, waiting for the workflow's rollout step to act on it. */
export interface RolloutCommand {
  command: 'promote' | 'abort';
  userId: string;
  /** ISO 8601 UTC. */
  at: string;
}

/**
 * Progress of one step of a workflow. The sandbox records `pending`, `succeeded` and `failed`; the cluster engine
 * records the steps of a settled Argo Workflow as Argo reported them, `running` and `skipped` included.
 */
export type StepStatus = 'pending' | 'running' | 'succeeded' | 'failed' | 'skipped';

/** One step of a workflow as recorded. */
export interface StepProgress {
  name: string;
  status: StepStatus;
  /** ISO 8601 UTC, when the step began. */
  startedAt?: string;
  /** ISO 8601 UTC, once the step ran. */
  finishedAt?: string;
  /** What the step found or reported, e.g. a canary step's analysis result or Argo's node message. */
  message?: string;
}

/** One workflow with its plan and progress. */
export interface WorkflowRecord {
  /** Submission order across the store (ascending). */
  seq: number;
  name: string;
  operation: string;
  workflowTemplate: string;
  /** The parameters as recorded: strings, secret values redacted (`env_vars` is `KEY=***` lines). */
  parameters: Record<string, string>;
  userId: string;
  phase: AuditStatus;
  message: string;
  /** ISO 8601 UTC. */
  startedAt: string;
  /** ISO 8601 UTC, once settled. */
  finishedAt?: string;
  steps: StepProgress[];
  /** Index of the step to run next. */
  nextStep: number;
  /** `team_name` ('' when none): with `service`, the queue the workflow waits in. */
  tenant: string;
  /** The tenant the workflow belongs to, when there is one. */
  tenantUid?: string;
  /** `component_name` ('' for tenant operations). */
  service: string;
  /** Milliseconds since the epoch before which the next step does not run. */
  dueAt: number;
  /** The process holding the lease, if one does (or did: an expired lease keeps its owner until someone else claims). */
  leaseOwner?: string;
  /** Milliseconds since the epoch; the lease is free at and after this. */
  leaseExpiresAt?: number;
  /** Who asked to stop it, once someone did (issue 22). */
  cancelledBy?: string;
  /** Why it was cancelled, when the person said. */
  cancelReason?: string;
  /** The failed workflow it retries, when it is a retry (issue 22). */
  retryOf?: string;
  /** The approval it waits or waited for (issue 20 item 2), when its tenant's policy asked for one. */
  approvalId?: string;
  /** True while it waits for approval: nothing of it runs, it holds no place in its queue, it is no ghost. */
  awaitingApproval: boolean;
  /** A promote or abort by hand not yet acted on. */
  rolloutCommand?: RolloutCommand;
}

/** A code-host app installation granted to a tenant for one repository. */
export interface InstallationRecord {
  id: number;
  tenantUid: string;
  team: string;
  repo: string;
  /** ISO 8601 UTC. */
  createdAt: string;
}
