/**
 * `pds wait WORKFLOW [--timeout 30m]`: follow a workflow until it settles, on its event stream
 * (`GET /api/v1/workflows/{name}/events`, issue 19 item 1). Each step prints once, as it finishes, with its duration
 * and a coloured outcome (on stderr; a spinner names the running step on a terminal). Colour only when stdout and
 * stderr are terminals and `NO_COLOR` is unset. With `-o json` or `-o yaml` (the default when piped) the workflow as
 * `GET /api/v1/workflows/{name}` answers it is printed at the end. Exit 0 when it succeeded, 1 when it failed (with
 * the failed step and its log tail) or on any error, 4 when the timeout came first, 130 on Ctrl-C (the workflow runs
 * on; only the waiting stops).
 */
import { styleText } from 'node:util';
import ora, { type Ora } from 'ora';
import type { WorkflowStep } from '../../core/model.js';
import { waitingMessage } from '../../core/governance/approvals.js';
import { getWorkflow } from '../../tools/workflows.js';
import { clientOf } from '../client/api.js';
import { apiCommand, contextOf } from '../client/command.js';
import { CliError, EXIT, usageError } from '../client/errors.js';
import { readEvents } from '../client/events.js';
import { forPeople, print, type Format } from '../client/output.js';
import type { Session } from '../client/session.js';

/** Exit code after Ctrl-C: 128 + SIGINT, as shells report an interrupted command. */
export const EXIT_INTERRUPTED = 130;
/** Pause before following again when the server closed the stream without a settlement (e.g. it restarted), ms. */
const RECONNECT_MS = 500;

/** A step as the events carry it (`core/model.ts`). */
type Step = WorkflowStep;

/** The data of a `step` event. */
interface StepEvent {
  index: number;
  total: number;
  step: Step;
}

/** The data of the `settled` event. */
interface SettledEvent {
  workflow: string;
  phase: string;
  settled: boolean;
  message: string;
  steps: Step[];
  host?: string;
  failedStep?: { name: string; message: string; logTail: string[] };
}

/** `30m` → 1800; units s, m, h. @throws CliError (usage) for anything else. */
export function timeoutSeconds(text: string): number {
  const m = /^([1-9]\d{0,5})([smh])$/.exec(text);
  if (!m) throw usageError(`--timeout must be a duration like 90s, 30m or 2h (got "${text}")`);
  return Number(m[1]) * { s: 1, m: 60, h: 3600 }[m[2] as 's' | 'm' | 'h'];
}

/** Colour for people (https://no-color.org): only when stdout and stderr are terminals and `NO_COLOR` is empty. */
export function colourEnabled(env: NodeJS.ProcessEnv = process.env): boolean {
  return Boolean(process.stdout.isTTY && process.stderr.isTTY && !env.NO_COLOR);
}

/** A duration for people: `850ms`, `4.2s`, `3m 05s`. */
export function duration(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))}ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)}s`;
  const s = Math.round(ms / 1000);
  return `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, '0')}s`;
}

/** How a step or workflow outcome is shown: its mark and colour. */
const OUTCOME = {
  succeeded: { mark: '✔', colour: 'green' },
  failed: { mark: '✖', colour: 'red' },
  skipped: { mark: '-', colour: 'yellow' },
} as const;

/** The lines of one wait on stderr: step lines, the spinner between them, and nothing else. */
class Progress {
  private readonly spinner: Ora | undefined;
  private readonly started = Date.now();
  /** `name:status` of the lines already printed, so a replayed step (after a reconnect) prints nothing. */
  private readonly shown = new Set<string>();

  constructor(
    private readonly name: string,
    private readonly colour: boolean,
  ) {
    // discardStdin off: ora's default puts the terminal in raw mode, where Ctrl-C is a byte instead of SIGINT.
    // A terminal that reports 0 columns (a pseudo-terminal nobody sized) gets no spinner: ora would clear
    // Infinity lines per frame.
    const spinner = ora({
      text: `waiting for ${name}`,
      stream: process.stderr,
      discardStdin: false,
      color: colour ? 'cyan' : false,
      isEnabled: Boolean(process.stderr.isTTY && process.stderr.columns),
    });
    this.spinner = spinner.isEnabled ? spinner.start() : undefined;
  }

  paint(colour: 'green' | 'red' | 'yellow' | 'cyan' | 'dim', text: string): string {
    return this.colour ? styleText(colour, text) : text;
  }

  /** A line above the spinner. */
  line(text: string): void {
    if (this.spinner?.isSpinning) {
      this.spinner.clear();
      process.stderr.write(`${text}\n`);
      this.spinner.render();
    } else {
      process.stderr.write(`${text}\n`);
    }
  }

  step({ index, total, step }: StepEvent): void {
    const label = `step ${index + 1}/${total} ${step.name}`;
    if (step.status === 'running' || step.status === 'pending') {
      if (this.spinner) this.spinner.text = label;
      return;
    }
    const key = `${step.name}:${step.status}`;
    if (this.shown.has(key)) return;
    this.shown.add(key);
    const { mark, colour } = OUTCOME[step.status];
    const took = step.startedAt && step.finishedAt ? Date.parse(step.finishedAt) - Date.parse(step.startedAt) : undefined;
    const detail = step.status === 'skipped' ? ' (skipped)' : took !== undefined && !Number.isNaN(took) ? ` ${this.paint('dim', duration(took))}` : '';
    this.line(`${this.paint(colour, mark)} ${label}${detail}`);
    if (this.spinner) this.spinner.text = `waiting for ${this.name}`;
  }

  /** The outcome line; `phase` coloured. */
  outcome(phase: 'succeeded' | 'failed', rest: string): void {
    this.stop();
    const { colour } = OUTCOME[phase];
    process.stderr.write(`${this.name} ${this.paint(colour, phase)} after ${duration(Date.now() - this.started)}${rest}\n`);
  }

  /** Clear the spinner (and show the cursor again); safe to call twice. */
  stop(): void {
    this.spinner?.stop();
  }
}

/**
 * Follow workflow `name` until it settles, `deadline` passes or `signal` aborts.
 * @returns the settled event, or `undefined` when time ran out or `signal` aborted.
 * @throws PlatformError/CliError as {@link readEvents} does.
 */
async function follow(session: Session, name: string, progress: Progress, deadline: number, signal: AbortSignal): Promise<SettledEvent | undefined> {
  const path = `/api/v1/workflows/${encodeURIComponent(name)}/events`;
  let settled: SettledEvent | undefined;
  let failure: CliError | undefined;
  const timeout = AbortSignal.timeout(Math.max(0, deadline - Date.now()));
  const stop = AbortSignal.any([signal, timeout]);
  while (!settled && !stop.aborted) {
    const closed = await readEvents(
      session,
      path,
      (message) => {
        const data = JSON.parse(message.data) as unknown;
        if (message.event === 'step') progress.step(data as StepEvent);
        else if (message.event === 'settled') settled = data as SettledEvent;
        else if (message.event === 'error') failure = new CliError(`following ${name}: ${(data as { error: string }).error}`);
      },
      { signal: stop },
    );
    if (failure) throw failure;
    // Closed without a settlement (pds restarting): follow again; the steps so far are replayed and not reprinted.
    if (closed && !settled) await new Promise((resolve) => setTimeout(resolve, RECONNECT_MS));
  }
  return settled;
}

/**
 * Follow workflow `name` as `pds wait` does: step lines on stderr as they happen, the workflow document on stdout for
 * `-o json|yaml`, the outcome line. Used by `pds wait` and by every command's `--wait`.
 * @param timeout a duration such as `30m` (see {@link timeoutSeconds}).
 * @returns when the workflow succeeded.
 * @throws CliError with exit 1 when it failed (the failed step and its log tail), 4 when `timeout` passed first,
 *   130 on Ctrl-C (the workflow runs on); PlatformError/CliError for a refusal or a lost server.
 */
export async function waitForWorkflow(session: Session, format: Format, name: string, timeout: string): Promise<void> {
  const limit = timeoutSeconds(timeout);
  const progress = new Progress(name, colourEnabled());
  const interrupted = new AbortController();
  const onInterrupt = () => interrupted.abort();
  process.once('SIGINT', onInterrupt);
  let settled: SettledEvent | undefined;
  try {
    // A workflow held for approval has no steps to show yet: say what it waits for (issue 20 item 2).
    const first = await clientOf(session).call(getWorkflow, { name }).catch(() => undefined);
    if (first?.phase === 'awaiting-approval' && first.approval) {
      progress.line(`${waitingMessage(first.approval)}; an approver decides with: pds approvals approve ${first.approval.id}`);
    }
    settled = await follow(session, name, progress, Date.now() + limit * 1000, interrupted.signal);
  } finally {
    progress.stop();
    process.removeListener('SIGINT', onInterrupt);
  }
  if (interrupted.signal.aborted) {
    throw new CliError(`stopped waiting; ${name} is still running on the server. Follow it again with: pds wait ${name}`, EXIT_INTERRUPTED);
  }
  // Scripts (-o json|yaml) get the API's own document of the workflow; people have had the step lines.
  if (!forPeople(format)) print(format, await clientOf(session).call(getWorkflow, { name }), () => ({ head: [], rows: [] }));
  if (!settled) throw new CliError(`${name} is still running after ${timeout}; wait again with: pds wait ${name}`, EXIT.timedOut);
  if (settled.phase === 'failed') {
    const step = settled.failedStep;
    const tail = step?.logTail.length ? `\n${step.logTail.map((l) => `  ${l}`).join('\n')}` : '';
    throw new CliError(`${name} failed${step ? ` at ${step.name}` : ''}: ${settled.message || step?.message}${tail}`);
  }
  progress.outcome('succeeded', settled.host ? `: https://${settled.host}` : '');
}

export function waitCommand() {
  return apiCommand('wait', 'wait for a workflow, showing its steps; exit 0 if it succeeded')
    .argument('<workflow>', 'the workflow name a deploy printed, e.g. deploy-service-x7k2p')
    .option('--timeout <duration>', 'give up after this long (exit 4), e.g. 10m', '30m')
    .action(async (name: string, o: { timeout: string }, command) => {
      timeoutSeconds(o.timeout);
      const { session, format } = await contextOf(command);
      await waitForWorkflow(session, format, name, o.timeout);
    });
}
