/** Workflow: steps as a timeline (live while it runs), parameters (secrets redacted by the API), audit entry, approval. */
import { get, type WorkflowView } from '../api.js';
import { LiveWorkflow, useLiveWorkflow } from '../live.js';
import { Badge, Link, Loading, Problem, Time, paths, useLoad } from '../ui.js';

/** A workflow's page (`/console/workflows/{name}`). */
export function WorkflowPage({ name }: { name: string }) {
  const { data, error, loading } = useLoad(() => get<WorkflowView>(`/workflows/${name}`), [name]);
  return (
    <>
      <p class="crumbs">
        <Link href="/">Overview</Link>
        {data?.audit.parameters.team_name && data.audit.parameters.component_name && (
          <>
            {' › '}
            <Link href={paths.service(data.audit.parameters.team_name, data.audit.parameters.component_name)}>
              {data.audit.parameters.team_name}/{data.audit.parameters.component_name}
            </Link>
          </>
        )}
      </p>
      <h1>Workflow {name}</h1>
      <Problem error={error} />
      {loading && !data && <Loading what="the workflow" />}
      {data && <Detail view={data} />}
    </>
  );
}

function Detail({ view }: { view: WorkflowView }) {
  const state = useLiveWorkflow(view.workflow, { phase: view.phase, steps: view.steps, settled: view.settled, failedStep: view.failedStep, host: view.host });
  const { audit } = view;
  return (
    <>
      <section aria-labelledby="timeline-h" class="panel">
        <h2 id="timeline-h">Steps</h2>
        <LiveWorkflow name={view.workflow} state={state} />
        {state.host && state.settled && (
          <p class="small">
            Service host: <code>{state.host}</code>
          </p>
        )}
        <p class="muted small">{view.note}</p>
      </section>
      {view.approval && (
        <section aria-labelledby="approval-h" class="panel">
          <h2 id="approval-h">Approval</h2>
          <p>
            {view.approval.approvedBy.length} of {view.approval.required} approval(s)
            {view.approval.approvedBy.length > 0 && <> — by {view.approval.approvedBy.join(', ')}</>}; expires <Time iso={view.approval.expiresAt} />.{' '}
            <Link href={paths.approvals}>Decide on the approvals page</Link>
          </p>
        </section>
      )}
      <section aria-labelledby="audit-h" class="panel">
        <h2 id="audit-h">Audit entry</h2>
        <dl class="facts">
          <div>
            <dt>Operation</dt>
            <dd>{audit.operation}</dd>
          </div>
          <div>
            <dt>Requested by</dt>
            <dd>{audit.userId}</dd>
          </div>
          <div>
            <dt>When</dt>
            <dd>
              <Time iso={audit.timestamp} />
            </dd>
          </div>
          <div>
            <dt>Status</dt>
            <dd>
              <Badge value={audit.status} />
            </dd>
          </div>
          <div>
            <dt>Risk</dt>
            <dd>{audit.riskLevel}</dd>
          </div>
          <div>
            <dt>Entry</dt>
            <dd>
              <code>{audit.id}</code>
            </dd>
          </div>
        </dl>
        {audit.message && <p class="small">{audit.message}</p>}
        <h3>Parameters</h3>
        <dl class="params">
          {Object.entries(audit.parameters).map(([k, v]) => (
            <div key={k}>
              <dt>
                <code>{k}</code>
              </dt>
              <dd>
                <code class="wrap">{v}</code>
              </dd>
            </div>
          ))}
        </dl>
      </section>
    </>
  );
}
