/**
 * The sandbox's {@link WorkflowEngine} on the record store (`adapters/sql/`): runs each submitted operation's steps
 * (`operations.ts`) in the background, one every `stepMs` milliseconds, in any pds process on the same database.
 *
 * - **Submission.** The workflow, its typed arguments and its audit entry are recorded in one transaction: a refused
 *   write leaves neither (issue 7 item 12).
 * - **Who runs a step.** A process runs a workflow's steps only while it holds the workflow's lease
 *   (`WorkflowStore.claim`); the record store's queue lets a workflow start only when the earlier work on its service
 *   (or tenant) has finished, so operations on one service take effect in submission order (issue 7 item 6). A process
 *   that dies stops renewing; once its lease expires (at once when it was a process on this host that no longer
 *   runs), another process, or the restarted one, continues from the next step.
 * - **One step, once.** A step runs in one transaction: it locks the workflow (`hold`), loads the draft of its tenant,
 *   runs, writes back the draft, its log lines and the workflow's progress (`advance`) or outcome (`settle`, which
 *   settles the audit entry too). It commits entirely or not at all, and only while the lease is still ours.
 * - **Approval.** A workflow whose tenant's policy asks for approval (issue 20 item 2) is recorded waiting
 *   (`awaiting_approval`): no process claims it and it holds no place in its queue until the `required`-th approval
 *   ({@link SandboxWorkflowEngine.approve}) releases it; a rejection or expiry settles it failed before any step ran.
 * - A step that throws fails the workflow with the error's message (`docs/api.md#workflow-and-audit-status`: submitted →
 *   succeeded | failed); the service it was rolling out is marked `Degraded` with that message. A step that could not
 *   commit because the database was unavailable is retried; nothing of it was recorded.
 * - **Cancel (issue 22).** A cancellation locks the workflow, so it falls between two steps (a step is one transaction:
 *   never half-applied), puts the service it was rolling out back as it was, and settles it `failed` with `cancelled
 *   by <user>`; the step that would have run next finds it settled and never runs.
 */
import { hostname } from 'node:os';
import { Conflict, isPlatformError, NotFound, Unavailable, Upstream } from '../../core/errors.js';
import { waitingMessage, workflowApproval, type Approval } from '../../core/governance/approvals.js';
import type { Logger } from '../../core/logger.js';
import { applicationName, previewName, workflowTemplateName } from '../../core/names.js';
import type { OperationId, OperationParams } from '../../core/operations/index.js';
import type { PinnedImage } from '../../core/operations/service-operations.js';
import { DEFAULT_BUILD_FILE, sourceImage } from '../../core/images.js';
import { cancelledMessage, settledRefusal } from '../../core/workflow-control.js';
import type { AwaitingOutcome, CancelRequest, WorkflowEngine, WorkflowQuery, WorkflowRun, WorkflowStep, WorkflowSubmission } from '../../core/ports.js';
import { LeaseLost, leaseOwnerId, type LogRecord, type RecordStore, type Records, type StepProgress } from '../sql/index.js';
import { isDatabaseError } from '../sql/errors.js';
import { loadTenantDraft, saveTenantDraft, type TenantDraft } from '../sql/tenant-records.js';
import { planOperation } from './operations.js';
import type { OperationEnv, Plan, StepContext } from './plan.js';
import { sandboxRegistry } from './steps.js';
import { serviceKey, type SandboxState, type WorkflowRecord } from './state.js';
import type { RolloutSettings } from '../../core/rollouts.js';

/** Where a workflow's arguments keep the rollout settings its plan was made with (see `Plan.pin`). */
const PIN = 'pds:rollout';

export interface EngineOptions {
  store: RecordStore;
  /** Delay before each step, milliseconds (`PDS_SANDBOX_STEP_MS`); 0 runs steps back to back. */
  stepMs: number;
  /**
   * How long a lease lasts without renewal, milliseconds: how long a workflow of a process that died (on another host)
   * waits before another process continues it. Default: 15 s, and at least 4 × `stepMs`.
   */
  leaseMs?: number;
  /** How often the database is asked for work other processes submitted or freed, milliseconds (default `stepMs`, 25–500). */
  pollMs?: number;
  now: () => Date;
  env: OperationEnv;
  /** Called after every committed step, e.g. so the preview reaper can re-arm its timer. */
  afterCommit?: () => void;
  /**
   * Awaited before each step runs, outside any transaction: a test holds a step open with it (the step shows
   * `running` meanwhile) and releases it, to cancel a workflow mid-run without sleeping. Default: none.
   */
  beforeStep?: (workflow: string, step: number) => Promise<void>;
  log: Logger;
}

/** How often the leases of dead processes on this host are looked for while running, milliseconds. */
const RELEASE_CHECK_MS = 2_000;

/** How long a step waits before it is retried when the database could not commit it, milliseconds. */
const RETRY_MS = 1_000;
/** Most of a service's lines read to find one step's (the record store keeps 5,000 per service). */
const MAX_STEP_LOG_SCAN = 5_000;

/** The sandbox's workflow engine. Call {@link start} once after construction. */
export class SandboxWorkflowEngine implements WorkflowEngine {
  /** This process's id as a lease holder. */
  readonly owner = leaseOwnerId();
  private readonly listeners: Array<(run: WorkflowRun) => void> = [];
  private readonly changeListeners = new Set<(run: WorkflowRun) => void>();
  /** Workflows this process holds the lease of, with the timer of their next step. */
  private readonly held = new Map<string, NodeJS.Timeout | undefined>();
  private readonly inflight = new Set<Promise<void>>();
  private poller: NodeJS.Timeout | undefined;
  private claiming: Promise<void> | undefined;
  private claimAgain = false;
  private lastReleaseCheck = 0;
  /** What onChange listeners were last told of each unfinished workflow (`phase:nextStep`), to notice other processes' steps. */
  private readonly told = new Map<string, string>();
  private closed = false;
  /** The plan each held workflow ran its last step with: its next step's `measure` runs before the transaction. */
  private readonly plans = new Map<string, Plan>();
  private readonly leaseMs: number;
  private readonly pollMs: number;

  constructor(private readonly options: EngineOptions) {
    this.leaseMs = options.leaseMs ?? Math.max(15_000, 4 * options.stepMs);
    this.pollMs = options.pollMs ?? Math.min(500, Math.max(25, options.stepMs));
  }

  /**
   * Free the leases of processes on this host that no longer run (killed), then take work: every unfinished workflow
   * whose queue lets it run, from its next step; afterwards poll for work every `pollMs`.
   */
  async start(): Promise<void> {
    await this.releaseGone();
    this.poll();
  }

  /** Free the leases of processes on this host that no longer run. */
  private async releaseGone(): Promise<void> {
    const host = hostname();
    this.lastReleaseCheck = Date.now();
    await this.options.store.workflows.releaseGone((owner) => {
      const [ownerHost, pid] = owner.split(':');
      return ownerHost === host && owner !== this.owner && !isRunning(Number(pid));
    });
  }

  /**
   * Record the workflow (phase `submitted`, every step pending), its typed arguments and its audit entry in one
   * transaction, then run it in the background. The workflow and the entry belong to `submission.tenantUid`, else the
   * live tenant named `team_name` (none for a create-tenant of a new name: it gets the tenant it creates when it
   * settles).
   * @throws Conflict when a workflow or audit entry of that name exists; Unavailable when the sandbox is closing or the
   *   record store cannot be written (then neither the workflow nor its entry is recorded, and nothing runs).
   */
  async submit(submission: WorkflowSubmission): Promise<void> {
    if (this.closed) throw new Unavailable('the sandbox is shutting down; submit again once it is back');
    const { store, env, now, stepMs } = this.options;
    const team = submission.recorded.team_name ?? '';
    const { draft } = await loadTenantDraft(store, team);
    submission = await this.pinBuiltImage(submission, asState(draft));
    const plan = planOperation(submission, { state: asState(draft), env });
    const at = now();
    const { approval } = submission;
    if (approval && submission.tenantUid === undefined) throw new NotFound(`tenant not found: ${team}`);
    await store.transaction(async (tx) => {
      await tx.workflows.create({
        name: submission.name,
        operation: submission.operation,
        workflowTemplate: workflowTemplateName(submission.operation),
        parameters: { ...submission.recorded },
        userId: submission.userId,
        steps: plan.steps.map((step) => step.name),
        message: approval
          ? waitingMessage({ ...approval, approvedBy: [] })
          : `queued; step 1/${plan.steps.length}: ${plan.steps[0]?.name ?? ''}`,
        startedAt: at.toISOString(),
        dueAt: Date.now() + stepMs,
        arguments: plan.pin ? { ...submission.parameters, [PIN]: plan.pin } : submission.parameters,
        ...(submission.tenantUid !== undefined ? { tenantUid: submission.tenantUid } : {}),
        ...(approval ? { approvalId: approval.id } : {}),
        ...(submission.retryOf !== undefined ? { retryOf: submission.retryOf } : {}),
      });
      await tx.audit.append({ ...submission.audit, workflowName: submission.name }, submission.tenantUid !== undefined ? { tenantUid: submission.tenantUid } : {});
      if (approval) {
        await tx.approvals.create({
          request: approval,
          workflowName: submission.name,
          tenant: { name: team, uid: submission.tenantUid! },
          operation: submission.operation,
          parameters: submission.recorded,
          requestedBy: submission.userId,
          requestedAt: submission.audit.timestamp,
        });
      }
    });
    await this.tell(submission.name);
    if (!approval) this.wake(stepMs);
  }

  /**
   * Record `vote` on approval `approvalId` (see the port); when it is the `required`-th, the workflow's steps become
   * runnable here or in any process on the record store (its first step at once).
   */
  async approve(approvalId: string, vote: { userId: string; comment?: string; timestamp: string }): Promise<Approval> {
    const { approval, started } = await this.options.store.approvals.vote(approvalId, vote);
    if (started) this.wake(0);
    await this.tell(approval.workflowName);
    return approval;
  }

  /** Settle a workflow waiting for approval `failed` (see the port); no step of it ran. */
  async settleAwaiting(workflowName: string, outcome: AwaitingOutcome): Promise<boolean> {
    const closed = await this.options.store.approvals.close(workflowName, outcome);
    if (!closed) return false;
    const run = await this.get(workflowName);
    if (run) {
      this.changed(run);
      this.notify(run);
    }
    return true;
  }

  /** Tell onChange listeners how workflow `name` stands now (after a submission or a decision). */
  private async tell(name: string): Promise<void> {
    const record = await this.options.store.workflows.get(name).catch(() => undefined);
    if (record) this.changed(await this.withApproval(record), record.nextStep);
  }

  /** The run of `record`, with its approval when it has one. */
  private async withApproval(record: WorkflowRecord): Promise<WorkflowRun> {
    const run = toRun(record);
    if (!record.approvalId) return run;
    const approval = await this.options.store.approvals.ofWorkflow(record.name);
    if (approval) run.approval = workflowApproval(approval);
    return run;
  }

  /**
   * A deploy or onboarding whose image (`<repository>:<tag>` of its source) the sandbox's registry already holds is
   * pinned to that digest in its stored arguments, so its plan skips the build (issue 20 item 4: one source, built
   * once) and stays the same plan when it is resumed. A submission pinned at the door (promotion) keeps its digest.
   */
  private async pinBuiltImage(submission: WorkflowSubmission, state: SandboxState): Promise<WorkflowSubmission> {
    const p = submission.parameters as OperationParams<'deploy-service'> & PinnedImage;
    if (submission.operation !== 'deploy-service' || p.action === 'update-config' || p.image_digest) return submission;
    const known = state.services[serviceKey(p.team_name, p.component_name)];
    const dockerfilePath = p.dockerfile_path ?? (p.action === 'deploy' ? known?.dockerfilePath : undefined) ?? DEFAULT_BUILD_FILE;
    const image = sourceImage(sandboxRegistry(this.options.env), { repo: p.dockerfile_repo, tag: p.git_tag, dockerfilePath });
    const digest = await this.options.store.images.built(image);
    return digest ? { ...submission, parameters: { ...p, image_digest: digest } as unknown as OperationParams } : submission;
  }

  /**
   * Stop an unfinished workflow between two steps: in one transaction, lock it (a step in progress commits first),
   * put back the service it was rolling out (a service it registered and never deployed is removed, one it was moving
   * to another tag or config goes on running the last good one, Synced and Healthy), mark the step it stopped at
   * `failed`, and settle it and its audit entry `failed` with `cancelled by <user>[: reason]`. Whichever process
   * holds its lease then finds it settled and runs nothing more of it. Steps already done stay done.
   * @throws NotFound when no workflow has that name; Conflict when it has settled already.
   */
  async cancel(name: string, request: CancelRequest): Promise<WorkflowRun> {
    const { store, now } = this.options;
    // Waiting for approval: nothing ran; the approval closes as cancelled (issue 20 item 2).
    const waiting = { state: 'cancelled' as const, userId: request.userId, reason: request.reason ?? 'no reason given', timestamp: now().toISOString() };
    if (await this.settleAwaiting(name, waiting)) return (await this.get(name))!;
    const message = cancelledMessage(request);
    const record = await store.transaction(async (tx) => {
      const held = await tx.workflows.markCancelled(name, request);
      if (!held) {
        const known = await tx.workflows.get(name);
        if (!known) throw new NotFound(`workflow not found: ${name}`);
        throw new Conflict(settledRefusal(toRun(known)));
      }
      const at = now().toISOString();
      const steps: StepProgress[] = held.steps.map((s) => ({ ...s }));
      // The step it stopped at: the one due next, once the workflow has begun (a queued one stopped at none).
      const begun = held.leaseOwner !== undefined || held.nextStep > 0;
      if (begun && steps[held.nextStep]) steps[held.nextStep] = { ...steps[held.nextStep]!, status: 'failed', startedAt: at, finishedAt: at };
      const restored = held.service ? await restoreService(tx, held, request.userId) : undefined;
      if (held.tenant) {
        const label = { source: 'workflow', workflow: name, step: held.steps[held.nextStep]?.name ?? '' };
        await tx.logs.append([
          { team: held.tenant, app: held.service, timestamp: at, line: `workflow ${name} ${message}${restored ? `; ${restored}` : ''}`, labels: label },
        ]);
      }
      await tx.workflows.settle(name, { phase: 'failed', message, finishedAt: at, steps });
      return { ...held, steps, phase: 'failed' as const, message, finishedAt: at };
    });
    this.options.afterCommit?.();
    const run = toRun(record);
    this.changed(run, record.nextStep);
    this.notify(run);
    this.wake(0); // the next workflow of its queue may run now
    return run;
  }

  /** The workflow, or `undefined` when no workflow of that name was submitted. */
  async get(name: string): Promise<WorkflowRun | undefined> {
    const record = await this.options.store.workflows.get(name);
    return record && this.withApproval(record);
  }

  /**
   * The newest `lines` lines the workflow journalled for `step`, oldest first. Its lines are kept with its service's
   * logs, so a workflow without a service (tenant operations), or whose service no longer exists, has none.
   */
  async stepLog(workflow: string, step: string, lines: number): Promise<string[]> {
    const { store } = this.options;
    const record = await store.workflows.get(workflow);
    const team = record?.parameters.team_name;
    const app = record?.parameters.component_name;
    const limit = Math.max(0, Math.floor(lines));
    if (!record || !team || !app || limit === 0 || !(await store.tenants.get(team)) || !(await store.services.get(team, app))) return [];
    // The service's lines since the workflow began (at most the store's bound per service), then this step's.
    const { lines: read } = await store.logs.read(team, app, { since: record.startedAt, limit: MAX_STEP_LOG_SCAN });
    return read
      .filter((l) => l.labels.workflow === workflow && (l.labels.step === undefined || l.labels.step === step))
      .slice(-limit)
      .map((l) => l.line);
  }

  /** Workflows newest first (submission order), those `query.visible` allows and the filters select, at most `query.limit`. */
  async list(query: WorkflowQuery): Promise<WorkflowRun[]> {
    const records = await this.options.store.workflows.query(query);
    const approvals = await this.options.store.approvals.ofWorkflows(records.filter((r) => r.approvalId).map((r) => r.name));
    return records.map((record) => {
      const run = toRun(record);
      const approval = approvals.get(record.name);
      if (approval) run.approval = workflowApproval(approval);
      return run;
    });
  }

  /** `listener` is called once for each workflow this process settles from now on (including ones it took over). */
  onSettled(listener: (run: WorkflowRun) => void): void {
    this.listeners.push(listener);
  }

  /** `listener` is called after every submission, step and settlement this process records; the result unregisters it. */
  onChange(listener: (run: WorkflowRun) => void): () => void {
    this.changeListeners.add(listener);
    return () => void this.changeListeners.delete(listener);
  }

  /**
   * Stop taking work, wait for the step in progress to commit, and give back every lease, so another process continues
   * those workflows at once.
   */
  async close(): Promise<void> {
    this.closed = true;
    if (this.poller) clearTimeout(this.poller);
    for (const timer of this.held.values()) if (timer) clearTimeout(timer);
    await Promise.all([...this.inflight]);
    await this.claiming;
    if (this.held.size > 0) {
      this.held.clear();
      await this.options.store.workflows.release(this.owner).catch((err: unknown) => this.options.log.warn({ err }, 'sandbox: could not give back workflow leases'));
    }
  }

  /** Claim again after `delayMs` (sooner if already due). */
  private wake(delayMs: number): void {
    if (this.closed) return;
    setTimeout(() => void this.claim(), Math.max(0, delayMs)).unref?.();
  }

  private poll(): void {
    if (this.closed) return;
    this.poller = setTimeout(() => {
      const gone = Date.now() - this.lastReleaseCheck >= RELEASE_CHECK_MS ? this.releaseGone().catch(() => undefined) : Promise.resolve();
      void gone
        .then(() => this.claim())
        .then(() => this.watchOthers())
        .finally(() => this.poll());
    }, this.pollMs);
  }

  /**
   * While anyone listens to onChange: tell them of the steps and settlements other processes recorded since the last
   * poll (the unfinished workflows, and those that were unfinished last time), as this process tells of its own.
   */
  private async watchOthers(): Promise<void> {
    if (this.closed || this.changeListeners.size === 0) return;
    try {
      const unfinished = await this.options.store.workflows.unfinished();
      const now = new Set(unfinished.map((r) => r.name));
      const finished = await Promise.all([...this.told.keys()].filter((n) => !now.has(n)).map((n) => this.options.store.workflows.get(n)));
      for (const record of [...unfinished, ...finished]) {
        if (!record) continue;
        const before = this.told.get(record.name);
        if (before === undefined && record.phase === 'submitted') this.told.set(record.name, `${record.phase}:${record.nextStep}`);
        else if (before !== undefined && before !== `${record.phase}:${record.nextStep}`) this.changed(await this.withApproval(record), record.nextStep);
      }
    } catch (err) {
      this.options.log.warn({ err }, 'sandbox: could not read workflow progress for onChange listeners; retrying');
    }
  }

  /** Lease every runnable, due workflow the store hands out and schedule its next step. One claim at a time. */
  private claim(): Promise<void> {
    if (this.closed) return Promise.resolve();
    if (this.claiming) {
      this.claimAgain = true;
      return this.claiming;
    }
    this.claiming = (async () => {
      do {
        this.claimAgain = false;
        const claimed = await this.options.store.workflows
          .claim({ owner: this.owner, now: Date.now(), leaseMs: this.leaseMs, limit: 20 })
          .catch((err: unknown) => {
            this.options.log.warn({ err }, 'sandbox: could not claim workflows; retrying');
            return [];
          });
        for (const record of claimed) {
          if (this.closed) break;
          if (!this.held.has(record.name)) this.schedule(record.name, record.nextStep, 0);
        }
      } while (this.claimAgain && !this.closed);
    })().finally(() => (this.claiming = undefined));
    return this.claiming;
  }

  private schedule(name: string, step: number, delayMs: number): void {
    if (this.closed) return;
    const timer = setTimeout(() => {
      this.held.set(name, undefined);
      const running = this.advance(name, step)
        .catch((err: unknown) => this.options.log.error({ err, workflow: name }, 'sandbox: unexpected error running a workflow step'))
        .finally(() => this.inflight.delete(running));
      this.inflight.add(running);
    }, delayMs);
    this.held.set(name, timer);
  }

  /**
   * Run step `index` of `name` and commit it with the workflow's progress, or fail the workflow; then schedule the
   * next step, or notify and look for the next workflow of its queue.
   */
  private async advance(name: string, index: number): Promise<void> {
    if (this.closed) return;
    await this.options.beforeStep?.(name, index);
    if (this.closed) return;
    const { store } = this.options;
    let record: WorkflowRecord;
    try {
      const measure = this.plans.get(name)?.steps[index]?.measure;
      const measured = measure ? await measure(this.options.env).catch((err: unknown) => ({ error: err })) : undefined;
      record = await store.transaction(async (tx) => this.runStep(tx, await tx.workflows.hold(name, this.owner, index), index, measured));
    } catch (err) {
      if (this.dropped(name, index, err)) return;
      try {
        // The step failed: its changes rolled back; record the failure in a transaction of its own.
        record = await store.transaction((tx) => this.failStep(tx, name, index, err));
      } catch (failErr) {
        if (!this.dropped(name, index, failErr)) {
          this.options.log.error({ err: failErr, workflow: name }, 'sandbox: could not record a workflow failure; retrying');
          this.schedule(name, index, RETRY_MS);
        }
        return;
      }
    }

    this.options.afterCommit?.();
    // Listeners (waits, streams) see the approval a workflow ran under, as a read of it shows.
    const run = record.approvalId ? await this.withApproval(record).catch(() => toRun(record)) : toRun(record);
    const step = run.steps[index];
    // A line per step this process ran (settlements get theirs from the composition root's onSettled).
    this.options.log.info(
      { workflow: name, operation: run.operation, step: step?.name, status: step?.status, index: index + 1, of: run.steps.length },
      `workflow ${name} step ${index + 1}/${run.steps.length} ${step?.status ?? ''}: ${step?.name ?? ''}`,
    );
    this.changed(run, record.nextStep);
    if (record.phase === 'submitted') {
      this.schedule(name, record.nextStep, Math.max(0, record.dueAt - Date.now()));
    } else {
      this.held.delete(name);
      this.plans.delete(name);
      this.notify(run);
      this.wake(0); // the next workflow of its queue may run now
    }
  }

  /**
   * Whether `err` ended this process's part in the workflow, or was the database's (then the step is retried while the
   * lease holds). @returns false when `err` is the step's own failure.
   */
  private dropped(name: string, index: number, err: unknown): boolean {
    if (err instanceof LeaseLost) {
      this.held.delete(name); // another process took it over, or it settled
      this.plans.delete(name);
      return true;
    }
    if ((isPlatformError(err) && err.code === 'UNAVAILABLE') || isDatabaseError(err)) {
      // Nothing of the step was recorded; try again.
      this.options.log.warn({ err, workflow: name }, 'sandbox: a workflow step could not be recorded; retrying');
      this.schedule(name, index, RETRY_MS);
      return true;
    }
    return false;
  }

  /**
   * Run the step inside `tx`; record the draft, the lines and the progress, the step's wait (`again`), or the
   * workflow's success or failure (`fail`: the step's changes are kept). @returns the workflow after.
   */
  private async runStep(tx: Records, record: WorkflowRecord, index: number, measured: unknown): Promise<WorkflowRecord> {
    const { env, now, stepMs } = this.options;
    const stored = await tx.workflows.arguments(record.name);
    const at = now();
    if (stored === undefined) {
      // A workflow left running by a pds that did not keep its typed arguments apart from the redacted parameters (an
      // imported state.json of an older pds) cannot be resumed faithfully: fail it, saying so, rather than guess.
      const message = 'this workflow was submitted by an older pds and cannot be resumed; submit it again';
      await tx.workflows.settle(record.name, { phase: 'failed', message, finishedAt: at.toISOString() }, this.owner);
      return { ...record, phase: 'failed', message, finishedAt: at.toISOString() };
    }
    const { [PIN]: pinned, ...args } = stored as Record<string, unknown>;
    const { draft, before } = await loadDraft(tx, record);
    const state = asState(draft);
    const plan = planOperation(
      { operation: record.operation as OperationId, parameters: args, userId: record.userId },
      { state, env, ...(pinned ? { pinned: pinned as RolloutSettings } : {}) },
    );
    if (plan.steps.length !== record.steps.length) {
      throw new Upstream(`the sandbox's plan for ${record.operation} changed since this workflow was submitted (pds was upgraded); submit it again`);
    }
    this.plans.set(record.name, plan);
    const first = record.steps[index]?.startedAt === undefined;
    const lines: LogRecord[] = first ? [this.line(plan, record, index, at, `step ${index + 1}/${record.steps.length}: ${record.steps[index]?.name ?? '?'}`)] : [];
    const pushed: Array<{ image: string; digest: string }> = [];
    const ctx = this.context(state, record, plan, index, at, lines, measured, pushed);
    const outcome = plan.steps[index]!.run(ctx) ?? {};
    for (const p of pushed) await tx.images.push(p.image, p.digest, record.name, at);
    const steps: StepProgress[] = record.steps.map((s) => ({ ...s }));
    const startedAt = record.steps[index]?.startedAt ?? at.toISOString();
    const clearCommand = outcome.consumed === true;

    if (outcome.again !== undefined && outcome.fail === undefined) {
      // Not done: a rollout holds its weight. Its changes are kept; it runs again when due (sooner after a command).
      steps[index] = { ...steps[index]!, startedAt };
      await saveTenantDraft(tx, plan.team || record.tenant, before, draft);
      await tx.logs.append(lines);
      const message = outcome.message ?? record.message;
      const dueAt = Date.now() + Math.max(0, outcome.again);
      await tx.workflows.advance(record.name, this.owner, { steps, nextStep: index, message, dueAt, leaseUntil: Date.now() + this.leaseMs, clearCommand });
      return { ...record, steps, message, dueAt };
    }
    const note = outcome.note !== undefined ? { message: outcome.note } : {};
    if (outcome.fail !== undefined) {
      const message = outcome.fail;
      steps[index] = { ...steps[index]!, status: 'failed', startedAt, finishedAt: at.toISOString(), ...note };
      lines.push(this.line(plan, record, index, at, `workflow ${record.name} failed: ${message}`));
      await saveTenantDraft(tx, plan.team || record.tenant, before, draft);
      await tx.logs.append(lines);
      const finishedAt = at.toISOString();
      await tx.workflows.settle(record.name, { phase: 'failed', message, finishedAt, steps }, this.owner);
      return { ...record, steps, phase: 'failed', message, finishedAt };
    }
    steps[index] = { ...steps[index]!, status: 'succeeded', startedAt, finishedAt: at.toISOString(), ...note };
    const nextStep = index + 1;
    if (nextStep === plan.steps.length) {
      const message = plan.done(ctx);
      lines.push(this.line(plan, record, index, at, `workflow ${record.name} succeeded: ${message}`));
      const stored = await saveTenantDraft(tx, plan.team || record.tenant, before, draft);
      await tx.logs.append(lines);
      const finishedAt = at.toISOString();
      await tx.workflows.settle(record.name, { phase: 'succeeded', message, finishedAt, steps, nextStep, ...(stored ? { tenantUid: stored.uid } : {}) }, this.owner);
      return { ...record, steps, nextStep, phase: 'succeeded', message, finishedAt, ...(stored && !record.tenantUid ? { tenantUid: stored.uid } : {}) };
    }
    await saveTenantDraft(tx, plan.team || record.tenant, before, draft);
    await tx.logs.append(lines);
    const message = `step ${nextStep + 1}/${plan.steps.length}: ${plan.steps[nextStep]!.name}`;
    // Due times and leases are on the real clock (timers are real; `now` may be a test's clock for timestamps).
    const dueAt = Date.now() + stepMs;
    await tx.workflows.advance(record.name, this.owner, { steps, nextStep, message, dueAt, leaseUntil: Date.now() + this.leaseMs, clearCommand });
    return { ...record, steps, nextStep, message, dueAt };
  }

  /** Fail the workflow at step `index` (its changes were rolled back) and mark the service it was rolling out Degraded. */
  private async failStep(tx: Records, name: string, index: number, err: unknown): Promise<WorkflowRecord> {
    const at = this.options.now();
    const record = await tx.workflows.hold(name, this.owner, index);
    const message = failureMessage(err, record.steps[index]?.name ?? '?');
    const steps: StepProgress[] = record.steps.map((s) => ({ ...s }));
    if (steps[index]) steps[index] = { ...steps[index]!, status: 'failed', startedAt: at.toISOString(), finishedAt: at.toISOString() };
    const team = record.tenant;
    const app = record.service;
    const lines: LogRecord[] = [];
    const label = { source: 'workflow', workflow: name, step: record.steps[index]?.name ?? '' };
    lines.push({ team, app, timestamp: at.toISOString(), line: `step ${index + 1}/${record.steps.length}: ${record.steps[index]?.name ?? '?'}`, labels: label });
    lines.push({ team, app, timestamp: at.toISOString(), line: `workflow ${name} failed: ${message}`, labels: label });
    if (app) {
      const service = await tx.services.get(team, app);
      if (service && service.activeWorkflow === name) {
        service.syncStatus = 'OutOfSync';
        service.healthStatus = 'Degraded';
        service.message = message;
        delete service.activeWorkflow;
        await tx.services.put(service);
      }
    }
    if (team) await tx.logs.append(lines);
    const finishedAt = at.toISOString();
    await tx.workflows.settle(name, { phase: 'failed', message, finishedAt, steps }, this.owner);
    return { ...record, steps, phase: 'failed', message, finishedAt };
  }

  private changed(run: WorkflowRun, nextStep = run.steps.findIndex((s) => s.status === 'pending' || s.status === 'running')): void {
    if (run.phase === 'submitted') this.told.set(run.name, `${run.phase}:${nextStep}`);
    else this.told.delete(run.name);
    for (const listener of this.changeListeners) {
      try {
        listener(structuredClone(run));
      } catch (err) {
        this.options.log.error({ err, workflow: run.name }, 'sandbox: an onChange listener failed');
      }
    }
  }

  private notify(run: WorkflowRun): void {
    for (const listener of this.listeners) {
      try {
        listener({ ...run });
      } catch (err) {
        this.options.log.error({ err, workflow: run.name }, 'sandbox: an onSettled listener failed');
      }
    }
  }

  private context(
    state: SandboxState,
    run: WorkflowRecord,
    plan: Plan,
    index: number,
    at: Date,
    sink: LogRecord[],
    measured: unknown,
    images: Array<{ image: string; digest: string }>,
  ): StepContext {
    return {
      pushed: (image, digest) => images.push({ image, digest }),
      state,
      run,
      now: at,
      env: this.options.env,
      measured,
      ...(run.rolloutCommand ? { command: run.rolloutCommand } : {}),
      log: (line) => sink.push(this.line(plan, run, index, at, line)),
      event: (team, app, pod, line) => sink.push({ team, app, timestamp: at.toISOString(), line, labels: { source: 'deployment', pod } }),
    };
  }

  private line(plan: Plan, run: WorkflowRecord, index: number, at: Date, line: string): LogRecord {
    return {
      team: plan.team,
      app: plan.app,
      timestamp: at.toISOString(),
      line,
      labels: { source: 'workflow', workflow: run.name, step: run.steps[index]?.name ?? '' },
    };
  }
}

/**
 * The draft of the workflow's tenant, plus (read-only) the services of other tenants whose Application name collides
 * with the workflow's service, for `requireFreeName`.
 */
async function loadDraft(tx: Records, record: WorkflowRecord): Promise<{ draft: TenantDraft; before: TenantDraft }> {
  const loaded = await loadTenantDraft(tx, record.tenant);
  if (record.tenant && record.service) {
    for (const holder of await tx.services.byApplicationName(applicationName(record.tenant, record.service))) {
      const key = serviceKey(holder.team, holder.name);
      if (holder.team === record.tenant || Object.hasOwn(loaded.draft.services, key)) continue;
      loaded.draft.services[key] = holder;
      loaded.before.services[key] = structuredClone(holder);
    }
  }
  return loaded;
}

/** The draft as the steps see it (a tenant a step creates carries the uid the step made). */
function asState(draft: TenantDraft): SandboxState {
  return draft as SandboxState;
}

function isRunning(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Put back the service a cancelled workflow was rolling out (it is the workflow's `activeWorkflow`): removed when the
 * workflow registered it and nothing of it ever ran (an onboarding or a preview), else Synced and Healthy on the tag it
 * runs (the rollout never reached the step that records a new one).
 * @returns what was done, for the log; `undefined` when the workflow was rolling out no service.
 */
async function restoreService(tx: Records, record: WorkflowRecord, userId: string): Promise<string | undefined> {
  const tag = record.parameters.image_tag;
  const names = [record.service, ...(record.operation === 'preview-deploy' && tag ? [previewName(record.service, tag)] : [])];
  const services = await Promise.all(names.map((n) => tx.services.get(record.tenant, n)));
  const service = services.find((s) => s?.activeWorkflow === record.name);
  if (!service) return undefined;
  if (!service.imageTag && service.deployedTags.length === 0) {
    await tx.services.delete(service.team, service.name);
    return `${service.team}/${service.name} was never deployed and is removed`;
  }
  service.syncStatus = 'Synced';
  service.healthStatus = 'Healthy';
  service.message = `${record.operation} ${record.name} cancelled by ${userId}; running ${service.imageTag}`;
  const rollout = service.rollout;
  if (rollout?.workflowName === record.name && (rollout.phase === 'Progressing' || rollout.phase === 'Paused')) {
    // A canary or blue-green release under way goes back to stable, as an abort by hand does.
    service.message = `rolled back: ${rollout.canaryTag} cancelled by ${userId}; all traffic is on ${rollout.stableTag} again`;
    service.rollout = { ...rollout, phase: 'Aborted', canaryWeight: 0, message: service.message };
    delete service.rollout.pausedUntil;
  }
  delete service.activeWorkflow;
  await tx.services.put(service);
  return `${service.team}/${service.name} stays on ${service.imageTag}`;
}

function failureMessage(err: unknown, step: string): string {
  if (isPlatformError(err)) return err.message;
  const detail = err instanceof Error ? err.message : String(err);
  return `step "${step}" failed: ${detail}`;
}

/**
 * The port's view of a workflow record. Steps: the next one is `running` once the workflow has begun (the sandbox
 * waits `stepMs` before each); those left `pending` by a settled workflow are `skipped`; a failed step carries the
 * failure message.
 */
export function toRun(record: WorkflowRecord): WorkflowRun {
  const settled = record.phase !== 'submitted';
  const steps = record.steps.map((step, index): WorkflowStep => {
    const view: WorkflowStep = { name: step.name, status: step.status };
    if (step.status === 'pending') {
      if (settled) view.status = 'skipped';
      else if (index === record.nextStep && (index > 0 || step.startedAt)) view.status = 'running';
    }
    if (step.startedAt) view.startedAt = step.startedAt;
    if (step.finishedAt) view.finishedAt = step.finishedAt;
    if (step.message) view.message = step.message;
    if (step.status === 'failed' && record.phase === 'failed') view.message = record.message;
    return view;
  });
  const run: WorkflowRun = {
    name: record.name,
    operation: record.operation as OperationId,
    phase: record.phase,
    message: record.message,
    startedAt: record.startedAt,
    userId: record.userId,
    parameters: { ...record.parameters },
    steps,
  };
  if (record.finishedAt) run.finishedAt = record.finishedAt;
  if (record.parameters.team_name) run.team = record.parameters.team_name;
  if (record.parameters.component_name) run.service = record.parameters.component_name;
  if (record.tenantUid) run.tenantUid = record.tenantUid;
  if (record.cancelledBy) run.cancelledBy = record.cancelledBy;
  if (record.retryOf) run.retryOf = record.retryOf;
  return run;
}
