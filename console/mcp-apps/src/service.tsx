/**
 * `ui://pds/service`: a service's status, its last workflows, and a rollback to a tag it ran. Opened beside
 * `platform_get_status`. Reads `platform_list_workflows` through the host; the rollback button calls
 * `platform_rollback_service` through the host — which asks the person before a tool that changes something runs —
 * then follows the rollback's workflow and reads the status again.
 */
import { useEffect, useState } from 'preact/hooks';
import { callTool, ToolFailed, type Status, type WorkflowSummary } from './host.js';
import { tagOf, WorkflowFollower } from './workflow.js';

/** How many of the service's workflows the view lists. */
const LAST_WORKFLOWS = 8;

/** Operations after which the service ran the tag they name. */
const RAN_A_TAG = new Set(['deploy-service', 'rollback-service']);

/** Tags the service ran (succeeded deploys and rollbacks), newest first, without `current`. */
export function rollbackTargets(workflows: WorkflowSummary[], current: string): string[] {
  const tags: string[] = [];
  for (const w of workflows) {
    const tag = tagOf(w.parameters);
    if (w.phase === 'succeeded' && RAN_A_TAG.has(w.operation) && tag && tag !== current && !tags.includes(tag)) tags.push(tag);
  }
  return tags;
}

function when(iso: string): string {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toISOString().replace('T', ' ').slice(0, 19) + 'Z';
}

function History({ workflows }: { workflows: WorkflowSummary[] }) {
  if (!workflows.length) return <p class="muted">No workflows yet.</p>;
  return (
    <table class="history">
      <caption>Last workflows, newest first</caption>
      <thead>
        <tr>
          <th scope="col">Operation</th>
          <th scope="col">Tag</th>
          <th scope="col">Outcome</th>
          <th scope="col">By</th>
          <th scope="col">Started</th>
        </tr>
      </thead>
      <tbody>
        {workflows.map((w) => (
          <tr key={w.name} title={w.name}>
            <td>{w.operation}</td>
            <td>{tagOf(w.parameters) ?? ''}</td>
            <td>
              <span class={`badge ${w.phase}`}>{w.phase}</span>
            </td>
            <td>{w.userId}</td>
            <td>{when(w.startedAt)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** The service view for `platform_get_status`'s input (`team`, `app`) and result (its status). */
export function ServiceView({ input, result, failure }: { input?: Record<string, unknown>; result?: Record<string, unknown>; failure?: string }) {
  const [status, setStatus] = useState<Status | undefined>(result as Status | undefined);
  const [workflows, setWorkflows] = useState<WorkflowSummary[]>();
  const [target, setTarget] = useState<string>('');
  const [rollback, setRollback] = useState<string>();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const team = (status?.service.team ?? input?.team) as string | undefined;
  const app = (status?.service.name ?? input?.app) as string | undefined;

  useEffect(() => setStatus(result as Status | undefined), [result]);

  const readHistory = async () => {
    const list = await callTool<{ items: WorkflowSummary[] }>('platform_list_workflows', { team, service: app, limit: LAST_WORKFLOWS });
    setWorkflows(list.items);
  };
  useEffect(() => {
    if (!team || !app || !status) return;
    readHistory().catch((err) => setError(err instanceof ToolFailed ? err.message : String(err)));
  }, [team, app, status?.service.imageTag]);

  if (failure) {
    return (
      <p class="error" role="alert">
        {failure}
      </p>
    );
  }
  if (!status || !team || !app) return <p class="muted">Reading the service status…</p>;

  const targets = workflows ? rollbackTargets(workflows, status.service.imageTag) : [];
  const chosen = targets.includes(target) ? target : targets[0];

  const rollBack = async () => {
    if (!chosen) return;
    setBusy(true);
    setError(undefined);
    try {
      const submitted = await callTool<{ workflowName: string }>('platform_rollback_service', { team_name: team, component_name: app, target_tag: chosen });
      setRollback(submitted.workflowName);
    } catch (err) {
      setError(err instanceof ToolFailed ? err.message : String(err));
      setBusy(false);
    }
  };
  const afterRollback = async () => {
    try {
      setStatus(await callTool<Status>('platform_get_status', { team, app }));
    } catch (err) {
      setError(err instanceof ToolFailed ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };

  const { argocd, service } = status;
  return (
    <>
      <section aria-labelledby="service-title">
        <h1 id="service-title">
          {service.team}/{service.name}
        </h1>
        <dl class="facts">
          <dt>Image tag</dt>
          <dd data-testid="image-tag">{service.imageTag}</dd>
          <dt>Sync</dt>
          <dd>
            <span class={`badge ${argocd.syncStatus}`}>{argocd.syncStatus}</span>
          </dd>
          <dt>Health</dt>
          <dd>
            <span class={`badge ${argocd.healthStatus}`}>{argocd.healthStatus}</span>
          </dd>
          <dt>Host</dt>
          <dd>
            <code>{service.host}</code>
          </dd>
          {argocd.message ? (
            <>
              <dt>GitOps message</dt>
              <dd>{argocd.message}</dd>
            </>
          ) : null}
        </dl>
      </section>
      <section aria-labelledby="history-title">
        <h2 id="history-title">History</h2>
        {workflows ? <History workflows={workflows} /> : <p class="muted">Reading the workflows…</p>}
      </section>
      <section aria-labelledby="rollback-title">
        <h2 id="rollback-title">Roll back</h2>
        {targets.length ? (
          // No <form>: hosts sandbox views without allow-forms, where a submission is blocked before any handler runs.
          <div class="rollback" role="group" aria-labelledby="rollback-title">
            <label for="rollback-tag">Tag it ran</label>
            <select id="rollback-tag" value={chosen} onChange={(e) => setTarget((e.target as HTMLSelectElement).value)} disabled={busy}>
              {targets.map((t) => (
                <option key={t} value={t}>
                  {t}
                </option>
              ))}
            </select>
            <button type="button" disabled={busy} onClick={() => void rollBack()}>
              Roll back to {chosen}
            </button>
            <p class="muted">Your host asks you before it runs platform_rollback_service.</p>
          </div>
        ) : (
          <p class="muted">{workflows ? 'No earlier tag to roll back to.' : ''}</p>
        )}
        {rollback ? <WorkflowFollower key={rollback} name={rollback} onSettled={() => void afterRollback()} /> : null}
      </section>
      {error ? (
        <p class="error" role="alert">
          {error}
        </p>
      ) : null}
    </>
  );
}
