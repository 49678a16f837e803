/**
 * A workflow as callers follow it (issue 11 items 2 and 3): its steps as data, a `running` phase beside the contract's
 * audit vocabulary (the audit entry keeps `submitted`/`succeeded`/`failed`), whether it has settled, and — once it
 * has — the service host and, on failure, the failed step with a bounded tail of its log. Also the wait behind
 * `wait_seconds`: answer when the workflow settles, when the time is up, when the caller goes away or when pds shuts
 * down, reporting each step as MCP progress to a caller that asked for it.
 */
import { z } from 'zod';
import { PlatformError } from '../core/errors.js';
import { previewName, serviceHost } from '../core/names.js';
import { waitingMessage } from '../core/governance/approvals.js';
import { WorkflowStep } from '../core/model.js';
import type { Platform, WorkflowEngine, WorkflowRun } from '../core/ports.js';
import type { CallInteraction } from './interaction.js';

/** Longest `wait_seconds` a call may ask for. */
export const MAX_WAIT_SECONDS = 45;
/** Pause after the last progress report before the answer, milliseconds (see {@link progressReporter}). */
const SETTLED_PROGRESS_GAP_MS = 25;
/** Most log lines of a failed step an answer carries. */
export const LOG_TAIL_LINES = 20;

/** The `wait_seconds` input of operation tools and `platform_get_workflow`; over REST the `?wait_seconds=` query. */
export const WaitSeconds = z.coerce
  .number({ message: `must be a whole number of seconds 0-${MAX_WAIT_SECONDS}, e.g. 30` })
  .int(`must be a whole number of seconds 0-${MAX_WAIT_SECONDS}, e.g. 30`)
  .min(0, 'must be at least 0')
  .max(MAX_WAIT_SECONDS, `must be at most ${MAX_WAIT_SECONDS}`)
  .optional()
  .describe('Seconds to wait for the outcome');

/**
 * Phases of the workflow view: the contract's three (`docs/api.md#workflow-and-audit-status`), with `running` once a
 * step has started and `awaiting-approval` while it waits for approval (issue 20 item 2; its audit status stays
 * `submitted`).
 */
export const WorkflowPhase = z.enum(['submitted', 'awaiting-approval', 'running', 'succeeded', 'failed']);
export type WorkflowPhase = z.infer<typeof WorkflowPhase>;


/** The failed step of a failed workflow: its name, message and the last lines of its log. */
export const FailedStep = z.object({
  name: z.string(),
  message: z.string(),
  logTail: z.array(z.string()).describe(`At most ${LOG_TAIL_LINES} of the step's last log lines`),
});
export type FailedStep = z.infer<typeof FailedStep>;

/** What a wait answers with, beside a tool's own result. */
export const WaitOutcome = z.object({
  phase: WorkflowPhase,
  settled: z.boolean().describe('false: still running when the wait ended; call again to keep waiting'),
  host: z.string().optional().describe('The service host, once settled'),
  failedStep: FailedStep.optional(),
});
export type WaitOutcome = z.infer<typeof WaitOutcome>;

/** `awaiting-approval` while its approval is pending, `running` once any step has started or finished, else the run's own phase. */
export function viewPhase(run: Pick<WorkflowRun, 'phase' | 'steps' | 'approval'>): WorkflowPhase {
  if (run.phase !== 'submitted') return run.phase;
  if (run.approval?.state === 'pending') return 'awaiting-approval';
  return run.steps.some((s) => s.status !== 'pending') ? 'running' : 'submitted';
}

/**
 * The step a run is at (the last running one — on Kubernetes a canary step runs within `wait-rollout` — else the first
 * pending one) and its 1-based number, for progress.
 */
export function currentStep(run: WorkflowRun): { number: number; total: number; name: string } | undefined {
  const total = run.steps.length;
  const index = run.steps.map((s) => s.status).lastIndexOf('running');
  const at = index >= 0 ? index : run.steps.findIndex((s) => s.status === 'pending');
  return at >= 0 ? { number: at + 1, total, name: run.steps[at]!.name } : undefined;
}

/**
 * A progress report for a run (MCP `notifications/progress`): the number of finished steps, the step count, and
 * "step 3/9: build image" (or the outcome).
 */
export function progressOf(run: Pick<WorkflowRun, 'phase' | 'steps' | 'message' | 'approval'>): { progress: number; total?: number; message: string } {
  const done = run.steps.filter((s) => s.status === 'succeeded' || s.status === 'failed' || s.status === 'skipped').length;
  const total = run.steps.length || undefined;
  if (run.phase !== 'submitted') return { progress: total ?? 1, total: total ?? 1, message: `${run.phase}${run.message ? `: ${run.message}` : ''}` };
  // Each approval moves it on (a value that grows, as MCP progress must); the steps come after.
  if (run.approval?.state === 'pending') return { progress: 0, total, message: waitingMessage(run.approval) };
  const step = currentStep(run as WorkflowRun);
  return { progress: done, total, message: step ? `step ${step.number}/${step.total}: ${step.name}` : run.message || 'queued' };
}

/**
 * A function that sends a run's progress (MCP `notifications/progress`) to a caller that asked for it: once per change
 * of step, with a value that always grows (a new message at the same count is sent with a small bump), as MCP
 * requires. A no-op without `interaction.wantsProgress`.
 */
export function progressReporter(
  interaction: CallInteraction | undefined,
): (run: Pick<WorkflowRun, 'phase' | 'steps' | 'message' | 'approval'>) => Promise<void> {
  let reported = -1;
  let reportedMessage = '';
  return async (run) => {
    if (!interaction?.wantsProgress) return;
    const { progress, total, message } = progressOf(run);
    const value = progress > reported ? progress : message !== reportedMessage ? reported + 0.001 : undefined;
    if (value === undefined) return;
    reported = value;
    reportedMessage = message;
    // A notification that cannot be sent (the caller went away) is no reason to fail the call.
    await interaction.progress(value, total, message).catch(() => undefined);
    // The last report goes out a moment before the answer: clients (the v1 SDK's Protocol) handle a notification a
    // microtask after a response read with it, and drop progress for a request already answered.
    if (run.phase !== 'submitted') await new Promise((resolve) => setTimeout(resolve, SETTLED_PROGRESS_GAP_MS));
  };
}

/**
 * The settled details of a run: the host of the service it acted on (when that service exists now — a retired one
 * has none) and, for a failed run, its failed step with the last {@link LOG_TAIL_LINES} lines of that step's log as the
 * engine keeps it ({@link WorkflowEngine.stepLog}). Sources that cannot be read leave their part out.
 */
export async function settledDetails(platform: Platform, domain: string, run: WorkflowRun): Promise<Pick<WaitOutcome, 'host' | 'failedStep'>> {
  const out: Pick<WaitOutcome, 'host' | 'failedStep'> = {};
  if (run.phase === 'submitted') return out;
  if (run.team && run.service) {
    const app = run.operation === 'preview-deploy' && run.parameters.image_tag ? previewName(run.service, run.parameters.image_tag) : run.service;
    const service = await platform.backend.getService(run.team, app).catch(() => undefined);
    if (service) out.host = service.host || serviceHost(run.team, app, domain);
  }
  if (run.phase !== 'failed') return out;
  const step = run.steps.find((s) => s.status === 'failed');
  const name = step?.name ?? 'unknown step';
  let logTail: string[] = [];
  if (step) {
    try {
      logTail = ((await platform.workflows.stepLog?.(run.name, step.name, LOG_TAIL_LINES)) ?? []).slice(-LOG_TAIL_LINES);
    } catch (err) {
      if (!(err instanceof PlatformError)) throw err;
    }
  }
  out.failedStep = { name, message: step?.message ?? run.message, logTail };
  return out;
}

/**
 * Wait until workflow `name` settles, at most `seconds`, and return its latest state (`undefined` when the engine does
 * not know it). Answers at once when `seconds` is 0 or the run has settled, and early — with the state it has — when
 * the caller goes away (`interaction.signal`) or pds shuts down (`platform.shutdown`). While waiting, each change of
 * step is sent as progress to a caller that asked for it (`interaction.wantsProgress`).
 */
export async function waitForWorkflow(
  platform: Platform,
  name: string,
  seconds: number | undefined,
  interaction?: CallInteraction,
): Promise<WorkflowRun | undefined> {
  const first = await platform.workflows.get(name);
  if (!first || first.phase !== 'submitted' || !seconds || platform.shutdown.aborted || interaction?.signal.aborted) return first;
  let latest = first;
  const report = progressReporter(interaction);
  let sending = report(first);
  return new Promise<WorkflowRun>((resolve) => {
    const signals = [platform.shutdown, interaction?.signal].filter((s): s is AbortSignal => s !== undefined);
    const finish = () => {
      clearTimeout(timer);
      unsubscribe();
      for (const signal of signals) signal.removeEventListener('abort', finish);
      // Notifications already under way go out before the answer (a client drops progress that follows its result).
      void sending.then(() => resolve(latest));
    };
    const timer = setTimeout(finish, seconds * 1000);
    const unsubscribe = platform.workflows.onChange((run) => {
      if (run.name !== name) return;
      latest = run;
      sending = sending.then(() => report(run));
      if (run.phase !== 'submitted') finish();
    });
    for (const signal of signals) signal.addEventListener('abort', finish, { once: true });
    // It may have settled between the first read and the subscription.
    platform.workflows.get(name).then(
      (run) => {
        if (run && run.phase !== 'submitted') {
          latest = run;
          finish();
        }
      },
      () => undefined,
    );
  });
}

/**
 * The outcome part of an answer for `run`: its view phase, whether it settled, and the settled details.
 */
export async function waitOutcome(platform: Platform, domain: string, run: WorkflowRun): Promise<WaitOutcome> {
  return { phase: viewPhase(run), settled: run.phase !== 'submitted', ...(await settledDetails(platform, domain, run)) };
}

/** A step of a workflow changed: started, or finished (succeeded, failed, skipped). */
export const WorkflowStepEvent = z.object({
  workflow: z.string().describe('e.g. "deploy-service-x7k2p"'),
  phase: WorkflowPhase.describe('The workflow\'s phase after this change'),
  index: z.number().int().min(0).describe('0-based position of the step among those known now'),
  total: z.number().int().min(1).describe('Steps known now (on Kubernetes, steps are listed as they start, so this grows)'),
  step: WorkflowStep,
});
export type WorkflowStepEvent = z.infer<typeof WorkflowStepEvent>;

/** The workflow settled (or, `settled: false`, the engine no longer has it and the audit entry is all there is). */
export const WorkflowSettledEvent = WaitOutcome.extend({
  settled: z.boolean().describe('true; false only when the engine no longer has the workflow and the audit entry is the record'),
  workflow: z.string(),
  message: z.string().describe('The outcome as the workflow engine reports it'),
  steps: z.array(WorkflowStep),
});
export type WorkflowSettledEvent = z.infer<typeof WorkflowSettledEvent>;

/** The data of one event of `GET /api/v1/workflows/{name}/events`. */
export const WorkflowEvent = z.union([WorkflowStepEvent, WorkflowSettledEvent]);
export type WorkflowEvent = z.infer<typeof WorkflowEvent>;

/** Order of step statuses: a step event is sent only when a step moves forward, never for a stale read. */
const STEP_RANK: Record<z.infer<typeof WorkflowStep>['status'], number> = { pending: 0, running: 1, succeeded: 2, failed: 2, skipped: 2 };

/**
 * The events of workflow `name` from now until it settles: first a `step` event for each step that has already
 * started or finished (so a late follower sees them too), then one per step change as the engine reports it
 * ({@link WorkflowEngine.onChange}), each once per step (by name) and status, and last one `settled` event. Ends early, without `settled`, when
 * `signal` aborts (the caller went away) or pds shuts down.
 * @param settle called with the settled run before the `settled` event (to settle a missed audit entry).
 * @param gone the `settled` event to send when the engine does not know the workflow.
 */
export async function* workflowEvents(
  platform: Platform,
  domain: string,
  name: string,
  signal: AbortSignal,
  settle: (run: WorkflowRun) => Promise<void>,
  gone: () => WorkflowSettledEvent,
): AsyncGenerator<{ event: 'step'; data: WorkflowStepEvent } | { event: 'settled'; data: WorkflowSettledEvent }> {
  const queue: WorkflowRun[] = [];
  let wake: (() => void) | undefined;
  const poke = () => {
    wake?.();
    wake = undefined;
  };
  // Subscribe before the first read, so no change falls between them; stale reads are filtered by STEP_RANK.
  const unsubscribe = platform.workflows.onChange((run) => {
    if (run.name !== name) return;
    queue.push(run);
    poke();
  });
  const stops = [signal, platform.shutdown];
  for (const stop of stops) stop.addEventListener('abort', poke);
  try {
    const first = await platform.workflows.get(name);
    if (!first) {
      yield { event: 'settled', data: gone() };
      return;
    }
    queue.unshift(first);
    // By name, not position: Argo lists steps as they start, so a step's position can change between reads.
    const seen = new Map<string, number>();
    for (;;) {
      while (queue.length > 0) {
        const run = queue.shift()!;
        const phase = viewPhase(run);
        const occurrences = new Map<string, number>();
        for (const [index, step] of run.steps.entries()) {
          const n = (occurrences.get(step.name) ?? 0) + 1;
          occurrences.set(step.name, n);
          const key = `${step.name}#${n}`;
          if (STEP_RANK[step.status] <= (seen.get(key) ?? 0)) continue;
          seen.set(key, STEP_RANK[step.status]);
          yield { event: 'step', data: { workflow: name, phase, index, total: run.steps.length, step } };
        }
        if (run.phase !== 'submitted') {
          await settle(run);
          const outcome = await waitOutcome(platform, domain, run);
          yield { event: 'settled', data: { ...outcome, workflow: name, message: run.message, steps: run.steps } };
          return;
        }
      }
      if (stops.some((stop) => stop.aborted)) return;
      await new Promise<void>((resolve) => (wake = resolve));
    }
  } finally {
    unsubscribe();
    for (const stop of stops) stop.removeEventListener('abort', poke);
  }
}
