/** A workflow followed live through its event stream (`GET /api/v1/workflows/{name}/events`), never by polling. */
import { useEffect, useState } from 'preact/hooks';
import { followWorkflow, type FailedStep, type SettledEvent, type WorkflowStep } from './api.js';
import { Badge, Link, Steps, paths } from './ui.js';

/** What is known of a followed workflow so far. */
export interface LiveState {
  phase: string;
  steps: WorkflowStep[];
  settled: boolean;
  failedStep?: FailedStep;
  host?: string;
  message?: string;
}

/**
 * Follow workflow `name` (when given and not settled yet) and return its state; `onSettled` runs once when it settles.
 */
export function useLiveWorkflow(name: string | undefined, initial: LiveState, onSettled?: (e: SettledEvent) => void): LiveState {
  const [state, setState] = useState<LiveState>(initial);
  useEffect(() => {
    setState(initial);
    if (!name || initial.settled) return;
    return followWorkflow(name, {
      step: (e) =>
        setState((s) => {
          const steps = [...s.steps];
          const at = steps.findIndex((x) => x.name === e.step.name);
          if (at >= 0) steps[at] = e.step;
          else steps.splice(Math.min(e.index, steps.length), 0, e.step);
          return { ...s, phase: e.phase, steps };
        }),
      settled: (e) => {
        setState({ phase: e.phase, steps: e.steps, settled: true, failedStep: e.failedStep, host: e.host, message: e.message });
        onSettled?.(e);
      },
    });
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [name, initial.settled]);
  return state;
}

/** A running (or just settled) workflow: phase, live steps and, once failed, the failed step's log tail. */
export function LiveWorkflow({ name, state, heading = 'h3' }: { name: string; state: LiveState; heading?: 'h2' | 'h3' }) {
  const H = heading;
  return (
    <div class="live" aria-live="polite" data-phase={state.phase}>
      <H>
        <Link href={paths.workflow(name)}>{name}</Link> <Badge value={state.phase} label="workflow" />
      </H>
      {state.settled && state.message && <p class="small">{state.message}</p>}
      <Steps steps={state.steps} failedStep={state.failedStep} label={`steps of ${name}`} />
    </div>
  );
}
