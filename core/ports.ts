/**
 * The ports: the small interfaces behind which the outside world lives (DESIGN.md "Ports"). Two families implement
 * them: `adapters/sandbox/` (embedded, the default) and the cluster adapters (`adapters/kubernetes/`, `github/`,
 * `loki/`, `redis/`). Nothing here knows about Koa or MCP. Every method either returns a value from
 * `core/model.ts` or throws a `PlatformError` (`core/errors.ts`); upstream errors never escape raw.
 */
import type { OperationId, OperationParams } from './operations/index.js';
import type {
  AuditEntry,
  AuditStatus,
  LogLine,
  Repository,
  ResourceUsage,
  Service,
  Status,
  Tenant,
  WorkflowStep,
} from './model.js';
import type { Approval, ApprovalRequest, ApprovalState, WorkflowApproval } from './governance/approvals.js';
import type { TenantEvent, TenantEventBody } from './governance/events.js';
import type { RolloutView } from './rollouts.js';
import type { TenantPolicy } from './governance/policy.js';
import type { ImageSource } from './images.js';
import type { Webhook, WebhookDelivery, WebhookInput } from './governance/webhooks.js';

/** Tenants, services, GitOps status, logs and resource usage (read side of the platform). */
export interface PlatformBackend {
  /** Every tenant, sorted by name. */
  listTenants(): Promise<Tenant[]>;
  /** One tenant, or `undefined` when it does not exist. */
  getTenant(name: string): Promise<Tenant | undefined>;
  /**
   * The identity of the live tenant named `name` (sandbox: the uid minted at create-tenant; Kubernetes: the
   * Namespace's `metadata.uid`), or `undefined` when no such tenant exists. A name reused after delete-tenant gets a
   * new uid (issue 7 item 4).
   */
  getTenantRef(name: string): Promise<TenantRef | undefined>;
  /** Services, sorted by team then name; only those of `team` when given. */
  listServices(team?: string): Promise<Service[]>;
  /** One service, or `undefined` when it does not exist. */
  getService(team: string, app: string): Promise<Service | undefined>;
  /**
   * Sync and health of the Argo CD Application `<team>-<app>`.
   * @throws NotFound `GitOps application not found: <team>-<app>` when no such Application exists.
   */
  status(team: string, app: string): Promise<Status>;
  /**
   * Log lines of a service, oldest first, at most `lines` (the newest ones), none older than `sinceSeconds`.
   * @returns the lines and a `note` saying what is shown (source, window, truncation).
   * @throws NotFound `service not found: <team>/<app>` when the tenant or the service does not exist.
   */
  logs(team: string, app: string, query: { lines: number; sinceSeconds: number }): Promise<{ lines: LogLine[]; note: string }>;
  /**
   * Quotas of the tenant (`allocated`) and what its services request (`used`).
   * @throws NotFound `tenant not found: <tenant>`.
   */
  resources(tenant: string): Promise<ResourceUsage>;
}

/**
 * What the execute pipeline hands the workflow engine for one operation execution. The WorkflowTemplate it runs is
 * named as the operation (`workflowTemplateName()` in `core/names.ts`).
 */
export interface WorkflowSubmission<K extends OperationId = OperationId> {
  /** Workflow name chosen by pds (unique, DNS-safe), e.g. `deploy-service-x7k2p`. */
  name: string;
  /** The operation, e.g. `deploy-service`. */
  operation: K;
  /**
   * The typed parameters, validated at the door: engines trust them and never parse them again. They may hold secret
   * values (the contract's `secretParameters`, e.g. `env_vars`): an engine keeps those apart from anything it records
   * and hands them only to the step that applies them.
   */
  parameters: OperationParams<K>;
  /** The parameters as recorded (audit entry, workflow record): strings, secret values redacted. */
  recorded: Record<string, string>;
  /** The caller's user id, recorded on the workflow as a label/annotation. */
  userId: string;
  /**
   * The audit entry of this execution (status `submitted`, `workflowName` = `name`): the engine records it atomically
   * with the submission, so a refused submission leaves no entry behind (issue 7 item 12).
   */
  audit: AuditEntry;
  /** The uid of the tenant the operation acts on when it exists at submission (absent for create-tenant). */
  tenantUid?: string;
  /** The failed workflow this execution retries (`POST /api/v1/workflows/{name}/retry`), recorded beside it. */
  retryOf?: string;
  /**
   * The approval the tenant's policy asks for (issue 20 item 2): the engine records it with the workflow and the
   * `approval.requested` event in the same write, and runs nothing (creates no Argo Workflow) until it is approved.
   */
  approval?: ApprovalRequest;
}

export type { WorkflowStep } from './model.js';

/** One workflow as pds reports it; `phase` is already mapped to the audit status vocabulary. */
export interface WorkflowRun {
  name: string;
  operation: OperationId;
  /** Argo phase ""/Pending/Running → `submitted`, Succeeded → `succeeded`, Failed/Error → `failed`. */
  phase: AuditStatus;
  /** Human-readable progress or failure reason; may be empty. */
  message: string;
  /** ISO 8601 UTC. */
  startedAt: string;
  /** ISO 8601 UTC, when settled. */
  finishedAt?: string;
  /** `team_name` of its parameters, when it has one. */
  team?: string;
  /** `component_name` of its parameters, when it has one. */
  service?: string;
  /** The uid of the tenant it belongs to (for create-tenant: once it created it). */
  tenantUid?: string;
  /** Who submitted it. */
  userId: string;
  /** The parameters as recorded: strings, secret values redacted. */
  parameters: Record<string, string>;
  /** Its steps in order, with their progress; empty when the engine does not report steps. */
  steps: WorkflowStep[];
  /** Who asked to stop it (`POST /api/v1/workflows/{name}/cancel`), once someone did. */
  cancelledBy?: string;
  /** The failed workflow it retries, when it is a retry. */
  retryOf?: string;
  /** The approval it waits or waited for, when its tenant's policy asked for one (issue 20 item 2). */
  approval?: WorkflowApproval;
}

/** A request to stop a workflow (issue 22 item 5). */
export interface CancelRequest {
  /** Who cancels: the settled message says `cancelled by <userId>`. */
  userId: string;
  /** Why, when the person said, e.g. `wrong tag`; appended to the message. */
  reason?: string;
  /**
   * Kubernetes: Argo's `Terminate` (no exit handlers, so deploy-service's undo does not run) in place of `Stop`. The
   * sandbox stops between steps either way.
   */
  force?: boolean;
}

/** A decision that settles a workflow waiting for approval `failed` without running it. */
export interface AwaitingOutcome {
  /** `rejected` (an approver said no), `expired` (nobody decided in time), `cancelled` (withdrawn, e.g. a cancel). */
  state: Extract<ApprovalState, 'rejected' | 'expired' | 'cancelled'>;
  /** Who settled it: the rejecter, the canceller, or `EXPIRY_USER` (`core/governance/approvals.ts`). */
  userId: string;
  /** Why; becomes part of the workflow's failure message and (rejected, expired) the event's `comment`. */
  reason: string;
  /** ISO 8601 UTC. */
  timestamp: string;
}

/** A query of workflows, executed by the engine's store; newest first. */
export interface WorkflowQuery {
  /** Whose workflows the caller may see (the same rule as the audit trail's). */
  visible: AuditVisibility;
  /** Only workflows of the tenant of this name (for a non-admin: its current identity only). */
  tenant?: string;
  /** Only workflows whose `component_name` is this. */
  service?: string;
  /** Only workflows of this operation, e.g. `deploy-service`. */
  operation?: string;
  /** At most this many. */
  limit: number;
}

/** Submits operations as workflows and reports on them (Argo Workflows, or the sandbox engine). */
export interface WorkflowEngine {
  /**
   * Submit one workflow; returns once the engine has accepted it (it runs in the background).
   * @throws Upstream when the engine refuses or cannot be reached.
   */
  submit(submission: WorkflowSubmission): Promise<void>;
  /** The workflow, or `undefined` when the engine does not know the name. */
  get(name: string): Promise<WorkflowRun | undefined>;
  /** The newest workflows `query.visible` allows and the filters select, at most `query.limit`, newest first. */
  list(query: WorkflowQuery): Promise<WorkflowRun[]>;
  /**
   * Stop a workflow that has not settled (running, queued, or awaiting approval): the sandbox stops between steps and
   * puts back the service the workflow was rolling out, as it stood before; Argo Workflows gets `spec.shutdown`
   * (`Stop`, or `Terminate` with `force`: https://argo-workflows.readthedocs.io/en/latest/cli/argo_stop/). The workflow
   * and its audit entry settle `failed` with `cancelled by <user>` (on Kubernetes once Argo has stopped it).
   * @returns the workflow after the request (settled in the sandbox; on Kubernetes maybe still stopping).
   * @throws NotFound when the engine does not know the name; Conflict when it has settled already; Upstream when the
   *   engine cannot be reached.
   */
  cancel(name: string, request: CancelRequest): Promise<WorkflowRun>;
  /** Register a listener called once per workflow when it reaches `succeeded` or `failed`. */
  onSettled(listener: (run: WorkflowRun) => void): void;
  /**
   * Register a listener called on every step or phase change of any workflow (after it is recorded), e.g. to answer
   * `wait_seconds` or send progress notifications.
   * @returns a function that unregisters the listener.
   */
  onChange(listener: (run: WorkflowRun) => void): () => void;
  /**
   * The last log lines of one step of a workflow, oldest first, as that step wrote them (the sandbox: the lines it
   * journalled for the step; Argo Workflows: the `main` container log of the step's pod). Used for the `logTail` of a
   * failed workflow's failed step (issue 11 item 3).
   * @param workflow the workflow's name.
   * @param step the step's name as {@link WorkflowStep.name} reports it.
   * @param lines at most this many lines (the newest); 0 returns none.
   * @returns the lines without timestamps; `[]` when the workflow, the step or its log is unknown or gone (e.g. the
   *   step's pod was garbage-collected, or a tenant operation whose lines belong to no service).
   * @throws Upstream when the log exists but cannot be read (e.g. the API server refuses `pods/log`).
   */
  stepLog?(workflow: string, step: string, lines: number): Promise<string[]>;
  /**
   * Record one person's approval of a workflow waiting for it, with its `approval.decided` event, in one write; when
   * it is the `required`-th, start the workflow (sandbox: its steps become runnable; Kubernetes: the Argo Workflow is
   * created). Across replicas exactly one call reaches `required`, so a workflow starts once.
   * @returns the approval after the vote.
   * @throws NotFound when no approval has that id; Conflict when it is no longer pending or `vote.userId` already
   *   approved it. The caller checks who may approve.
   */
  approve(approvalId: string, vote: { userId: string; comment?: string; timestamp: string }): Promise<Approval>;
  /**
   * Settle a workflow that waits for approval `failed` (the message says why), close its approval as `outcome.state`
   * and, for a rejection or expiry, record the `approval.decided` event — one write; then tell onChange and onSettled
   * listeners. Nothing ever ran, so nothing is undone. For cancelling a waiting workflow, use `state: 'cancelled'`.
   * @returns false when the workflow was not waiting (already started, settled, or unknown): nothing changed.
   */
  settleAwaiting(workflowName: string, outcome: AwaitingOutcome): Promise<boolean>;
}

/** A query of approvals, executed by the record store; newest first. */
export interface ApprovalQuery {
  /** Only approvals of these tenants (by name); `'all'` for every tenant. */
  tenants: 'all' | readonly string[];
  /** Only approvals in this state. */
  state?: ApprovalState;
  /** At most this many. */
  limit: number;
}

/** Approval requests (issue 20 item 2), kept in the record store on both backends; written by the workflow engines. */
export interface ApprovalStore {
  /** One approval by id, or `undefined`. */
  get(id: string): Promise<Approval | undefined>;
  /** The approval of workflow `name`, or `undefined` when it needed none. */
  ofWorkflow(name: string): Promise<Approval | undefined>;
  /** Approvals the query selects, newest first. */
  list(query: ApprovalQuery): Promise<Approval[]>;
  /** Pending approvals whose expiry is at or before `now`, oldest first, at most `limit`. */
  due(now: Date, limit: number): Promise<Approval[]>;
  /** The earliest expiry among pending approvals, or `undefined` when none is pending. */
  nextExpiry(): Promise<Date | undefined>;
  /**
   * Record a promote by hand that waits for approval (subject `promote`, issue 22 item 4) with its
   * `approval.requested` event, in one write; or, when a promote of the same release already waits, leave it.
   * Its votes go through {@link WorkflowEngine.approve} like any approval's (no workflow waits, so none starts); the
   * caller that sees the vote reach `required` performs the promote and records {@link promoteOutcome}.
   * @returns the approval that waits, and whether it was recorded now.
   */
  requestPromote(promote: PromoteRequest): Promise<{ approval: Approval; created: boolean }>;
  /**
   * Close a pending promote's approval as rejected, expired or cancelled, with its `approval.decided` event (rejected,
   * expired): the promote never happens; the release goes on with its own pauses.
   * @returns the approval closed, or `undefined` when it was not a pending promote (nothing changed).
   */
  closePromote(id: string, outcome: AwaitingOutcome): Promise<Approval | undefined>;
  /** Record what an approved promote did (`outcome`), e.g. `promoted: …` or `not promoted: the release ended …`. */
  promoteOutcome(id: string, outcome: string): Promise<void>;
}

/** A promote by hand held for approval, as the promote tool asks for it. */
export interface PromoteRequest {
  request: ApprovalRequest;
  /** The tenant it belongs to; its feed gets the `approval.requested` event. */
  tenant: TenantRef;
  /** The deploy workflow of the release to promote, e.g. `deploy-service-x7k2p`. */
  release: string;
  /** As recorded: `team_name`, `component_name`, `canary_tag`, `stable_tag`, and `override_reason` when one was used. */
  parameters: Record<string, string>;
  requestedBy: string;
  /** ISO 8601 UTC. */
  requestedAt: string;
}

/** The audit trail (`docs/api.md#audit-entry`). Writes are atomic; nothing acknowledged is lost. */
export interface AuditStore {
  /**
   * Record a new entry (status `submitted`). Executions do not call it: the engine records their entry with the
   * submission ({@link WorkflowSubmission.audit}).
   * @param context.tenantUid the uid of the tenant the entry belongs to; absent: the live tenant named
   *   `parameters.team_name`, if any.
   * @throws Conflict when an entry for the same workflow exists.
   */
  append(entry: AuditEntry, context: { tenantUid?: string }): Promise<void>;
  /** Move the entry of `workflowName` to a final status with a message. Unknown names are ignored. */
  settle(workflowName: string, status: AuditStatus, message: string): Promise<void>;
  /** The entry of one workflow with its tenant's identity, or `undefined`. */
  get(workflowName: string): Promise<AuditRecord | undefined>;
  /** The newest entries that `query.visible` allows and the filters select, at most `query.limit`, newest first. */
  query(query: AuditQuery): Promise<AuditRecord[]>;
}

/** A tenant by name and identity: the name may be reused after delete-tenant, the uid never is (issue 7 item 4). */
export interface TenantRef {
  name: string;
  /** The sandbox's tenant uid, or the Namespace UID on Kubernetes. */
  uid: string;
}

/**
 * Whose audit entries a caller may read: everything (platform admins), or the entries of the tenants they belong to
 * (by identity, so a deleted tenant's history stays with it) plus the entries they made themselves.
 */
export type AuditVisibility = 'all' | { userId: string; tenants: readonly TenantRef[] };

/** A query of the audit trail, executed by the store (an indexed query, not a scan). */
export interface AuditQuery {
  visible: AuditVisibility;
  /** At most this many entries, newest first (`GET /api/v1/audit` asks for 50). */
  limit: number;
  /** Only entries of the tenant of this name (for a non-admin: its current identity only). */
  tenant?: string;
  /** Only entries whose `component_name` is this. */
  service?: string;
  /** Only entries made by this user. */
  userId?: string;
}

/** An audit entry with the identity of the tenant it belongs to, for access checks; not part of any response. */
export interface AuditRecord extends AuditEntry {
  /** The tenant's uid when the entry was recorded (or the tenant its workflow created); absent when none. */
  tenantUid?: string;
}

/** What a sync did: every repository registered to the team, those added now, and those not registered with why. */
export interface SyncResult {
  repositories: Repository[];
  added: string[];
  refused: Array<{ repo: string; reason: string }>;
}

/** Repositories per team through the code-host app (GitHub App, or the sandbox). */
export interface CodeHost {
  /** Repositories registered for the team, sorted by full name. */
  listRepositories(team: string): Promise<Repository[]>;
  /**
   * Discover repositories from the app's installations and register for the team those `login` may push to (issue 17
   * item 2; README "Which repositories a tenant may build"): the login's own installations and the repositories the
   * team asked for with {@link grantAccessUrl}, each checked on the code host. The caller is the door: `login` must be
   * the verified code-host login of the person asking.
   * @param login the caller's code-host login (a GitHub login).
   * @returns every repository now registered, the full names newly added, and those refused with why.
   */
  syncRepositories(team: string, login: string): Promise<SyncResult>;
  /** The URL to open to install the code-host app on `repo` (`<owner>/<repo>`). */
  grantAccessUrl(team: string, repo: string): Promise<{ url: string }>;
  /**
   * Paths of the files at the repository's default branch (or `ref`), and the text of selected files.
   * @throws NotFound when the platform cannot see the repository.
   */
  readTree(repo: string, options?: { ref?: string; read?: string[] }): Promise<{ paths: string[]; files: Record<string, string> }>;
}

/** A store of single-use markers (confirmation nonces); Redis when configured so replicas agree. */
export interface OnceStore {
  /** True the first time `key` is claimed within `ttlSeconds`, false afterwards. */
  claim(key: string, ttlSeconds: number): Promise<boolean>;
}

/**
 * The state of pds's OAuth authorization server (`auth/oauth/`): authorization codes, refresh tokens, grants, sessions,
 * interactions, registered clients and device codes, each a JSON `payload` under a `kind` (the model, e.g.
 * `AuthorizationCode`) and an `id`. It must survive restarts and be shared by replicas: the sandbox keeps it in its
 * durable state, the record store in one table (`adapters/sql/oauth.ts`); `test/oauth/store-contract.ts` holds both
 * to the same contract.
 *
 * Payload fields the store reads: `grantId` (every record of one grant is revoked together: refresh-token families),
 * `uid` (sessions are also found by it) and `userCode` (device codes are also found by it).
 */
export interface OAuthStore {
  /**
   * Create or replace a record.
   * @param expiresInSeconds lifetime in seconds; absent = until destroyed (registered clients).
   */
  upsert(kind: string, id: string, payload: Record<string, unknown>, expiresInSeconds?: number): Promise<void>;
  /** The payload of a live (unexpired) record, or `undefined`. */
  find(kind: string, id: string): Promise<Record<string, unknown> | undefined>;
  /** The live record of `kind` whose payload `field` equals `value`, or `undefined`. */
  findBy(kind: string, field: 'uid' | 'userCode', value: string): Promise<Record<string, unknown> | undefined>;
  /** Mark a record used: its payload gets `consumed` = now, epoch seconds (a replayed code or refresh token shows it). */
  consume(kind: string, id: string): Promise<void>;
  /** Remove a record; unknown ids are ignored. */
  destroy(kind: string, id: string): Promise<void>;
  /** Remove every record whose payload `grantId` is `grantId`, of any kind (revokes a whole refresh-token family). */
  revokeGrant(grantId: string): Promise<void>;
  /**
   * Extend a live record's life to now + `expiresInSeconds` (a registered client's last use, issue 17); a record that
   * had no expiry gets this one. Nothing is written when the record is absent or expired, or when its expiry is
   * already within `slackSeconds` of the new one.
   */
  touch(kind: string, id: string, expiresInSeconds: number, slackSeconds: number): Promise<void>;
}

/** Who did what, when, for a new {@link TenantEvent}. */
export type NewTenantEvent = TenantEventBody & { userId: string; timestamp: string };

/**
 * Tenant policies and the tenant event feed (issue 20), kept in the record store on both backends. Both are keyed by
 * the tenant's identity, so a tenant re-created under an old name starts with an empty policy and an empty feed.
 */
export interface GovernanceStore {
  /** The tenant's policy; `{}` when none was set. */
  policy(tenant: TenantRef): Promise<TenantPolicy>;
  /**
   * Replace the tenant's policy and record a `policy.changed` event with the old and new documents, in one write.
   * @returns the event recorded.
   */
  setPolicy(tenant: TenantRef, policy: TenantPolicy, by: { userId: string; timestamp: string }): Promise<TenantEvent>;
  /** Append one event to the tenant's feed. */
  record(tenant: TenantRef, event: NewTenantEvent): Promise<TenantEvent>;
  /** The tenant's newest events, newest first, at most `limit`. */
  events(tenant: TenantRef, limit: number): Promise<TenantEvent[]>;
}

/**
 * An image a service runs, as pds observed it (issue 20 item 4): the image name (`<repository>:<tag>`, see
 * `core/images.ts`) and its digest, with the source it was built from when the observer knows it.
 */
export interface RunningImage {
  /** `<repository>:<tag>` without digest, e.g. `registry.example.com/pds/src/acme/web:0.1.0`. */
  image: string;
  /** `sha256:<64 hex>`. */
  digest: string;
  /** `<owner>/<repo>` it was built from, when known (what a promotion redeploys). */
  repo?: string;
  /** The build file it was built from, when known. */
  dockerfilePath?: string;
}

/** One stretch of time during which a service ran one image Synced and Healthy without a gap. */
export interface HealthyInterval extends RunningImage {
  /** ISO 8601 UTC: when pds first observed it Synced and Healthy. */
  since: string;
  /** ISO 8601 UTC: when pds observed it stop (another image, not Synced or not Healthy, removed); absent: still. */
  until?: string;
}

/**
 * What pds observed each service run Synced and Healthy, and for how long (issue 20 item 4: verified promotion), kept
 * in the record store by tenant identity. Observers (the sandbox's simulated GitOps, the Argo CD Application informer)
 * report every change; any other state ends the open interval, so a gap restarts the clock.
 */
export interface ImageObservations {
  /**
   * Record what `tenant`/`app` is at `at`: Synced and Healthy running `running`, or anything else (`undefined`:
   * progressing, degraded, out of sync, removed). Idempotent: replicas reporting the same state change nothing.
   */
  observe(tenant: TenantRef, app: string, running: RunningImage | undefined, at: Date): Promise<void>;
  /** The intervals during which `tenant`/`app` ran `image` (`<repository>:<tag>`) Synced and Healthy, newest first. */
  intervals(tenant: TenantRef, app: string, image: string): Promise<HealthyInterval[]>;
  /** The open interval of `tenant`/`app`: what it runs Synced and Healthy now, or `undefined`. */
  current(tenant: TenantRef, app: string): Promise<HealthyInterval | undefined>;
}

/** A hook in the answer to the change that created it: its secret, shown this once. */
export type NewWebhook = Webhook & { secret?: string };

/**
 * A tenant's webhooks and their deliveries (issue 20 item 5), kept in the record store on both backends; delivered in
 * the background by every pds process (`adapters/webhooks/`).
 */
export interface WebhookService {
  /** The tenant's hooks as members read them: no secret, the URL without query, credentials or Slack key. */
  list(tenant: TenantRef): Promise<Webhook[]>;
  /**
   * Replace the tenant's hooks with `hooks` and record a `webhooks.changed` event, in one write. An item with `id`
   * keeps that hook (and its secret), with the item's URL (absent, or as members are shown it: unchanged), events and
   * format; an item without `id` is a new hook with a new secret. Hooks not listed are removed.
   * @returns the hooks, new ones with their `secret`, and the event.
   * @throws InvalidParams for an unknown `id`, an `id` listed twice, a new hook without `url`, a URL that is not
   *   `https` (or `http` when private addresses are allowed) or that resolves to a non-public address.
   */
  set(tenant: TenantRef, hooks: WebhookInput[], by: { userId: string; timestamp: string }): Promise<{ hooks: NewWebhook[]; event: TenantEvent }>;
  /** The tenant's newest deliveries, newest first, at most `limit`. */
  deliveries(tenant: TenantRef, limit: number): Promise<WebhookDelivery[]>;
}

/**
 * Promote or abort, by hand, the canary or blue-green release a service is going through (issue 22): the sandbox
 * leaves the command for its rollout step; Kubernetes patches the Argo Rollouts `Rollout` as `kubectl argo rollouts
 * promote --full` / `abort` do.
 */
export interface RolloutControl {
  /**
   * The canary or blue-green release in progress, changing nothing (what a promote held for approval would act on).
   * @throws as {@link promote}.
   */
  current(team: string, app: string): Promise<RolloutView>;
  /**
   * Skip the remaining pauses (and analyses) of the release in progress: it goes to 100% now.
   * @param release only when the release in progress is this deploy workflow's (an approved promote, issue 22 item 4).
   * @returns the release as it was when the promote was handed over.
   * @throws NotFound `service not found: <team>/<app>`; Conflict when no canary or blue-green release is in progress,
   *   or it is not `release`'s.
   */
  promote(team: string, app: string, userId: string, release?: string): Promise<RolloutView>;
  /**
   * Abort the release in progress: all traffic back on the stable tag, the deploy workflow fails with "aborted by <user>".
   * @throws as {@link promote}.
   */
  abort(team: string, app: string, userId: string): Promise<RolloutView>;
}

/** Everything the tools need from the outside world, assembled by the composition root. */
export interface Platform {
  /** `sandbox` or `kubernetes`; shown in notes so callers know what they are talking to. */
  readonly kind: 'sandbox' | 'kubernetes';
  readonly backend: PlatformBackend;
  readonly workflows: WorkflowEngine;
  readonly audit: AuditStore;
  readonly codeHost: CodeHost;
  readonly once: OnceStore;
  /** Tenant policies and event feeds (issue 20). */
  readonly governance: GovernanceStore;
  /** Approval requests (issue 20 item 2); decided through {@link WorkflowEngine.approve} and `settleAwaiting`. */
  readonly approvals: ApprovalStore;
  /** What services ran Synced and Healthy, by image digest (issue 20 item 4). */
  readonly images: ImageObservations;
  /**
   * The image (`<repository>:<tag>`, no digest) a deploy of `source` to `team`/`app` builds and runs
   * (`core/images.ts`): the backend's registry, and the build file the backend would use when `source` names none.
   */
  sourceImage(team: string, app: string, source: ImageSource): Promise<string>;
  /** The platform's clock: what governance checks (promotion's "healthy for 30m") and observations measure time by. */
  now(): Date;
  /** Tenant webhooks and their deliveries (issue 20). */
  readonly webhooks: WebhookService;
  /** Promote and abort of canary and blue-green releases by hand (issue 22). */
  readonly rollouts: RolloutControl;
  /** The OAuth authorization server's state (not used by tools; the composition root hands it to `auth/oauth/`). */
  readonly oauth: OAuthStore;
  /**
   * Aborted when pds begins shutting down: waits (`wait_seconds`) then answer at once with the current state.
   */
  readonly shutdown: AbortSignal;
  /** True when the platform can serve traffic: it can read AND write its records (a write probe), upstreams reachable. */
  ready(): Promise<boolean>;
  /** Stop background work and flush state. */
  close(): Promise<void>;
}

/** A GitHub token's owner and its granted scopes, as GitHub reports them. */
export interface GitHubTokenOwner {
  /** GitHub login, e.g. `octocat`. */
  login: string;
  /** Granted OAuth scopes, e.g. `['read:user', 'repo']`; empty when the header is absent. */
  scopes: string[];
}

/**
 * Who a GitHub token belongs to (`createGitHubUserLookup` of `adapters/github/users.ts` asks GitHub's `GET /user`);
 * `auth/` verifies PATs and GitHub sign-ins through it.
 * @throws Unauthenticated when GitHub rejects the token; Unavailable when GitHub cannot be reached.
 */
export type GitHubUserLookup = (token: string) => Promise<GitHubTokenOwner>;
