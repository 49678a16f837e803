/**
 * The sandbox's {@link WorkflowEngine}: runs each submitted operation's steps (`operations.ts`) in the background, one
 * every `stepMs` milliseconds, and records progress in the durable state after every step.
 *
 * - A step's changes, the workflow's progress and, on the last step or a failure, the workflow's phase and its audit
 *   entry's status are committed in one atomic state write; so after a crash the audit entry never disagrees with the
 *   workflow, and a workflow that was running is resumed from its next step when the sandbox starts again.
 * - A step that throws fails the workflow with the error's message (SPEC "Workflow/audit status": submitted →
 *   succeeded | failed); the service it was rolling out is marked `Degraded` with that message.
 * - Each step writes log lines to the journal: a line naming the step, the step's own lines, deployment events.
 */
import { Conflict, isPlatformError, Unavailable, Upstream } from '../../core/errors.js';
import type { Logger } from '../../core/logger.js';
import type { WorkflowEngine, WorkflowQuery, WorkflowRun, WorkflowStep, WorkflowSubmission } from '../../core/ports.js';
import { appendEntry, visibleRecord } from './audit.js';
import type { JournalLine, LogJournal } from './journal.js';
import { workflowTemplateName } from '../../core/names.js';
import type { OperationId } from '../../core/operations/index.js';
import { planOperation } from './operations.js';
import type { OperationEnv, Plan, StepContext } from './plan.js';
import { own, serviceKey, type SandboxState, type WorkflowRecord } from './state.js';
import { StateWriteError, type StateStore } from './store.js';

export interface EngineOptions {
  store: StateStore;
  journal: LogJournal;
  /** Delay before each step, milliseconds (`PDS_SANDBOX_STEP_MS`); 0 runs steps back to back. */
  stepMs: number;
  now: () => Date;
  env: OperationEnv;
  /** Called after every committed step, e.g. so the preview reaper can re-arm its timer. */
  afterCommit?: () => void;
  log: Logger;
}

/** The in-process workflow engine of the sandbox. Call {@link resumeAll} once after construction. */
export class SandboxWorkflowEngine implements WorkflowEngine {
  private readonly listeners: Array<(run: WorkflowRun) => void> = [];
  private readonly changeListeners = new Set<(run: WorkflowRun) => void>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly inflight = new Set<Promise<void>>();
  private closed = false;

  constructor(private readonly options: EngineOptions) {}

  /**
   * Record the workflow (phase `submitted`, every step pending) and its audit entry in one durable write and start it
   * in the background. The workflow and the entry belong to `submission.tenantUid`, else the live tenant named
   * `team_name` (none for a create-tenant of a new name: it gets the tenant it creates when it settles).
   * @throws Conflict when a workflow or audit entry of that name exists; Unavailable when the sandbox is closing;
   *   Upstream when the state could not be written (then neither the workflow nor its entry is recorded, and nothing
   *   runs).
   */
  async submit(submission: WorkflowSubmission): Promise<void> {
    if (this.closed) throw new Unavailable('the sandbox is shutting down; submit again once it is back');
    const { store, env, now } = this.options;
    const plan = planOperation(submission, { state: store.latest, env });
    try {
      await store.mutate((draft) => {
        if (Object.hasOwn(draft.workflows, submission.name)) throw new Conflict(`workflow ${submission.name} already exists`);
        const tenantUid = submission.tenantUid ?? own(draft.tenants, submission.recorded.team_name ?? '')?.uid;
        appendEntry(draft, { ...submission.audit, workflowName: submission.name }, tenantUid);
        draft.workflows[submission.name] = {
          name: submission.name,
          operation: submission.operation,
          workflowTemplate: workflowTemplateName(submission.operation),
          parameters: { ...submission.recorded },
          arguments: structuredClone(submission.parameters),
          userId: submission.userId,
          ...(tenantUid !== undefined ? { tenantUid } : {}),
          phase: 'submitted',
          message: `queued; step 1/${plan.steps.length}: ${plan.steps[0]?.name ?? ''}`,
          startedAt: now().toISOString(),
          steps: plan.steps.map((step) => ({ name: step.name, status: 'pending' as const })),
          nextStep: 0,
        };
      });
    } catch (err) {
      if (!(err instanceof StateWriteError)) throw err;
      await store
        .mutate((draft) => {
          delete draft.workflows[submission.name];
          draft.audit = draft.audit.filter((e) => e.workflowName !== submission.name);
        })
        .catch(() => undefined);
      throw new Upstream('the sandbox could not record the workflow on disk; nothing was submitted', { cause: err });
    }
    const recorded = own(store.latest.workflows, submission.name);
    if (recorded) this.changed(toRun(recorded));
    this.schedule(submission.name);
  }

  /** The workflow, or `undefined` when no workflow of that name was submitted. */
  async get(name: string): Promise<WorkflowRun | undefined> {
    const record = own(this.options.store.state.workflows, name);
    return record && toRun(record);
  }

  /**
   * The newest `lines` lines the workflow journalled for `step`, oldest first. Its lines are kept with its service's
   * logs, so a workflow without a service (tenant operations), or whose service no longer exists, has none.
   */
  async stepLog(workflow: string, step: string, lines: number): Promise<string[]> {
    const { state } = this.options.store;
    const record = own(state.workflows, workflow);
    const team = record?.parameters.team_name;
    const app = record?.parameters.component_name;
    const limit = Math.max(0, Math.floor(lines));
    if (!team || !app || limit === 0 || !own(state.tenants, team) || !state.services[serviceKey(team, app)]) return [];
    return this.options.journal
      .read(team, app)
      .filter((l) => l.labels.workflow === workflow && (l.labels.step === undefined || l.labels.step === step))
      .slice(-limit)
      .map((l) => l.line);
  }

  /** Workflows newest first (submission order), those `query.visible` allows and the filters select, at most `query.limit`. */
  async list(query: WorkflowQuery): Promise<WorkflowRun[]> {
    const limit = Math.max(0, Math.floor(query.limit));
    const records = Object.values(this.options.store.state.workflows);
    const result: WorkflowRun[] = [];
    for (let i = records.length - 1; i >= 0 && result.length < limit; i--) {
      const record = records[i]!;
      if (query.service !== undefined && record.parameters.component_name !== query.service) continue;
      if (query.operation !== undefined && record.operation !== query.operation) continue;
      if (!visibleRecord(query.visible, { tenant: record.parameters.team_name, tenantUid: record.tenantUid, userId: record.userId }, query.tenant)) continue;
      result.push(toRun(record));
    }
    return result;
  }

  /** `listener` is called once for each workflow that settles from now on (including resumed ones). */
  onSettled(listener: (run: WorkflowRun) => void): void {
    this.listeners.push(listener);
  }

  /** `listener` is called after every recorded submission, step and settlement; the result unregisters it. */
  onChange(listener: (run: WorkflowRun) => void): () => void {
    this.changeListeners.add(listener);
    return () => void this.changeListeners.delete(listener);
  }

  /** Schedule every workflow left `submitted` by a previous process; each continues from its next step. */
  resumeAll(): void {
    for (const record of Object.values(this.options.store.state.workflows)) {
      if (record.phase === 'submitted') this.schedule(record.name);
    }
  }

  /** Stop scheduling steps and wait for the step in progress, if any, to commit. */
  async close(): Promise<void> {
    this.closed = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    await Promise.all([...this.inflight]);
  }

  private schedule(name: string): void {
    if (this.closed) return;
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      const step = this.advance(name)
        .catch((err: unknown) => this.options.log.error({ err, workflow: name }, 'sandbox: unexpected error running a workflow step'))
        .finally(() => this.inflight.delete(step));
      this.inflight.add(step);
    }, this.options.stepMs);
    this.timers.add(timer);
  }

  /**
   * Run the next step of `name` and commit it, or fail the workflow; then schedule the next step or notify. The step's
   * log lines are made readable in the same turn as its state change, so a settled workflow's lines are all there.
   */
  private async advance(name: string): Promise<void> {
    if (this.closed) return;
    const { store, journal, env, now } = this.options;
    const record = own(store.latest.workflows, name);
    if (!record || record.phase !== 'submitted') return;

    if (record.arguments === undefined) {
      await this.failUnresumable(name);
      return;
    }
    const plan = planOperation(
      { operation: record.operation as OperationId, parameters: record.arguments, userId: record.userId },
      { state: store.latest, env },
    );
    const index = record.nextStep;
    const at = now();
    const header = this.line(plan, record, index, at, `step ${index + 1}/${record.steps.length}: ${record.steps[index]?.name ?? '?'}`);
    let appended: Promise<void> = Promise.resolve();

    try {
      if (plan.steps.length !== record.steps.length) {
        throw new Upstream(
          `the sandbox's plan for ${record.operation} changed since this workflow was submitted (pds was upgraded); submit it again`,
        );
      }
      await store.mutate((draft) => {
        const run = own(draft.workflows, name);
        if (!run || run.phase !== 'submitted' || run.nextStep !== index) return;
        const lines: JournalLine[] = [header];
        const ctx = this.context(draft, run, plan, index, at, lines);
        plan.steps[index]!.run(ctx);
        run.steps[index] = { ...run.steps[index]!, status: 'succeeded', startedAt: at.toISOString(), finishedAt: at.toISOString() };
        run.nextStep = index + 1;
        if (run.nextStep === plan.steps.length) {
          const message = plan.done(ctx);
          settle(draft, run, 'succeeded', message, at);
          lines.push(this.line(plan, run, index, at, `workflow ${name} succeeded: ${message}`));
        } else {
          run.message = `step ${run.nextStep + 1}/${plan.steps.length}: ${plan.steps[run.nextStep]!.name}`;
        }
        appended = journal.append(lines); // last: nothing after it may throw
      });
    } catch (err) {
      if (err instanceof StateWriteError) {
        // The step is committed in memory; the next successful write persists it. Keep going.
        this.options.log.warn({ err, workflow: name }, 'sandbox: a workflow step is committed in memory but not yet on disk; the next write retries');
      } else {
        const message = failureMessage(err, record.steps[index]?.name ?? '?');
        await store
          .mutate((draft) => {
            const run = own(draft.workflows, name);
            if (!run || run.phase !== 'submitted') return;
            if (run.steps[index]) run.steps[index] = { ...run.steps[index]!, status: 'failed', startedAt: at.toISOString(), finishedAt: at.toISOString() };
            settle(draft, run, 'failed', message, at);
            markDegraded(draft, plan, name, message);
            appended = journal.append([header, this.line(plan, run, index, at, `workflow ${name} failed: ${message}`)]);
          })
          .catch((writeErr: unknown) => this.options.log.error({ err: writeErr, workflow: name }, 'sandbox: could not record a workflow failure'));
      }
    }

    this.options.afterCommit?.();
    await appended.catch((err: unknown) => this.options.log.error({ err, workflow: name }, 'sandbox: could not append log lines'));

    const after = own(store.latest.workflows, name);
    if (after) this.changed(toRun(after));
    if (after && after.phase !== 'submitted') this.notify(toRun(after));
    else this.schedule(name);
  }

  /**
   * A workflow left running by a pds that did not keep its typed arguments (written before they were recorded apart
   * from the redacted parameters) cannot be resumed faithfully: fail it, saying so, rather than guess.
   */
  private async failUnresumable(name: string): Promise<void> {
    const at = this.options.now();
    await this.options.store.mutate((draft) => {
      const run = draft.workflows[name];
      if (!run || run.phase !== 'submitted') return;
      settle(draft, run, 'failed', 'this workflow was submitted by an older pds and cannot be resumed; submit it again', at);
    });
    const after = own(this.options.store.latest.workflows, name);
    if (after) this.changed(toRun(after));
    if (after) this.notify(toRun(after));
  }

  private changed(run: WorkflowRun): void {
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

  private context(draft: SandboxState, run: WorkflowRecord, plan: Plan, index: number, at: Date, sink: JournalLine[]): StepContext {
    return {
      state: draft,
      run,
      now: at,
      env: this.options.env,
      log: (line) => sink.push(this.line(plan, run, index, at, line)),
      event: (team, app, pod, line) =>
        sink.push({ team, app, timestamp: at.toISOString(), line, labels: { source: 'deployment', pod } }),
    };
  }

  private line(plan: Plan, run: WorkflowRecord, index: number, at: Date, line: string): JournalLine {
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
 * Settle the workflow and, in the same draft, its audit entry (if it was appended already). A workflow that had no
 * tenant (create-tenant) belongs to the live tenant of its `team_name` from now on, and so does its entry.
 */
export function settle(draft: SandboxState, run: WorkflowRecord, phase: 'succeeded' | 'failed', message: string, at: Date): void {
  run.phase = phase;
  run.message = message;
  run.finishedAt = at.toISOString();
  // The typed arguments may hold secret values (env_vars); a settled workflow needs them no more.
  delete run.arguments;
  const tenantUid = run.tenantUid ?? own(draft.tenants, run.parameters.team_name ?? '')?.uid;
  if (tenantUid !== undefined) run.tenantUid = tenantUid;
  for (let i = draft.audit.length - 1; i >= 0; i--) {
    const entry = draft.audit[i]!;
    if (entry.workflowName === run.name) {
      entry.status = phase;
      entry.message = message;
      if (entry.tenantUid === undefined && tenantUid !== undefined) entry.tenantUid = tenantUid;
      break;
    }
  }
}

/** A failed rollout leaves its service Degraded with the failure message, unless another workflow took it over. */
function markDegraded(draft: SandboxState, plan: Plan, workflow: string, message: string): void {
  if (!plan.app) return;
  const service = draft.services[serviceKey(plan.team, plan.app)];
  if (!service || service.activeWorkflow !== workflow) return;
  service.syncStatus = 'OutOfSync';
  service.healthStatus = 'Degraded';
  service.message = message;
  delete service.activeWorkflow;
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
      else if (index === record.nextStep && index > 0) view.status = 'running';
    }
    if (step.startedAt) view.startedAt = step.startedAt;
    if (step.finishedAt) view.finishedAt = step.finishedAt;
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
  return run;
}
