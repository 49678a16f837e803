/** The console's small kit: navigation, data loading, badges, times, tables, step timelines and the confirm dialog. */
import type { ComponentChildren, JSX } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, type FailedStep, type WorkflowStep } from './api.js';

/** Listeners of client-side navigation. */
const listeners = new Set<() => void>();

/** Go to `href` inside the console without reloading the page. */
export function navigate(href: string, replace = false): void {
  if (replace) history.replaceState(null, '', href);
  else history.pushState(null, '', href);
  for (const l of listeners) l();
  window.scrollTo(0, 0);
}

/** The current path, re-rendering on navigation and on the browser's back and forward. */
export function usePath(): string {
  const [path, setPath] = useState(location.pathname);
  useEffect(() => {
    const update = () => setPath(location.pathname);
    listeners.add(update);
    addEventListener('popstate', update);
    return () => {
      listeners.delete(update);
      removeEventListener('popstate', update);
    };
  }, []);
  return path;
}

/** A link handled inside the console (a modified click still opens a new tab as usual). */
export function Link(props: { href: string; children: ComponentChildren; class?: string; 'aria-current'?: 'page' }) {
  const onClick = (e: MouseEvent) => {
    if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    e.preventDefault();
    navigate(props.href);
  };
  return (
    <a href={props.href} class={props.class} onClick={onClick} aria-current={props['aria-current']}>
      {props.children}
    </a>
  );
}

/** The paths of the console's pages. */
export const paths = {
  overview: '/',
  service: (team: string, app: string) => `/console/services/${encodeURIComponent(team)}/${encodeURIComponent(app)}`,
  workflow: (name: string) => `/console/workflows/${encodeURIComponent(name)}`,
  tenant: (name: string) => `/console/tenants/${encodeURIComponent(name)}`,
  approvals: '/console/approvals',
  audit: '/console/audit',
};

/** Data loaded by `load`, again whenever `deps` change or `reload()` is called. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): { data?: T; error?: Error; loading: boolean; reload: () => void } {
  const [state, setState] = useState<{ data?: T; error?: Error; loading: boolean }>({ loading: true });
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    setState((s) => ({ ...s, loading: true }));
    load().then(
      (data) => live && setState({ data, loading: false }),
      (error: Error) => live && setState({ error, loading: false }),
    );
    return () => {
      live = false;
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { ...state, reload };
}

/** What a failed load says, as an alert. */
export function Problem({ error }: { error?: Error }) {
  if (!error) return null;
  const code = error instanceof ApiError && error.code ? ` (${error.code})` : '';
  return (
    <p class="problem" role="alert">
      {error.message}
      {code}
    </p>
  );
}

/** A placeholder while loading, announced politely. */
export function Loading({ what }: { what: string }) {
  return (
    <p class="muted" aria-live="polite">
      Loading {what}…
    </p>
  );
}

const TONES: Record<string, string> = {
  Synced: 'good',
  Healthy: 'good',
  succeeded: 'good',
  approved: 'good',
  delivered: 'good',
  OutOfSync: 'warn',
  Progressing: 'warn',
  running: 'warn',
  submitted: 'warn',
  pending: 'warn',
  'awaiting-approval': 'warn',
  Suspended: 'warn',
  Degraded: 'bad',
  Missing: 'bad',
  failed: 'bad',
  rejected: 'bad',
  expired: 'bad',
};

/** A state as text with a colour that repeats it (never colour alone). */
export function Badge({ value, label }: { value: string; label?: string }) {
  return (
    <span class={`badge ${TONES[value] ?? 'plain'}`}>
      {label ? <span class="visually-hidden">{label}: </span> : null}
      {value}
    </span>
  );
}

/** `iso` as "5 min ago" with the exact UTC time on hover and for assistive technology. */
export function Time({ iso }: { iso?: string }) {
  if (!iso) return <span class="muted">—</span>;
  const seconds = Math.round((Date.now() - Date.parse(iso)) / 1000);
  const ahead = seconds < 0;
  const s = Math.abs(seconds);
  const text = s < 60 ? `${s} s` : s < 3600 ? `${Math.round(s / 60)} min` : s < 86400 ? `${Math.round(s / 3600)} h` : `${Math.round(s / 86400)} d`;
  return (
    <time dateTime={iso} title={iso}>
      {ahead ? `in ${text}` : `${text} ago`}
    </time>
  );
}

/** The seconds between two times, as "1 min 5 s". */
export function duration(from: string, to?: string): string {
  if (!to) return '—';
  const s = Math.max(0, Math.round((Date.parse(to) - Date.parse(from)) / 1000));
  return s < 60 ? `${s} s` : `${Math.floor(s / 60)} min ${s % 60} s`;
}

/** A table that scrolls sideways on a narrow screen, focusable so a keyboard can scroll it too. */
export function Table({ caption, head, children }: { caption: string; head: string[]; children: ComponentChildren }) {
  return (
    <div class="table-wrap" role="region" aria-label={caption} tabIndex={0}>
      <table>
        <caption class="visually-hidden">{caption}</caption>
        <thead>
          <tr>
            {head.map((h) => (
              <th scope="col" key={h}>
                {h}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
    </div>
  );
}

/** A workflow's steps as a timeline, with the failed step's log tail under it. */
export function Steps({ steps, failedStep, label }: { steps: WorkflowStep[]; failedStep?: FailedStep; label: string }) {
  if (!steps.length) return <p class="muted">No step has started yet.</p>;
  return (
    <ol class="steps" aria-label={label}>
      {steps.map((step) => (
        <li key={step.name} class={`step ${step.status}`} data-status={step.status}>
          <span class="step-name">{step.name}</span> <Badge value={step.status} label="step" />
          {step.startedAt && <span class="muted small"> {duration(step.startedAt, step.finishedAt)}</span>}
          {step.message && <div class="small">{step.message}</div>}
          {failedStep && failedStep.name === step.name && failedStep.logTail.length > 0 && (
            <div class="log-tail">
              <h4>Log tail of the failed step</h4>
              <pre tabIndex={0} aria-label={`log tail of ${step.name}`}>{failedStep.logTail.join('\n')}</pre>
            </div>
          )}
        </li>
      ))}
    </ol>
  );
}

/**
 * Ask the person before a destructive action, as the CLI does: the plan, then Cancel (the default) or the action.
 * A native modal `<dialog>`: focus moves into it and stays there, and Escape cancels.
 */
export function Confirm(props: { title: string; plan: ComponentChildren; action: string; danger?: boolean; onConfirm: () => void; onCancel: () => void }) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const dialog = ref.current!;
    if (!dialog.open) dialog.showModal();
    return () => dialog.close();
  }, []);
  return (
    <dialog ref={ref} class="confirm" aria-labelledby="confirm-title" onCancel={(e) => (e.preventDefault(), props.onCancel())}>
      <h2 id="confirm-title">{props.title}</h2>
      <div class="plan">{props.plan}</div>
      <div class="actions">
        <button type="button" autofocus onClick={props.onCancel}>
          Cancel
        </button>
        <button type="button" class={props.danger ? 'danger' : 'primary'} onClick={props.onConfirm}>
          {props.action}
        </button>
      </div>
    </dialog>
  );
}

/** A labelled form field. */
export function Field(props: { label: string; id: string; hint?: string; children: JSX.Element }) {
  return (
    <div class="field">
      <label for={props.id}>{props.label}</label>
      {props.children}
      {props.hint && (
        <small id={`${props.id}-hint`} class="muted">
          {props.hint}
        </small>
      )}
    </div>
  );
}
