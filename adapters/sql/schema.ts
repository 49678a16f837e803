/**
 * The tables of the record store as Kysely sees them (one interface per table; column names in snake_case). The same
 * schema runs on SQLite and PostgreSQL (`migrations.ts` creates it). Conventions, the same on both engines:
 *
 * - **Times shown to callers** (`created_at`, `started_at`, `finished_at`, `timestamp`) are ISO 8601 UTC text, kept
 *   exactly as they were recorded. **Instants the store compares** (expiries, leases, due times) are integers:
 *   milliseconds since the epoch (`bigint`; the PostgreSQL pool parses `int8` to a JavaScript number).
 * - **Lists and maps** (steps, deployed tags, parameters, environment) are JSON text.
 * - **Flags** are integers 0/1 (SQLite has no boolean type).
 * - A **tenant's identity** is its `uid` (a random UUID made at creation, or the Namespace UID on Kubernetes); its name
 *   is reusable after delete-tenant, the uid never is. Records that belong to a tenant carry the uid (issue 7 item 4).
 */
import type { Generated } from 'kysely';

/** A live tenant (sandbox). Deleted with delete-tenant; its members and services go with it (foreign keys). */
export interface TenantsTable {
  uid: string;
  /** Unique among live tenants. */
  name: string;
  display_name: string;
  description: string;
  contact_email: string;
  quota_cpu: string;
  quota_memory: string;
  quota_pods: string;
  created_at: string;
}

/** One member of a tenant; `position` keeps the order members were listed in. */
export interface TenantMembersTable {
  tenant_uid: string;
  user_id: string;
  role: 'admin' | 'member' | 'viewer';
  position: number;
}

/** A service or preview environment (sandbox), with what its Argo CD Application would report. */
export interface ServicesTable {
  tenant_uid: string;
  /** The tenant's name, denormalized: services are listed and found by `(team, name)`. */
  team: string;
  name: string;
  image_tag: string;
  host: string;
  port: string;
  component_type: string;
  has_database: number;
  sync_status: string;
  health_status: string;
  message: string;
  /** JSON array of tags deployed successfully, oldest first. */
  deployed_tags: string;
  /** JSON object: the environment as applied (the stand-in for the service's Secret; never shown by any read). */
  env: string;
  health_check_path: string;
  dockerfile_repo: string;
  dockerfile_path: string;
  service_template: string;
  /** The provisioned database (`provision-database`), when there is one. */
  database_engine: string | null;
  database_storage: string | null;
  /** Set on preview environments only. */
  preview_base: string | null;
  preview_image_tag: string | null;
  preview_ttl_hours: string | null;
  /** Milliseconds since the epoch; the preview is removed at this instant. */
  preview_expires_at: number | null;
  active_workflow: string | null;
  created_at: string;
  /** `rolling`, `canary` or `blue-green`; null: rolling (services from before issue 22). */
  rollout_strategy: string | null;
  /** Normalized `canary_steps` text, canary only. */
  canary_steps: string | null;
  /** JSON `RolloutView` of the current or last progressive release. */
  rollout: string | null;
}

/**
 * One workflow: submitted by pds (sandbox: run here, step by step; Kubernetes: an Argo Workflow pds tracks).
 * `seq` is the submission order; `(tenant, service)` is the queue that orders operations on one service.
 */
export interface WorkflowsTable {
  seq: Generated<number>;
  name: string;
  operation: string;
  workflow_template: string;
  user_id: string;
  /** `team_name` of the submission ('' when none). */
  tenant: string;
  /** The tenant the workflow belongs to, when it existed at submission or was created by the workflow. */
  tenant_uid: string | null;
  /** `component_name` of the submission ('' for tenant operations, which queue behind every service of the tenant). */
  service: string;
  /** JSON object of the parameters as recorded: strings, secret values redacted. */
  parameters: string;
  phase: 'submitted' | 'succeeded' | 'failed';
  message: string;
  started_at: string;
  finished_at: string | null;
  /** JSON array of `{ name, status, finishedAt? }`. */
  steps: string;
  /** Index of the step to run next. */
  next_step: number;
  /** Milliseconds since the epoch before which the next step does not run (the sandbox's step delay). */
  due_at: number;
  /** Who holds the lease (a process id from `leaseOwnerId()`); kept after expiry so a queue knows the workflow began. */
  lease_owner: string | null;
  /** Milliseconds since the epoch; the lease is free at and after this instant. */
  lease_expires_at: number | null;
  /** Who asked to stop it (issue 22), once someone did; null otherwise. */
  cancelled_by: string | null;
  /** Why, when the person who cancelled said. */
  cancel_reason: string | null;
  /** The failed workflow it retries (issue 22), when it is a retry. */
  retry_of: string | null;
  /** The approval it waits or waited for (`approvals.id`), when its tenant's policy asked for one. */
  approval_id: string | null;
  /** 1 while it waits for approval: not claimed, not queued ahead of others, not a ghost; else 0. */
  awaiting_approval: Generated<number>;
  /** JSON `RolloutCommand`: a promote or abort by hand its rollout step has not acted on yet. */
  rollout_command: string | null;
}

/**
 * The typed arguments a workflow's steps run with, secret values included (e.g. `env_vars` with its values), apart
 * from every record anyone reads; deleted when the workflow settles (as the cluster keeps them in a Secret owned by
 * the Workflow).
 */
export interface WorkflowArgumentsTable {
  workflow_name: string;
  /** JSON. */
  arguments: string;
}

/** The audit trail (`docs/api.md#audit-entry`), one row per workflow. */
export interface AuditEntriesTable {
  seq: Generated<number>;
  id: string;
  timestamp: string;
  user_id: string;
  operation: string;
  /** JSON object of the parameters as recorded: strings, secret values redacted. */
  parameters: string;
  workflow_name: string;
  status: 'submitted' | 'succeeded' | 'failed';
  risk_level: 'low' | 'medium' | 'high';
  message: string;
  /** `team_name` of the entry ('' when none). */
  tenant: string;
  /** The tenant the entry belongs to (see {@link WorkflowsTable.tenant_uid}); null when none did. */
  tenant_uid: string | null;
  /** `component_name` of the entry ('' when none). */
  service: string;
}

/** A repository registered for a tenant (sandbox: from an installation; Kubernetes: from the GitHub App). */
export interface RepositoriesTable {
  tenant_uid: string;
  /** The tenant's name when registered, for reading the table by eye. */
  team: string;
  full_name: string;
  default_branch: string;
  private: number;
  url: string;
  installation_id: number | null;
  /** The code-host login whose push access registered it (migration 0004); null for older registrations. */
  registered_by: string | null;
  /** How: `push-access:<permission>` (GitHub) or `push-access:owner` / `push-access:org-member` (sandbox). */
  registered_via: string | null;
  /** ISO 8601 UTC. */
  registered_at: string | null;
  /** The code host's id of the repository, decimal text (migration 0009); null for older registrations. */
  repository_id: string | null;
  /** The code host's id of the repository's owner, decimal text (migration 0009). */
  owner_id: string | null;
}

/** A code-host app installation granted to a tenant for one repository. */
export interface InstallationsTable {
  id: number;
  tenant_uid: string;
  team: string;
  repo: string;
  created_at: string;
}

/** A single-use claim (confirmation values), free again at `expires_at` (milliseconds since the epoch). */
export interface OnceClaimsTable {
  key: string;
  expires_at: number;
}

/**
 * One record of the OAuth authorization server (`OAuthStore`): a model `kind` (`AuthorizationCode`, `RefreshToken`,
 * `Grant`, `Session`, `Client`, …) and its `id`, the payload as JSON, the payload fields the store looks records up
 * by (`grant_id`, `uid`, `user_code`), when it was consumed (epoch seconds) and when it expires (milliseconds since the
 * epoch; null: never).
 */
export interface OAuthRecordsTable {
  kind: string;
  id: string;
  payload: string;
  grant_id: string | null;
  uid: string | null;
  user_code: string | null;
  consumed_at: number | null;
  expires_at: number | null;
}

/** One log line of the sandbox's workflows and "deployments" (`docs/api.md#log-line`), newest `seq` last; bounded per service. */
export interface LogLinesTable {
  seq: Generated<number>;
  team: string;
  /** '' for tenant-level workflows (create-tenant, delete-tenant). */
  app: string;
  /** ISO 8601 UTC. */
  timestamp: string;
  line: string;
  /** JSON object of string labels. */
  labels: string;
}

/** Facts about the store itself: the `state.json` import marker, the readiness probe's write. */
export interface MetaTable {
  key: string;
  value: string;
}

/** A tenant's governance policy (issue 20), by tenant identity; absent: the empty policy. */
export interface TenantPoliciesTable {
  tenant_uid: string;
  /** The tenant's name when last set, for reading the table by eye. */
  team: string;
  /** JSON: the policy document as validated (`core/governance/policy.ts`). */
  policy: string;
  /** ISO 8601 UTC. */
  updated_at: string;
  updated_by: string;
}

/** One event of a tenant's feed (`core/governance/events.ts`), newest `seq` last. */
export interface TenantEventsTable {
  seq: Generated<number>;
  id: string;
  tenant_uid: string;
  /** The tenant's name when it happened. */
  team: string;
  /** `policy.changed`, `freeze.overridden`. */
  type: string;
  user_id: string;
  /** ISO 8601 UTC. */
  timestamp: string;
  /** JSON object: the event's `data`. */
  data: string;
}

/** An approval request of one workflow (`core/governance/approvals.ts`), newest `seq` last. */
export interface ApprovalsTable {
  seq: Generated<number>;
  id: string;
  workflow_name: string;
  /** The tenant's name when requested. */
  tenant: string;
  tenant_uid: string | null;
  operation: string;
  /** JSON object: the execution's parameters as recorded (secret values redacted). */
  parameters: string;
  requested_by: string;
  /** ISO 8601 UTC. */
  requested_at: string;
  required: number;
  /** JSON array of approver references. */
  approvers: string;
  /** `pending`, `approved`, `rejected`, `expired`, `cancelled`. */
  state: string;
  /** ISO 8601 UTC (`toISOString()`, so text order is time order). */
  expires_at: string;
  decided_at: string | null;
  decided_by: string | null;
  reason: string | null;
  /** `workflow` or `promote` (`ApprovalSubject`). */
  subject: Generated<string>;
  /** Promote: the deploy workflow of the release (its `workflow_name` is `promote:<id>`); null for a workflow's. */
  release_workflow: string | null;
  /** Promote, once approved: what it did. */
  outcome: string | null;
}

/** One person's approval of one approval request; the key makes it count once. */
export interface ApprovalVotesTable {
  approval_id: string;
  user_id: string;
  comment: string | null;
  /** ISO 8601 UTC. */
  timestamp: string;
}

/** The sandbox's registry (issue 20 item 4): images built, by name (`<repository>:<tag>`); a source is built once. */
export interface ImagesTable {
  /** `<repository>:<tag>` (`core/images.ts`). */
  image: string;
  digest: string;
  /** ISO 8601 UTC. */
  built_at: string;
  /** The workflow whose push made it. */
  workflow: string;
}

/**
 * One interval during which a service ran one image Synced and Healthy (issue 20 item 4); `until` null while it
 * lasts. At most one open interval per service (a partial unique index).
 */
export interface ImageObservationsTable {
  seq: Generated<number>;
  tenant_uid: string;
  /** The tenant's name when observed. */
  team: string;
  app: string;
  /** `<repository>:<tag>` without digest. */
  image: string;
  digest: string;
  /** `<owner>/<repo>` built from, when the observer knew it. */
  repo: string | null;
  dockerfile_path: string | null;
  /** ISO 8601 UTC. */
  since: string;
  /** ISO 8601 UTC; null while open. */
  until: string | null;
}

/** One webhook of a tenant (`core/governance/webhooks.ts`), in the order the tenant listed them. */
export interface WebhooksTable {
  /** `wh_` and 16 hex digits. */
  id: string;
  tenant_uid: string;
  /** The tenant's name when last set. */
  team: string;
  position: number;
  url: string;
  /** JSON array of event names. */
  events: string;
  format: 'json' | 'slack';
  /** The signing secret, sealed with the server secret (`adapters/webhooks/secrets.ts`): a compact JWE, never plaintext. */
  secret: string;
  /** ISO 8601 UTC. */
  created_at: string;
  created_by: string;
}

/**
 * One event to one hook (the outbox): written in the transaction that records the event, at most once per
 * `(hook_id, event_key)`; claimed by one process at a time through its lease, retried until `outcome` is final.
 */
export interface WebhookDeliveriesTable {
  seq: Generated<number>;
  /** UUID: the `X-PDS-Delivery` header. */
  id: string;
  hook_id: string;
  tenant_uid: string;
  team: string;
  /** The event name, e.g. `workflow.succeeded`: the `X-PDS-Event` header. */
  event_type: string;
  /** What makes the event unique for its hook: a feed event's id, or `<workflow>/<event>`. */
  event_key: string;
  /** The id in the body. */
  event_id: string;
  /** The exact body sent on every attempt (JSON text, in the hook's format when it was written). */
  body: string;
  /** ISO 8601 UTC: when the event happened. */
  created_at: string;
  /** Milliseconds since the epoch of the same instant; retries end `giveUpAfterMs` after it. */
  created_ms: number;
  attempts: number;
  outcome: 'pending' | 'delivered' | 'failed';
  last_status: number | null;
  last_error: string | null;
  /** Milliseconds since the epoch; null once final. */
  next_attempt_at: number | null;
  lease_owner: string | null;
  lease_expires_at: number | null;
}

/** Every table, by name. */
export interface Database {
  images: ImagesTable;
  image_observations: ImageObservationsTable;
  tenants: TenantsTable;
  tenant_members: TenantMembersTable;
  services: ServicesTable;
  workflows: WorkflowsTable;
  workflow_arguments: WorkflowArgumentsTable;
  audit_entries: AuditEntriesTable;
  repositories: RepositoriesTable;
  installations: InstallationsTable;
  once_claims: OnceClaimsTable;
  oauth_records: OAuthRecordsTable;
  log_lines: LogLinesTable;
  pds_meta: MetaTable;
  tenant_policies: TenantPoliciesTable;
  tenant_events: TenantEventsTable;
  approvals: ApprovalsTable;
  approval_votes: ApprovalVotesTable;
  webhooks: WebhooksTable;
  webhook_deliveries: WebhookDeliveriesTable;
}
