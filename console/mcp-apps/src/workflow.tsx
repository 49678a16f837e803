/**
 * `ui://pds/workflow`: one workflow's steps as they run, until it settles. Opened beside `platform_get_workflow` and
 * every operation tool; it follows the workflow with `platform_get_workflow` and `wait_seconds` through the host (each
 * call answers when the workflow settles or the wait is up), so it never polls in a tight loop.
 */
import { useEffect, useState } from 'preact/hooks';
import { app, callTool, canOpenLinks, ToolFailed, type Workflow, type WorkflowStep } from './host.js';

/** Seconds each follow-up call waits for the workflow to settle before answering with its steps so far. */
export const FOLLOW_WAIT_SECONDS = 5;

const STEP_MARK: Record<WorkflowStep['status'], string> = { pending: '○', running: '◐', succeeded: '✓', failed: '✗', skipped: '–' };

/** The tag an operation ran with, from its parameters, if it names one. */
export function tagOf(parameters: Record<string, string>): string | undefined {
  return parameters.git_tag ?? parameters.target_tag ?? parameters.image_tag;
}

function Steps({ steps }: { steps: WorkflowStep[] }) {
  if (!steps.length) return <p class="muted">No steps reported yet.</p>;
  return (
    <ol class="steps" aria-label="Steps">
      {steps.map((step, i) => (
        <li key={`${step.name}-${i}`} class={`step ${step.status}`} data-status={step.status}>
          <span class="mark" aria-hidden="true">
            {STEP_MARK[step.status]}
          </span>
          <span class="name">{step.name}</span>
          <span class="status">{step.status}</span>
          {step.message && step.status === 'failed' ? <span class="message">{step.message}</span> : null}
        </li>
      ))}
    </ol>
  );
}

/**
 * A workflow followed to its end: renders what it knows, and calls `platform_get_workflow` (first without waiting,
 * then with {@link FOLLOW_WAIT_SECONDS}) until it has settled.
 * @param onSettled called once with the settled workflow.
 */
export function WorkflowFollower({ name, initial, onSettled }: { name: string; initial?: Workflow; onSettled?: (w: Workflow) => void }) {
  const [workflow, setWorkflow] = useState<Workflow | undefined>(initial);
  const [error, setError] = useState<string>();
  const [attempt, setAttempt] = useState(0);

  useEffect(() => {
    let stopped = false;
    setError(undefined);
    (async () => {
      let latest = initial?.workflow === name ? initial : undefined;
      let wait = latest ? FOLLOW_WAIT_SECONDS : 0;
      while (!stopped && !latest?.settled) {
        latest = await callTool<Workflow>('platform_get_workflow', { name, wait_seconds: wait });
        wait = FOLLOW_WAIT_SECONDS;
        if (!stopped) setWorkflow(latest);
      }
      if (!stopped && latest) onSettled?.(latest);
    })().catch((err) => !stopped && setError(err instanceof ToolFailed ? err.message : String(err)));
    return () => {
      stopped = true;
    };
  }, [name, attempt]);

  const phase = workflow?.phase ?? 'submitted';
  const tag = workflow && tagOf(workflow.audit.parameters);
  return (
    <section class="workflow" aria-labelledby={`wf-${name}`}>
      <h2 id={`wf-${name}`}>
        <span class="operation">{workflow?.audit.operation ?? 'Workflow'}</span> <code>{name}</code>
      </h2>
      <p class="summary">
        <span class={`badge ${phase}`} role="status" aria-live="polite" data-testid="phase">
          {phase}
        </span>
        {workflow ? (
          <span class="muted">
            {' '}
            {workflow.audit.parameters.team_name}
            {workflow.audit.parameters.component_name ? `/${workflow.audit.parameters.component_name}` : ''}
            {tag ? ` · ${tag}` : ''} · by {workflow.audit.userId}
          </span>
        ) : null}
      </p>
      {workflow ? <Steps steps={workflow.steps} /> : <p class="muted">Reading the workflow…</p>}
      {workflow?.failedStep ? (
        <div class="failed">
          <h3>
            Failed step: {workflow.failedStep.name}
          </h3>
          <p>{workflow.failedStep.message}</p>
          {workflow.failedStep.logTail.length ? (
            <pre aria-label={`Last log lines of ${workflow.failedStep.name}`} tabIndex={0}>
              {workflow.failedStep.logTail.join('\n')}
            </pre>
          ) : null}
        </div>
      ) : null}
      {workflow?.settled && workflow.host ? (
        <p>
          Service host: <code>{workflow.host}</code>{' '}
          {canOpenLinks() ? (
            <button type="button" onClick={() => void app.openLink({ url: `https://${workflow.host}` })}>
              Open
            </button>
          ) : null}
        </p>
      ) : null}
      {error ? (
        <p class="error" role="alert">
          {error}{' '}
          <button type="button" onClick={() => setAttempt((n) => n + 1)}>
            Try again
          </button>
        </p>
      ) : null}
    </section>
  );
}

/** The workflow view: the workflow the tool call names (its input, then its result), followed to its end. */
export function WorkflowView({ input, result, failure }: { input?: Record<string, unknown>; result?: Record<string, unknown>; failure?: string }) {
  if (failure) {
    return (
      <p class="error" role="alert">
        {failure}
      </p>
    );
  }
  // An operation answers with workflowName; platform_get_workflow with the workflow itself (and was asked by name).
  const name = (result?.workflowName ?? result?.workflow ?? input?.name) as string | undefined;
  if (!name) return <p class="muted">Waiting for the workflow…</p>;
  const initial = result && typeof result.workflow === 'string' && Array.isArray(result.steps) ? (result as unknown as Workflow) : undefined;
  return <WorkflowFollower name={name} initial={initial} />;
}
