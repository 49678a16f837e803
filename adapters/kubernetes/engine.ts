/**
 * The Argo Workflows engine (the `WorkflowEngine` port of `core/ports.ts`): each execution is one
 * `Workflow` in `PDS_WORKFLOW_NAMESPACE` with `spec.workflowTemplateRef` = the operation, the validated parameters and
 * the derived ones as `spec.arguments.parameters`, labels `pds.dev/operation`, `pds.dev/tenant`, `pds.dev/service`,
 * `pds.dev/managed-by=pds` and the caller in the annotation `pds.dev/user`. `env_vars` values go to a Secret owned by
 * the Workflow, never into its parameters.
 *
 * Records (the workflow record and, with it, the audit entry) live in the SQL record store, so every replica answers
 * the same. Phases come from the Workflow informer, which holds the running Workflows only, metadata-only (issue 23
 * item 3; `informers.ts`): a Workflow leaves it when Argo labels it `workflows.argoproj.io/completed=true`, and that
 * departure (or a final `workflows.argoproj.io/phase` label seen first) is when pds fetches it to settle it. A
 * Workflow's status (its nodes) is fetched when pds needs it: once when it settles (""/Pending/Running → `submitted`
 * with the running step in the message, Succeeded → `succeeded`, Failed/Error → `failed` with the failed node's
 * message; the steps are kept in the record, which answers from then on, and a settled workflow once read is kept in
 * memory, final), and while it runs, when a caller asks for it or follows it (one GET per resourceVersion, shared by
 * every caller). The first replica to see a Workflow finish settles its record and audit entry (an idempotent
 * conditional update); Workflows that finished, or vanished, while pds was down are settled by the ghost reconciler
 * once the informer has listed: an unfinished record whose Workflow is not running is fetched.
 *
 * A deploy to a canary service (issue 22 item 3) also shows the canary steps of its release, with each step's analysis
 * result, beside Argo's steps (after `wait-rollout`): `releaseSteps` reads them from the Rollout and its AnalysisRuns
 * while the workflow runs, they are kept with the record when it settles, and while anyone follows workflows they are
 * read every `releaseEveryMs`, so a wait reports progress at each canary step (Argo's Workflow does not change while
 * its wait-rollout step waits).
 *
 * A cancellation (issue 22) records who asked on the workflow record, then sets the Workflow's `spec.shutdown`
 * (`Stop`, or `Terminate` with `force`); Argo stops its running step, runs the exit handler (`Stop` only: deploy-service's
 * undo, `deploy/workflows/deploy-service.yaml`) and ends it `Failed`, and pds settles it with `cancelled by <user>` in
 * place of Argo's "Stopped with strategy 'Stop'". A record without a Workflow (not created yet, e.g. awaiting approval,
 * or gone) is settled at once.
 */
import { randomUUID } from 'node:crypto';
import { CoreV1Api, CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import { Conflict, NotFound, PlatformError, Upstream } from '../../core/errors.js';
import type { Logger } from '../../core/logger.js';
import type { AuditStatus } from '../../core/model.js';
import { applicationName, workflowTemplateName } from '../../core/names.js';
import { waitingMessage, workflowApproval, type Approval } from '../../core/governance/approvals.js';
import { isOperationId, type OperationId, type OperationParams } from '../../core/operations/index.js';
import type { AwaitingOutcome, CancelRequest, WorkflowEngine, WorkflowQuery, WorkflowRun, WorkflowStep, WorkflowSubmission } from '../../core/ports.js';
import { cancelledMessage, settledRefusal } from '../../core/workflow-control.js';
import type { RecordStore, WorkflowRecord } from '../sql/index.js';
import { describe, type ClusterCache } from './informers.js';
import { keepNewest } from './kept.js';
import { ANNOTATION, ARGO_GROUP, ARGO_LABEL, ARGO_VERSION, LABEL, type Workflow, type WorkflowMetadata, type WorkflowNode } from './objects.js';
import { clusterOperations, envSecretName, type ArgumentFactory } from './operations.js';
import { stepLogReader, type StepLogReader } from './step-logs.js';

/** A workflow as the cluster engine reports it (the port's {@link WorkflowRun}). */
export type ClusterWorkflowRun = WorkflowRun;

export interface ArgoEngineOptions {
  kc: KubeConfig;
  cache: ClusterCache;
  records: RecordStore;
  /** `PDS_WORKFLOW_NAMESPACE`. */
  namespace: string;
  /** `PDS_REGISTRY`. */
  registry: string;
  /** `PDS_DOMAIN`. */
  domain: string;
  /** The identity of a live tenant (`pds.dev/uid`), or `undefined`. */
  tenantUid(team: string): Promise<string | undefined>;
  log: Logger;
  now?: () => Date;
  /** Seconds an unfinished record may lack its Workflow before the reconciler settles it as vanished (default 60). */
  vanishedAfterSeconds?: number;
  /** Milliseconds between ghost reconciler rounds (default 60,000). */
  reconcileEveryMs?: number;
  /**
   * The canary steps of a running `deploy-service` workflow's release, with their analysis results (`rollouts.ts`
   * `readCanaryWorkflowSteps`); `[]` when its service has no canary release of it. Absent: none are shown.
   */
  releaseSteps?: (run: ClusterWorkflowRun) => Promise<WorkflowStep[]>;
  /** Milliseconds between reads of the release steps of running deploys while anyone follows workflows (default 2,000). */
  releaseEveryMs?: number;
}

/** Argo node phases → step status. */
const STEP_STATUS: Record<string, WorkflowStep['status']> = {
  Pending: 'pending',
  Running: 'running',
  Succeeded: 'succeeded',
  Failed: 'failed',
  Error: 'failed',
  Skipped: 'skipped',
  Omitted: 'skipped',
};

/**
 * A Workflow's phase in the audit vocabulary (issue 10): ""/Pending/Running → `submitted`, Succeeded → `succeeded`,
 * Failed/Error → `failed`.
 */
export function auditStatusOf(phase: string | undefined): AuditStatus {
  if (phase === 'Succeeded') return 'succeeded';
  if (phase === 'Failed' || phase === 'Error') return 'failed';
  return 'submitted';
}

/** The steps (pod nodes) of a Workflow, in the order they started. */
export function stepsOf(workflow: Workflow): WorkflowStep[] {
  return Object.values(workflow.status?.nodes ?? {})
    .filter((n) => n.type === 'Pod' || n.type === 'Skipped')
    .sort((a, b) => (a.startedAt ?? '~').localeCompare(b.startedAt ?? '~'))
    .map((n) => {
      const step: WorkflowStep = { name: n.displayName ?? n.name ?? n.id ?? '', status: STEP_STATUS[n.phase ?? ''] ?? 'pending' };
      if (n.startedAt) step.startedAt = n.startedAt;
      if (n.finishedAt) step.finishedAt = n.finishedAt;
      if (n.message) step.message = n.message;
      return step;
    });
}

/**
 * The message pds shows for a Workflow: the running step while it runs, the failed node's message when it failed.
 * @example 'running step build-image (2 of 5 steps done)' · 'step check-tenant failed: main: Error (exit code 1): …'
 */
export function messageOf(workflow: Workflow): string {
  const status = auditStatusOf(workflow.status?.phase);
  const nodes = Object.values(workflow.status?.nodes ?? {});
  const pods = nodes.filter((n) => n.type === 'Pod');
  const label = (n: WorkflowNode) => n.displayName ?? n.name ?? n.id ?? '';
  if (status === 'failed') {
    const failed = pods.find((n) => n.phase === 'Failed' || n.phase === 'Error') ?? nodes.find((n) => (n.phase === 'Failed' || n.phase === 'Error') && n.message);
    if (failed?.message) return `step ${label(failed)} failed: ${failed.message}`;
    return workflow.status?.message || 'the workflow failed';
  }
  if (status === 'succeeded') return workflow.status?.message || `${pods.length} step${pods.length === 1 ? '' : 's'} succeeded`;
  const running = pods.filter((n) => n.phase === 'Running' || n.phase === 'Pending');
  const done = pods.filter((n) => n.phase === 'Succeeded').length;
  if (running.length) return `running step ${running.map(label).join(', ')} (${done} step${done === 1 ? '' : 's'} done)`;
  if (workflow.status?.phase === 'Running') return `running (${done} step${done === 1 ? '' : 's'} done)`;
  return workflow.status?.message || 'submitted to Argo Workflows, waiting for the controller';
}

/**
 * True when Argo's labels on a Workflow say it finished (`workflows.argoproj.io/completed=true`, or a final
 * `workflows.argoproj.io/phase`).
 */
export function finishedByLabels(workflow: WorkflowMetadata): boolean {
  const labels = workflow.metadata?.labels ?? {};
  return labels[ARGO_LABEL.completed] === 'true' || auditStatusOf(labels[ARGO_LABEL.phase]) !== 'submitted';
}

/** How the canary steps of a release are named (as the sandbox names them: `canary step 1/2: …`). */
const CANARY_STEP = 'canary step ';

/** Full Workflows kept (by name, at one resourceVersion) for callers asking while they run: a bound, not a cache of all. */
const FULL_KEPT = 256;
/**
 * Settled workflows kept as last read, by name (about 2 KB each): a settled record, its steps and its approval never
 * change again, so a warm read of one needs neither the record store nor the API server. A bound, not a cache of all.
 */
const SETTLED_KEPT = 2_000;
/** Log tails of steps of finished Workflows kept (a stopped pod's log no longer changes), by workflow, step and lines. */
const LOG_TAILS_KEPT = 256;
/**
 * The `resourceVersion` key under which a Workflow that is not running (absent from the informer: finished, or gone)
 * is kept in {@link ArgoWorkflowEngine.full}: fetched once, for a finished Workflow's status no longer changes.
 */
const NOT_RUNNING = 'not-running';

/** The Argo Workflows engine. Call {@link ArgoWorkflowEngine.start} once. */
export class ArgoWorkflowEngine implements WorkflowEngine {
  private readonly custom: CustomObjectsApi;
  private readonly core: CoreV1Api;
  private readonly stepLogs: StepLogReader;
  private readonly settledListeners: Array<(run: WorkflowRun) => void> = [];
  private readonly changeListeners = new Set<(run: ClusterWorkflowRun) => void>();
  private readonly now: () => Date;
  private timer: NodeJS.Timeout | undefined;
  private releaseTimer: NodeJS.Timeout | undefined;
  /** The release steps last told to listeners, by workflow (see {@link followReleases}). */
  private readonly releaseTold = new Map<string, string>();
  private closed = false;
  private reconciling: Promise<void> | undefined;
  /** Full Workflows fetched, by name, with the resourceVersion they were fetched at (insertion order = age). */
  private readonly full = new Map<string, { resourceVersion: string | undefined; workflow: Promise<Workflow | undefined> }>();
  /** Settled workflows as read, by name (see {@link SETTLED_KEPT}). */
  private readonly settled = new Map<string, ClusterWorkflowRun>();
  /** Log tails of steps of finished Workflows (see {@link LOG_TAILS_KEPT}). */
  private readonly logTails = new Map<string, string[]>();
  /**
   * Settled workflows whose Workflow, fetched, had no steps to keep or was gone: read from their record alone from
   * then on, without asking the API server again (a bound, {@link SETTLED_KEPT}).
   */
  private readonly stepless = new Map<string, true>();

  constructor(private readonly options: ArgoEngineOptions) {
    this.custom = options.kc.makeApiClient(CustomObjectsApi);
    this.core = options.kc.makeApiClient(CoreV1Api);
    this.stepLogs = stepLogReader(options.kc, options.namespace);
    this.now = options.now ?? (() => new Date());
  }

  /** Follow Workflows through the informer, and settle ghosts now and every `reconcileEveryMs`. */
  start(): void {
    const seen = (w: WorkflowMetadata, left = false) =>
      void this.observe(w, false, left).catch((err: unknown) => this.options.log.error({ err, workflow: w.metadata?.name }, 'could not record a workflow change'));
    this.options.cache.workflows.on('add', (w) => seen(w));
    this.options.cache.workflows.on('update', (w) => seen(w));
    // A Workflow leaves the informer when Argo marks it completed (or it is deleted): fetch it now to settle it.
    this.options.cache.workflows.on('delete', (w) => {
      this.full.delete(w.metadata?.name ?? '');
      seen(w, true);
    });
    void this.options.cache.workflows.synced.then(() => this.reconcile());
    this.timer = setInterval(() => void this.reconcile(), this.options.reconcileEveryMs ?? 60_000);
    this.timer.unref();
    if (this.options.releaseSteps) {
      this.releaseTimer = setInterval(() => void this.followReleases(), this.options.releaseEveryMs ?? 2_000);
      this.releaseTimer.unref();
    }
  }

  /**
   * While anyone follows workflows: tell them of each change of the release steps of running deploys (a canary step
   * reached, an analysis passed), which Argo's Workflow does not show while its wait-rollout step waits.
   */
  private async followReleases(): Promise<void> {
    if (this.closed || this.changeListeners.size === 0) return void this.releaseTold.clear();
    const running = this.options.cache.workflows
      .list(this.options.namespace)
      .filter((w) => w.metadata?.labels?.[LABEL.operation] === 'deploy-service' && !finishedByLabels(w))
      .map((w) => w.metadata!.name!);
    for (const name of this.releaseTold.keys()) if (!running.includes(name)) this.releaseTold.delete(name);
    for (const name of running) {
      const run = await this.get(name).catch(() => undefined);
      if (!run || run.phase !== 'submitted') continue;
      const told = JSON.stringify(run.steps.filter((s) => s.name.startsWith(CANARY_STEP)));
      if (told === (this.releaseTold.get(name) ?? '[]')) continue;
      this.releaseTold.set(name, told);
      for (const listener of this.changeListeners) listener(run);
    }
  }

  /**
   * `run` with its release's canary steps after Argo's `wait-rollout` step (or last, before Argo lists it), for a deploy
   * whose record has not settled (a settled record keeps them). A Rollout that cannot be read leaves them out (logged):
   * the workflow still answers.
   */
  private async withRelease(run: ClusterWorkflowRun): Promise<ClusterWorkflowRun> {
    if (!this.options.releaseSteps || run.operation !== 'deploy-service' || !run.team || !run.service) return run;
    let release: WorkflowStep[];
    try {
      release = await this.options.releaseSteps(run);
    } catch (err) {
      this.options.log.warn({ err, workflow: run.name }, 'could not read the canary steps of a release');
      return run;
    }
    if (!release.length) return run;
    const steps = run.steps.filter((s) => !s.name.startsWith(CANARY_STEP));
    const at = steps.findIndex((s) => s.name === 'wait-rollout');
    steps.splice(at < 0 ? steps.length : at + 1, 0, ...release);
    return { ...run, steps };
  }

  /**
   * Submit one Workflow: record it and its audit entry in one transaction, create the Workflow, then the env Secret it
   * owns.
   * @throws NotFound when the tenant does not exist (every operation but create-tenant).
   * @throws Upstream when the API server refuses the Workflow or its Secret; the record is then settled `failed` and
   *   nothing stays behind in the cluster.
   */
  async submit(submission: WorkflowSubmission): Promise<void> {
    const { name, operation, userId, approval } = submission;
    const params = submission.parameters as { team_name: string; component_name?: string };
    const team = params.team_name;
    let tenantUid: string;
    if (operation === 'create-tenant') tenantUid = randomUUID();
    else {
      const uid = submission.tenantUid ?? (await this.options.tenantUid(team));
      if (!uid) throw new NotFound(`tenant not found: ${team}`);
      tenantUid = uid;
    }
    // The arguments are derived now, so parameters the factory refuses are refused before anything is recorded.
    this.argumentsOf(name, operation, submission.parameters, tenantUid, submission.recorded);
    const startedAt = this.now().toISOString();
    const recordedUid = operation === 'create-tenant' ? null : tenantUid;
    await this.options.records.transaction(async (tx) => {
      await tx.audit.append(submission.audit, { tenantUid: recordedUid });
      await tx.workflows.create({
        name,
        operation,
        workflowTemplate: workflowTemplateName(operation),
        parameters: submission.recorded,
        userId,
        steps: [],
        message: approval ? waitingMessage({ ...approval, approvedBy: [] }) : 'submitted to Argo Workflows, waiting for the controller',
        startedAt,
        tenantUid: recordedUid,
        // Kept (secret values included) until the Workflow is created at approval; deleted when the workflow settles.
        ...(approval ? { approvalId: approval.id, arguments: submission.parameters } : {}),
        ...(submission.retryOf !== undefined ? { retryOf: submission.retryOf } : {}),
      });
      if (approval) {
        await tx.approvals.create({
          request: approval,
          workflowName: name,
          tenant: { name: team, uid: tenantUid },
          operation,
          parameters: submission.recorded,
          requestedBy: userId,
          requestedAt: submission.audit.timestamp,
        });
      }
    });
    if (approval) {
      await this.tell(name);
      return;
    }
    await this.createWorkflow(name, operation, submission.parameters, tenantUid, userId, submission.recorded);
  }

  /**
   * Record one approval (see the port); the `required`-th creates the Argo Workflow from the arguments kept with the
   * record. Only the call whose vote released the record creates it, so two replicas never both do. When the API
   * server refuses it, the workflow is settled `failed` saying so (the approval stands).
   */
  async approve(approvalId: string, vote: { userId: string; comment?: string; timestamp: string }): Promise<Approval> {
    const { approval, started } = await this.options.records.approvals.vote(approvalId, vote);
    const name = approval.workflowName;
    if (started) {
      const record = await this.options.records.workflows.get(name);
      const args = await this.options.records.workflows.arguments(name);
      if (!record || args === undefined || !record.tenantUid || !isOperationId(record.operation)) {
        await this.fail(name, 'the approved workflow\'s arguments are gone; submit it again');
      } else {
        await this.createWorkflow(name, record.operation, args as OperationParams, record.tenantUid, record.userId, record.parameters).catch((err: unknown) =>
          this.options.log.warn({ err, workflow: name }, 'an approved workflow could not be created'),
        );
      }
    }
    await this.tell(name);
    return approval;
  }

  /** Settle a workflow waiting for approval `failed` (see the port): it has no Argo Workflow, so nothing is deleted. */
  async settleAwaiting(workflowName: string, outcome: AwaitingOutcome): Promise<boolean> {
    const closed = await this.options.records.approvals.close(workflowName, outcome);
    if (!closed) return false;
    const run = await this.get(workflowName);
    if (!run) return true;
    for (const listener of this.changeListeners) listener(run);
    for (const listener of this.settledListeners) {
      try {
        listener(run);
      } catch (err) {
        this.options.log.error({ err, workflow: workflowName }, 'an onSettled listener threw');
      }
    }
    return true;
  }

  /** Tell onChange listeners how workflow `name` stands now (a request or a decision; Argo reports the rest). */
  private async tell(name: string): Promise<void> {
    const run = await this.get(name).catch(() => undefined);
    if (run) for (const listener of this.changeListeners) listener(run);
  }

  /**
   * The Workflow's arguments (and env Secret data) for an operation. `recorded`: the parameters as audited, where a
   * freeze override (`override_reason`) is kept beside the typed ones (tools/operations/execute.ts).
   */
  private argumentsOf(name: string, operation: OperationId, parameters: unknown, tenantUid: string, recorded: Record<string, string>) {
    const factory = clusterOperations[operation] as ArgumentFactory<OperationId>;
    const params = parameters as { team_name: string; component_name?: string };
    return factory(parameters as never, {
      registry: this.options.registry,
      domain: this.options.domain,
      tenantUid,
      workflowName: name,
      service: params.component_name ? this.serviceSource(params.team_name, params.component_name) : undefined,
      override: recorded.override_reason !== undefined,
    });
  }

  /**
   * Create the Argo Workflow of a recorded workflow, then the env Secret it owns.
   * @throws Upstream when the API server refuses either; the record is then settled `failed` and nothing stays behind.
   */
  private async createWorkflow(name: string, operation: OperationId, parameters: unknown, tenantUid: string, userId: string, recorded: Record<string, string>): Promise<void> {
    const params = parameters as { team_name: string; component_name?: string };
    const team = params.team_name;
    const args = this.argumentsOf(name, operation, parameters, tenantUid, recorded);
    const labels: Record<string, string> = { [LABEL.operation]: operation, [LABEL.tenant]: team, [LABEL.managedBy]: 'pds' };
    if (params.component_name) labels[LABEL.service] = params.component_name;
    const body: Workflow = {
      apiVersion: `${ARGO_GROUP}/${ARGO_VERSION}`,
      kind: 'Workflow',
      metadata: { name, namespace: this.options.namespace, labels, annotations: { [ANNOTATION.user]: userId, [ANNOTATION.uid]: tenantUid } },
      spec: {
        workflowTemplateRef: { name: workflowTemplateName(operation) },
        // Argo runs the Workflows holding one mutex one at a time, oldest first: a service's operations take effect in
        // submission order (a deploy submitted before a rollback finishes first), as the sandbox's queue does.
        synchronization: { mutex: { name: mutexName(team, params.component_name) } },
        arguments: { parameters: Object.entries(args.parameters).map(([n, value]) => ({ name: n, value })) },
      },
    };
    let uid: string;
    try {
      const created = (await this.custom.createNamespacedCustomObject({ ...this.argo(), body })) as Workflow;
      uid = created.metadata!.uid!;
    } catch (err) {
      await this.fail(name, `Argo Workflows refused the Workflow: ${reason(err)}`);
      throw new Upstream(`Argo Workflows refused workflow ${name}: ${reason(err)}`, { cause: err });
    }
    if (args.env) {
      try {
        await this.core.createNamespacedSecret({
          namespace: this.options.namespace,
          body: {
            metadata: {
              name: envSecretName(name),
              labels: { [LABEL.managedBy]: 'pds', [LABEL.tenant]: team },
              // Deleted with its Workflow (garbage collection), which Argo deletes after its ttlStrategy.
              ownerReferences: [{ apiVersion: `${ARGO_GROUP}/${ARGO_VERSION}`, kind: 'Workflow', name, uid, blockOwnerDeletion: false }],
            },
            type: 'Opaque',
            stringData: args.env,
          },
        });
      } catch (err) {
        await this.custom.deleteNamespacedCustomObject({ ...this.argo(), name }).catch(() => {});
        await this.fail(name, `could not write the environment Secret of the Workflow: ${reason(err)}`);
        throw new Upstream(`could not write the environment Secret of workflow ${name}: ${reason(err)}`, { cause: err });
      }
    }
  }

  /**
   * Stop workflow `name`: record who asked (and why), then patch its Workflow's `spec.shutdown` to `Stop` (`Terminate`
   * with `request.force`), as `argo stop` / `argo terminate` do
   * (https://argo-workflows.readthedocs.io/en/latest/cli/argo_stop/). Argo stops the running step and ends the Workflow
   * `Failed`; the informer then settles the record and audit entry with `cancelled by <user>`. When there is no
   * Workflow (not created yet, or deleted) the record is settled at once.
   * @returns the workflow as it stands after the request (usually still stopping).
   * @throws NotFound for an unknown name; Conflict when it has settled; Upstream when the API server refuses the patch.
   */
  async cancel(name: string, request: CancelRequest): Promise<ClusterWorkflowRun> {
    // Waiting for approval: no Argo Workflow exists; the approval closes as cancelled (issue 20 item 2).
    const waiting = { state: 'cancelled' as const, userId: request.userId, reason: request.reason ?? 'no reason given', timestamp: this.now().toISOString() };
    if (await this.settleAwaiting(name, waiting)) return (await this.get(name))!;
    const record = await this.options.records.transaction((tx) => tx.workflows.markCancelled(name, request));
    if (!record) {
      const known = await this.options.records.workflows.get(name);
      if (!known) throw new NotFound(`workflow not found: ${name}`);
      throw new Conflict(settledRefusal({ name, phase: known.phase, ...(known.finishedAt ? { finishedAt: known.finishedAt } : {}) }));
    }
    const shutdown = request.force ? 'Terminate' : 'Stop';
    try {
      // JSON Patch `add` replaces a value that is there: a second cancel may turn a Stop into a Terminate.
      await this.custom.patchNamespacedCustomObject({ ...this.argo(), name, body: [{ op: 'add', path: '/spec/shutdown', value: shutdown }] });
    } catch (err) {
      if ((err as { code?: number }).code !== 404) {
        // Not stopped: a later failure of its own must not read as this cancellation.
        await this.options.records.workflows.unmarkCancelled(name).catch(() => undefined);
        throw new Upstream(`Argo Workflows refused to stop workflow ${name}: ${reason(err)}`, { cause: err });
      }
      await this.settle(record, 'failed', cancelledMessage(request), undefined);
    }
    return (await this.get(name))!;
  }

  /**
   * The workflow from its record and, while it runs, its Workflow (fetched once per resourceVersion); `undefined` when
   * the record store does not know the name. A settled workflow is answered from the record, and once read, from
   * memory: settled, it never changes again ({@link SETTLED_KEPT}), so a warm read makes no request at all.
   */
  async get(name: string): Promise<ClusterWorkflowRun | undefined> {
    const kept = this.settled.get(name);
    if (kept) return { ...kept };
    const record = await this.options.records.workflows.get(name);
    if (!record) return undefined;
    const live = this.runOf(record, await this.statusFor(record));
    const run = record.phase === 'submitted' ? await this.withRelease(live) : live;
    if (record.approvalId) {
      const approval = await this.options.records.approvals.ofWorkflow(name);
      if (approval) run.approval = workflowApproval(approval);
    }
    if (this.isFinal(record)) keepNewest(this.settled, name, { ...run }, SETTLED_KEPT);
    return run;
  }

  /**
   * True when nothing will change how `record` reads any more: it settled, and its steps are kept (statusFor keeps them
   * on the first read of a record settled without them), or its Workflow, fetched, had none or is gone.
   */
  private isFinal(record: WorkflowRecord): boolean {
    if (record.phase === 'submitted') return false;
    return record.steps.length > 0 || this.stepless.has(record.name);
  }

  /**
   * The newest workflows `query.visible` allows and the filters select, newest first (submission order): the record
   * store's query (`adapters/sql/workflows.ts`, the audit trail's visibility rule). One statement; a settled record
   * answers from itself, a running one with its Workflow (fetched once per resourceVersion).
   */
  async list(query: WorkflowQuery): Promise<ClusterWorkflowRun[]> {
    const records = await this.options.records.workflows.query(query);
    const approvals = await this.options.records.approvals.ofWorkflows(records.filter((r) => r.approvalId).map((r) => r.name));
    return Promise.all(
      records.map(async (record) => {
        const run = this.runOf(record, await this.statusFor(record));
        const approval = approvals.get(record.name);
        if (approval) run.approval = workflowApproval(approval);
        return run;
      }),
    );
  }

  /**
   * The newest `lines` lines of step `step` of `workflow`: the `main` container log of the step's pod in
   * `PDS_WORKFLOW_NAMESPACE` (the node found in the Workflow's status, fetched; see `step-logs.ts`). Once Argo's labels
   * on the fetched Workflow say it finished, the tail is kept ({@link LOG_TAILS_KEPT}): later reads make no request.
   * @returns `[]` when the Workflow, the step's pod node or its pod is gone.
   * @throws Upstream when the API server refuses the `pods/log` read or cannot be reached.
   */
  async stepLog(workflow: string, step: string, lines: number): Promise<string[]> {
    const key = JSON.stringify([workflow, step, lines]);
    const kept = this.logTails.get(key);
    if (kept) return [...kept];
    const wf = await this.fetchWorkflow(workflow);
    if (!wf) return [];
    const tail = await this.stepLogs.read(wf, step, lines);
    // Argo says the Workflow finished: its pods have stopped, so the tail read now is the tail for good.
    if (finishedByLabels(wf)) keepNewest(this.logTails, key, [...tail], LOG_TAILS_KEPT);
    return tail;
  }

  onSettled(listener: (run: WorkflowRun) => void): void {
    this.settledListeners.push(listener);
  }

  /** The source the service's Application records (its repository and build file), for images built before. */
  private serviceSource(team: string, service: string): { repo?: string; dockerfilePath?: string } | undefined {
    const name = applicationName(team, service);
    const app = this.options.cache.applications.list().find((a) => a.metadata?.name === name);
    const a = app?.metadata?.annotations;
    return a && { repo: a[ANNOTATION.dockerfileRepo], dockerfilePath: a[ANNOTATION.dockerfilePath] };
  }

  /** Called on every phase, step or message change; returns an unsubscribe. */
  onChange(listener: (run: ClusterWorkflowRun) => void): () => void {
    this.changeListeners.add(listener);
    return () => this.changeListeners.delete(listener);
  }

  /**
   * Settle every unfinished record whose Workflow finished, or no longer exists (the "ghost reconciler"): one the
   * informer holds (running) is observed; one it does not is fetched (one GET per such record and round), and settled
   * from its status when it finished, or as vanished when the API server no longer has it after the grace. Runs once
   * the informer has listed, then every `reconcileEveryMs`. Records waiting for approval are skipped: their Workflow is
   * created only once they are approved.
   */
  async reconcile(): Promise<void> {
    if (this.closed || !this.options.cache.workflows.isSynced) return;
    this.reconciling ??= (async () => {
      try {
        const graceMs = (this.options.vanishedAfterSeconds ?? 60) * 1000;
        for (const record of await this.options.records.workflows.unfinished()) {
          // A workflow waiting for approval has no Workflow yet, by design: no ghost.
          if (!isOperationId(record.operation) || record.awaitingApproval) continue;
          const running = this.options.cache.workflows.get(record.name, this.options.namespace);
          if (running) {
            await this.observe(running, true);
            continue;
          }
          // Fetched now, its own labels say whether it finished.
          const workflow = await this.fetchWorkflow(record.name);
          if (workflow) await this.observe(workflow, true);
          // An approved workflow's Workflow is created at approval (its record's due time), not at submission.
          else if (this.now().getTime() - Math.max(Date.parse(record.startedAt), record.dueAt) > graceMs) {
            await this.settle(record, 'failed', `the Workflow ${record.name} no longer exists in ${this.options.namespace}; it was deleted before pds saw it finish`, undefined);
          }
        }
      } catch (err) {
        this.options.log.error({ err }, 'the ghost reconciler could not finish a round');
      } finally {
        this.reconciling = undefined;
      }
    })();
    return this.reconciling;
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    clearInterval(this.releaseTimer);
    await this.reconciling;
  }

  private argo() {
    return { group: ARGO_GROUP, version: ARGO_VERSION, namespace: this.options.namespace, plural: 'workflows' };
  }

  private async fail(name: string, message: string): Promise<void> {
    await this.options.records.workflows
      .settle(name, { phase: 'failed', message, finishedAt: this.now().toISOString() })
      .catch((err: unknown) => this.options.log.error({ err, workflow: name }, 'could not record a refused submission'));
  }

  /**
   * A Workflow was added or changed (its metadata, as the informer holds it), or left the informer: when it finished
   * (or left), or someone follows workflows, fetch its status; tell listeners, and settle its record when it finished.
   * @param reconciling called by the ghost reconciler, which reads every unfinished record itself.
   * @param left the Workflow is no longer running as far as the informer knows (Argo marked it completed, or it was
   *   deleted): `meta` is as it was before, so only its fetched status says which.
   */
  private async observe(meta: WorkflowMetadata, reconciling = false, left = false): Promise<void> {
    const name = meta.metadata?.name;
    if (!name || this.closed) return;
    // The first list's events: the reconciler, which runs once it is in, looks at every unfinished record instead.
    if (!reconciling && !this.options.cache.workflows.isSynced) return;
    const finished = left || finishedByLabels(meta);
    if (!finished && this.changeListeners.size === 0) return;
    const record = await this.options.records.workflows.get(name);
    if (!record) return; // not submitted by a pds on this record store
    if (record.phase !== 'submitted') {
      // Settled, perhaps by another replica: whoever follows it here still hears of the end (from the record).
      if (this.changeListeners.size > 0) {
        const run = this.runOf(record, await this.statusFor(record));
        for (const listener of this.changeListeners) listener(run);
      }
      return;
    }
    const workflow = await this.fetchWorkflow(name);
    if (!workflow) return; // deleted: the reconciler settles it after its grace
    // The steps kept at settlement have the release's canary steps too.
    const run = await this.withRelease(this.runOf(record, workflow));
    if (record.approvalId) {
      const approval = await this.options.records.approvals.ofWorkflow(name);
      if (approval) run.approval = workflowApproval(approval);
    }
    for (const listener of this.changeListeners) listener(run);
    if (run.phase !== 'submitted') await this.settle(record, run.phase, run.message, workflow, run.steps);
  }

  /**
   * The Workflow `name` with its status, fetched from the API server once per resourceVersion the informer reports
   * while it runs, and once when it no longer runs (the informer does not hold it: finished, or gone); callers asking
   * at the same time share one request. `undefined` when the API server does not have it.
   * @throws Upstream when the API server refuses the read or cannot be reached.
   */
  private async fetchWorkflow(name: string): Promise<Workflow | undefined> {
    const meta = this.options.cache.workflows.get(name, this.options.namespace);
    const resourceVersion = meta ? meta.metadata?.resourceVersion : NOT_RUNNING;
    const kept = this.full.get(name);
    if (kept && kept.resourceVersion === resourceVersion) return kept.workflow;
    const forget = () => {
      if (this.full.get(name)?.workflow === workflow) this.full.delete(name);
    };
    const workflow: Promise<Workflow | undefined> = (this.custom.getNamespacedCustomObject({ ...this.argo(), name }) as Promise<Workflow>).then(
      (wf) => {
        // Not in the informer yet still running (the informer has not seen it yet): its status will change.
        if (!meta && !finishedByLabels(wf)) forget();
        return wf;
      },
      (err: unknown) => {
        forget();
        if ((err as { code?: number }).code === 404) return undefined;
        throw new Upstream(`could not read workflow ${name} from the Kubernetes API server: ${describe(err)}`, { cause: err });
      },
    );
    keepNewest(this.full, name, { resourceVersion, workflow }, FULL_KEPT);
    return workflow;
  }

  /**
   * What {@link runOf} needs of the cluster for `record`: nothing for a settled record with its steps (or known to
   * have none), nor for one waiting for approval (no Workflow yet); otherwise the full Workflow (a settled record
   * without steps, settled before pds kept them, gets them kept now, or is marked {@link stepless}). A failed read is
   * logged and answered from the record and, while it runs, Argo's labels.
   */
  private async statusFor(record: WorkflowRecord): Promise<Workflow | undefined> {
    if (record.phase !== 'submitted' && (record.steps.length > 0 || this.stepless.has(record.name))) return undefined;
    if (record.awaitingApproval) return undefined;
    try {
      const workflow = await this.fetchWorkflow(record.name);
      if (record.phase !== 'submitted') {
        const steps = workflow ? stepsOf(workflow) : [];
        if (steps.length > 0) {
          await this.options.records.workflows.keepSteps(record.name, steps);
          record.steps = steps;
        } else keepNewest(this.stepless, record.name, true, SETTLED_KEPT);
      }
      return workflow;
    } catch (err) {
      this.options.log.warn({ err, workflow: record.name }, 'could not read a Workflow; answering from its record and labels');
      const meta = this.options.cache.workflows.get(record.name, this.options.namespace);
      return { metadata: meta?.metadata ?? { name: record.name }, status: { phase: meta?.metadata?.labels?.[ARGO_LABEL.phase] } };
    }
  }

  private async settle(record: WorkflowRecord, phase: 'succeeded' | 'failed', outcome: string, workflow: Workflow | undefined, steps?: WorkflowStep[]): Promise<void> {
    // A workflow someone stopped says who did, not Argo's "Stopped with strategy 'Stop'".
    const message = phase === 'failed' && record.cancelledBy ? cancelledMessage({ userId: record.cancelledBy, reason: record.cancelReason }) : outcome;
    const finishedAt = workflow?.status?.finishedAt ?? this.now().toISOString();
    // create-tenant made a tenant the record could not name yet: its uid is the one pds minted (the Workflow's annotation).
    const minted = record.operation === 'create-tenant' && phase === 'succeeded' ? workflow?.metadata?.annotations?.[ANNOTATION.uid] : undefined;
    // The steps are kept with the outcome: reads of a settled workflow never need its Workflow again.
    const changed = await this.options.records.workflows.settle(record.name, {
      phase,
      message,
      finishedAt,
      ...(steps?.length ? { steps } : {}),
      ...(minted ? { tenantUid: minted } : {}),
    });
    if (!changed) return; // another replica (or an earlier event) settled it
    const settled = await this.get(record.name);
    if (!settled) return;
    for (const listener of this.settledListeners) {
      try {
        listener(settled);
      } catch (err) {
        this.options.log.error({ err, workflow: record.name }, 'an onSettled listener threw');
      }
    }
  }

  private runOf(record: WorkflowRecord, workflow: Workflow | undefined): ClusterWorkflowRun {
    const live = workflow && {
      phase: auditStatusOf(workflow.status?.phase),
      message: messageOf(workflow),
      steps: stepsOf(workflow),
      finishedAt: workflow.status?.finishedAt,
    };
    // The record wins once settled (it is what the audit entry says); before that, the live Workflow.
    const settled = record.phase !== 'submitted';
    const stopped = live?.phase === 'failed' && record.cancelledBy ? cancelledMessage({ userId: record.cancelledBy, reason: record.cancelReason }) : undefined;
    const run: ClusterWorkflowRun = {
      name: record.name,
      operation: record.operation as OperationId,
      phase: settled ? record.phase : (live?.phase ?? 'submitted'),
      message: settled ? record.message : (stopped ?? live?.message ?? record.message),
      startedAt: record.startedAt,
      userId: record.userId,
      parameters: record.parameters,
      steps: live?.steps.length ? live.steps : record.steps,
    };
    const finishedAt = settled ? record.finishedAt : live?.finishedAt;
    if (finishedAt) run.finishedAt = finishedAt;
    if (record.tenant) run.team = record.tenant;
    if (record.service) run.service = record.service;
    if (record.tenantUid) run.tenantUid = record.tenantUid;
    if (record.cancelledBy) run.cancelledBy = record.cancelledBy;
    if (record.retryOf) run.retryOf = record.retryOf;
    return run;
  }
}

/**
 * The Argo mutex a Workflow holds: `pds-<team>-<service>` for service operations, `pds-<team>` for tenant ones.
 * @example mutexName('acme', 'web') // 'pds-acme-web'
 */
export function mutexName(team: string, service?: string): string {
  return service ? `pds-${team}-${service}` : `pds-${team}`;
}

/** The API server's reason for refusing a request, for messages. */
function reason(err: unknown): string {
  return err instanceof PlatformError ? err.message : describe(err);
}
