/**
 * Service: status with the GitOps message, the running workflow's steps live, actions by role (deploy a tag, roll
 * back to a tag it ran, update config, retire: destructive ones show the plan and ask), deploy history, previews
 * with their expiry, and logs with follow.
 */
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { ApiError, currentUser, execute, get, query, type LogLine, type Service, type Status, type TenantAnswer, type WorkflowItem, type WorkflowView } from '../api.js';
import { LiveWorkflow, useLiveWorkflow, type LiveState } from '../live.js';
import { Badge, Confirm, Field, Link, Loading, Problem, Table, Time, duration, navigate, paths, useLoad } from '../ui.js';

interface Data {
  service: Service;
  status?: Status;
  history: WorkflowItem[];
  previews: Array<Service & { expiresAt?: string }>;
  role?: string;
}

async function load(team: string, app: string): Promise<Data> {
  const [service, status, history, services, tenant, previewRuns] = await Promise.all([
    get<Service>(`/services/${team}/${app}`),
    get<Status>(`/status/${team}/${app}`).catch(() => undefined),
    get<{ items: WorkflowItem[] }>(`/workflows${query({ team, service: app, limit: 50 })}`),
    get<{ items: Service[] }>(`/services${query({ team })}`),
    get<TenantAnswer>(`/tenants/${team}`).catch(() => undefined),
    get<{ items: WorkflowItem[] }>(`/workflows${query({ team, operation: 'preview-deploy', limit: 100 })}`),
  ]);
  const previews = services.items
    .filter((s) => s.componentType === 'preview' && s.name.startsWith(`${app}-preview-`))
    .map((p) => {
      // Newest first: the latest opening of this preview set its expiry.
      const from = previewRuns.items.find((w) => w.parameters.component_name === app && w.parameters.image_tag === p.imageTag);
      const expiresAt = from ? new Date(Date.parse(from.startedAt) + Number(from.parameters.ttl_hours) * 3_600_000).toISOString() : undefined;
      return { ...p, expiresAt };
    });
  const me = currentUser();
  // A reader who is no member can only be a platform admin (members' roles decide, else nothing is shown at all).
  const role = tenant ? (tenant.tenant.members.find((m) => m.userId === me)?.role ?? 'platform admin') : undefined;
  return { service, status, history: history.items, previews, role };
}

const tagOf = (w: WorkflowItem) => w.parameters.git_tag ?? w.parameters.target_tag ?? w.parameters.image_tag;

/** A service's page (`/console/services/{team}/{app}`). */
export function ServicePage({ team, app }: { team: string; app: string }) {
  const { data, error, loading, reload } = useLoad(() => load(team, app), [team, app]);
  const [started, setStarted] = useState<string | undefined>();
  const running = data?.history.find((w) => w.phase === 'submitted' || w.phase === 'running' || w.phase === 'awaiting-approval');
  const liveName = started ?? running?.name;
  return (
    <>
      <p class="crumbs">
        <Link href="/">Overview</Link> › <Link href={paths.tenant(team)}>{team}</Link>
      </p>
      <h1>
        {team}/{app}
      </h1>
      <Problem error={error} />
      {loading && !data && <Loading what="the service" />}
      {data && (
        <>
          <StatusPanel data={data} />
          {liveName && <Running key={liveName} name={liveName} onSettled={reload} />}
          <Actions data={data} team={team} app={app} onStarted={(name) => (setStarted(name), reload())} />
          <History items={data.history} />
          <Previews items={data.previews} />
          <Logs team={team} app={app} />
        </>
      )}
    </>
  );
}

function StatusPanel({ data }: { data: Data }) {
  const { service, status } = data;
  return (
    <section aria-labelledby="status-h" class="panel">
      <h2 id="status-h">Status</h2>
      <dl class="facts">
        <div>
          <dt>Sync</dt>
          <dd>{status ? <Badge value={status.argocd.syncStatus} /> : 'unknown'}</dd>
        </div>
        <div>
          <dt>Health</dt>
          <dd>{status ? <Badge value={status.argocd.healthStatus} /> : 'unknown'}</dd>
        </div>
        <div>
          <dt>Image tag</dt>
          <dd>
            <code>{service.imageTag}</code>
          </dd>
        </div>
        <div>
          <dt>Host</dt>
          <dd class="wrap">{service.host}</dd>
        </div>
        <div>
          <dt>Your role</dt>
          <dd>{data.role ?? 'viewer'}</dd>
        </div>
      </dl>
      {status?.argocd.message && (
        <p class="gitops-message">
          <span class="muted">GitOps: </span>
          {status.argocd.message}
        </p>
      )}
    </section>
  );
}

function Running({ name, onSettled }: { name: string; onSettled: () => void }) {
  const { data } = useLoad(() => get<WorkflowView>(`/workflows/${name}`), [name]);
  if (!data) return null;
  return <RunningLive name={name} initial={{ phase: data.phase, steps: data.steps, settled: data.settled, failedStep: data.failedStep, host: data.host }} onSettled={onSettled} />;
}

function RunningLive({ name, initial, onSettled }: { name: string; initial: LiveState; onSettled: () => void }) {
  const state = useLiveWorkflow(name, initial, onSettled);
  return (
    <section aria-labelledby="running-h" class="panel">
      <h2 id="running-h">{state.settled ? 'Last workflow' : 'Running workflow'}</h2>
      <LiveWorkflow name={name} state={state} />
    </section>
  );
}

type Pending =
  | { kind: 'rollback'; tag: string }
  | { kind: 'config'; envVars: string }
  | { kind: 'retire'; plan: string; confirm: string; expiresAt: string };

function Actions({ data, team, app, onStarted }: { data: Data; team: string; app: string; onStarted: (workflow: string) => void }) {
  const role = data.role;
  const canWrite = role === 'admin' || role === 'member' || role === 'platform admin';
  const canRetire = role === 'admin' || role === 'platform admin';
  const ranTags = useMemo(() => {
    const tags = data.history.filter((w) => w.phase === 'succeeded' && (w.operation === 'deploy-service' || w.operation === 'rollback-service')).map(tagOf);
    return [...new Set(tags.filter((t): t is string => !!t && t !== data.service.imageTag))];
  }, [data]);
  const repo = data.history.find((w) => w.parameters.dockerfile_repo)?.parameters.dockerfile_repo ?? '';
  const [tag, setTag] = useState('');
  const [target, setTarget] = useState('');
  const [envVars, setEnvVars] = useState('');
  const [pending, setPending] = useState<Pending | undefined>();
  const [problem, setProblem] = useState<Error | undefined>();
  const [busy, setBusy] = useState(false);
  useEffect(() => setTarget(ranTags[0] ?? ''), [ranTags]);
  if (!canWrite) {
    return (
      <section aria-labelledby="actions-h" class="panel">
        <h2 id="actions-h">Actions</h2>
        <p class="muted">Viewers read only; a tenant admin can make you a member.</p>
      </section>
    );
  }
  const base = { team_name: team, component_name: app };
  const run = async (operation: string, parameters: Record<string, string>) => {
    setBusy(true);
    setProblem(undefined);
    try {
      const answer = await execute(operation, parameters);
      setPending(undefined);
      onStarted(answer.workflowName);
    } catch (err) {
      setPending(undefined);
      setProblem(err as Error);
    } finally {
      setBusy(false);
    }
  };
  const askRetire = async () => {
    setProblem(undefined);
    try {
      // The first call changes nothing: the API answers with the plan and a confirm value for this person.
      await execute('retire-service', base);
      setProblem(new Error('the retirement started without a confirmation; see the history'));
    } catch (err) {
      if (err instanceof ApiError && err.confirm) setPending({ kind: 'retire', plan: err.confirm.plan || err.message, confirm: err.confirm.value, expiresAt: err.confirm.expiresAt });
      else setProblem(err as Error);
    }
  };
  return (
    <section aria-labelledby="actions-h" class="panel">
      <h2 id="actions-h">Actions</h2>
      <Problem error={problem} />
      <div class="forms">
        <form
          aria-labelledby="deploy-h"
          onSubmit={(e) => {
            e.preventDefault();
            void run('deploy-service', { ...base, action: 'deploy', git_tag: tag.trim(), dockerfile_repo: repo });
          }}
        >
          <h3 id="deploy-h">Deploy a tag</h3>
          <Field label="Git tag" id="deploy-tag" hint={repo ? `built from ${repo}` : 'the repository is not known from this service\u2019s history'}>
            <input id="deploy-tag" name="git_tag" required pattern="\d+\.\d+\.\d+" placeholder="1.4.2" value={tag} onInput={(e) => setTag(e.currentTarget.value)} aria-describedby="deploy-tag-hint" />
          </Field>
          <button type="submit" class="primary" disabled={busy || !repo}>
            Deploy
          </button>
        </form>
        <form
          aria-labelledby="rollback-h"
          onSubmit={(e) => {
            e.preventDefault();
            if (target) setPending({ kind: 'rollback', tag: target });
          }}
        >
          <h3 id="rollback-h">Roll back</h3>
          {ranTags.length ? (
            <>
              <Field label="To a tag it ran" id="rollback-tag">
                <select id="rollback-tag" value={target} onChange={(e) => setTarget(e.currentTarget.value)}>
                  {ranTags.map((t) => (
                    <option key={t} value={t}>
                      {t}
                    </option>
                  ))}
                </select>
              </Field>
              <button type="submit" disabled={busy}>
                Roll back…
              </button>
            </>
          ) : (
            <p class="muted small">No earlier tag succeeded here yet.</p>
          )}
        </form>
        <form
          aria-labelledby="config-h"
          onSubmit={(e) => {
            e.preventDefault();
            setPending({ kind: 'config', envVars });
          }}
        >
          <h3 id="config-h">Update config</h3>
          <Field label="Environment (KEY=VALUE lines)" id="config-env" hint="replaces the service's environment; values are never shown again">
            <textarea id="config-env" rows={3} required value={envVars} onInput={(e) => setEnvVars(e.currentTarget.value)} aria-describedby="config-env-hint" />
          </Field>
          <button type="submit" disabled={busy}>
            Update config…
          </button>
        </form>
        {canRetire && (
          <div>
            <h3>Retire</h3>
            <p class="small muted">Removes the service for good.</p>
            <button type="button" class="danger" disabled={busy} onClick={askRetire}>
              Retire…
            </button>
          </div>
        )}
      </div>
      {pending?.kind === 'rollback' && (
        <Confirm
          title={`Roll back ${team}/${app}?`}
          plan={
            <p>
              {team}/{app} runs <code>{data.service.imageTag}</code>; it will be deployed at <code>{pending.tag}</code> again (GitOps commit, sync, rollout, health check).
            </p>
          }
          action={`Roll back to ${pending.tag}`}
          onCancel={() => setPending(undefined)}
          onConfirm={() => void run('rollback-service', { ...base, target_tag: pending.tag })}
        />
      )}
      {pending?.kind === 'config' && (
        <Confirm
          title={`Update the config of ${team}/${app}?`}
          plan={<p>The environment is replaced by the {pending.envVars.split('\n').filter((l) => l.trim()).length} line(s) given, and the service rolls out again.</p>}
          action="Update config"
          onCancel={() => setPending(undefined)}
          onConfirm={() => void run('deploy-service', { ...base, action: 'update-config', env_vars: pending.envVars })}
        />
      )}
      {pending?.kind === 'retire' && (
        <Confirm
          title={`Retire ${team}/${app}? This cannot be undone.`}
          danger
          plan={
            <>
              <p>{pending.plan}</p>
              <p class="small muted">
                This confirmation is valid until <Time iso={pending.expiresAt} />.
              </p>
            </>
          }
          action="Retire for good"
          onCancel={() => setPending(undefined)}
          onConfirm={() => void run('retire-service', { ...base, confirm: pending.confirm }).then(() => navigate('/'))}
        />
      )}
    </section>
  );
}

function History({ items }: { items: WorkflowItem[] }) {
  return (
    <section aria-labelledby="history-h">
      <h2 id="history-h">Deploy history</h2>
      {items.length === 0 ? (
        <p class="muted">No workflow yet.</p>
      ) : (
        <Table caption="Deploy history, newest first" head={['When', 'Operation', 'Who', 'Tag', 'Outcome', 'Duration']}>
          {items.map((w) => (
            <tr key={w.name}>
              <td>
                <Time iso={w.startedAt} />
              </td>
              <td>
                <Link href={paths.workflow(w.name)}>{w.parameters.action && w.operation === 'deploy-service' ? `${w.operation} (${w.parameters.action})` : w.operation}</Link>
              </td>
              <td>{w.userId}</td>
              <td>
                <code>{tagOf(w) ?? '—'}</code>
              </td>
              <td>
                <Badge value={w.phase} />
              </td>
              <td>{duration(w.startedAt, w.finishedAt)}</td>
            </tr>
          ))}
        </Table>
      )}
    </section>
  );
}

function Previews({ items }: { items: Data['previews'] }) {
  return (
    <section aria-labelledby="previews-h">
      <h2 id="previews-h">Previews</h2>
      {items.length === 0 ? (
        <p class="muted">No preview environment is open.</p>
      ) : (
        <Table caption="Previews" head={['Preview', 'Tag', 'Host', 'Expires']}>
          {items.map((p) => (
            <tr key={p.name}>
              <td>{p.name}</td>
              <td>
                <code>{p.imageTag}</code>
              </td>
              <td class="wrap">{p.host}</td>
              <td>{p.expiresAt ? <Time iso={p.expiresAt} /> : 'unknown'}</td>
            </tr>
          ))}
        </Table>
      )}
    </section>
  );
}

/** How often followed logs are read again, seconds (as `pds logs -f`); only while the page is visible. */
const FOLLOW_SECONDS = 5;

function Logs({ team, app }: { team: string; app: string }) {
  const [lines, setLines] = useState<LogLine[]>([]);
  const [note, setNote] = useState('');
  const [follow, setFollow] = useState(false);
  const [problem, setProblem] = useState<Error | undefined>();
  const box = useRef<HTMLPreElement>(null);
  // The newest lines are at the bottom: keep them in view as they arrive.
  useEffect(() => {
    if (box.current) box.current.scrollTop = box.current.scrollHeight;
  }, [lines]);
  useEffect(() => {
    let live = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const read = async (since: string) => {
      try {
        const r = await get<{ lines: LogLine[]; note: string }>(`/logs/${team}/${app}${query({ lines: 200, since })}`);
        if (!live) return;
        setProblem(undefined);
        setNote(r.note);
        setLines((old) => {
          const seen = new Set(old.map((l) => `${l.timestamp} ${l.line}`));
          return [...old, ...r.lines.filter((l) => !seen.has(`${l.timestamp} ${l.line}`))].slice(-1000);
        });
      } catch (err) {
        if (live) setProblem(err as Error);
      }
    };
    const schedule = () => {
      if (live && follow) timer = setTimeout(() => void (document.hidden ? Promise.resolve() : read('1m')).then(schedule), FOLLOW_SECONDS * 1000);
    };
    void read('1h').then(schedule);
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [team, app, follow]);
  return (
    <section aria-labelledby="logs-h">
      <div class="row">
        <h2 id="logs-h">Logs</h2>
        <label class="toggle">
          <input type="checkbox" checked={follow} onChange={(e) => setFollow(e.currentTarget.checked)} /> Follow
        </label>
      </div>
      <Problem error={problem} />
      <p class="muted small">{note}</p>
      <pre ref={box} class="logs" tabIndex={0} aria-label={`log lines of ${team}/${app}`} aria-live={follow ? 'polite' : 'off'}>
        {lines.length ? lines.map((l) => `${l.timestamp}  ${l.line}`).join('\n') : 'No log lines in the last hour.'}
      </pre>
    </section>
  );
}
