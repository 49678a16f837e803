/**
 * Approvals (issue 20's four eyes): what the person may decide, with approve or reject and a comment, and what they
 * requested. `GET /api/v1/approvals?state=`, `POST /api/v1/approvals/{id}/approve` (`comment`) or `/reject` (`reason`).
 */
import { useState } from 'preact/hooks';
import { ApiError, currentUser, get, query, send, type Approval } from '../api.js';
import { Badge, Field, Link, Loading, Problem, Time, paths, useLoad } from '../ui.js';

/** The approvals page (`/console/approvals`). */
export function ApprovalsPage() {
  const [state, setState] = useState('pending');
  const { data, error, loading, reload } = useLoad(() => get<{ items: Approval[] }>(`/approvals${query({ state })}`), [state]);
  const me = currentUser();
  // What the last decision did: said here, because the decided approval leaves a list of pending ones.
  const [notice, setNotice] = useState('');
  const decided = (message: string) => {
    setNotice(message);
    reload();
  };
  const items = data?.items ?? [];
  const toDecide = items.filter((a) => a.requestedBy !== me);
  const mine = items.filter((a) => a.requestedBy === me);
  const missing = error instanceof ApiError && error.status === 404;
  return (
    <>
      <h1>Approvals</h1>
      <form class="filters" aria-label="Which approvals" onSubmit={(e) => e.preventDefault()}>
        <Field label="State" id="approvals-state">
          <select id="approvals-state" value={state} onChange={(e) => setState(e.currentTarget.value)}>
            {['pending', 'approved', 'rejected', 'expired', 'cancelled', 'all'].map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </Field>
      </form>
      {missing ? <p class="muted">This pds has no approvals (its version predates tenant policies).</p> : <Problem error={error} />}
      <p class="done" role="status">
        {notice}
      </p>
      {loading && !data && <Loading what="approvals" />}
      {data && (
        <>
          <section aria-labelledby="decide-h">
            <h2 id="decide-h">For you to decide</h2>
            {toDecide.length ? (
              <ul class="cards">
                {toDecide.map((a) => (
                  <ApprovalCard key={a.id} approval={a} onDecided={decided} />
                ))}
              </ul>
            ) : (
              <p class="muted">Nothing {state === 'all' ? '' : state} waits for you.</p>
            )}
          </section>
          <section aria-labelledby="mine-h">
            <h2 id="mine-h">What you requested</h2>
            {mine.length ? (
              <ul class="cards">
                {mine.map((a) => (
                  <ApprovalCard key={a.id} approval={a} onDecided={decided} />
                ))}
              </ul>
            ) : (
              <p class="muted">None of your executions {state === 'pending' ? 'waits for approval' : `is ${state}`}.</p>
            )}
          </section>
        </>
      )}
    </>
  );
}

function ApprovalCard({ approval: a, onDecided }: { approval: Approval; onDecided: (message: string) => void }) {
  const [comment, setComment] = useState('');
  const [problem, setProblem] = useState<Error | undefined>();
  const target = [a.parameters.team_name, a.parameters.component_name].filter(Boolean).join('/');
  const tag = a.parameters.git_tag ?? a.parameters.target_tag ?? a.parameters.image_tag ?? a.parameters.canary_tag;
  const decide = async (decision: 'approve' | 'reject') => {
    setProblem(undefined);
    try {
      const body = decision === 'approve' ? (comment.trim() ? { comment: comment.trim() } : {}) : { reason: comment.trim() };
      const answer = await send<{ message: string }>('POST', `/approvals/${encodeURIComponent(a.id)}/${decision}`, body);
      onDecided(answer.message);
    } catch (err) {
      setProblem(err as Error);
    }
  };
  const id = `approval-${a.id}`;
  return (
    <li class="card" aria-labelledby={`${id}-h`}>
      <h3 id={`${id}-h`}>
        {a.subject === 'promote' ? 'promote' : a.operation} {target} {tag && <code>{tag}</code>} <Badge value={a.state} label="approval" />
      </h3>
      <p class="small">
        Requested by <strong>{a.requestedBy}</strong> <Time iso={a.requestedAt} /> · {a.approvedBy.length} of {a.required} approval(s)
        {a.approvedBy.length > 0 && ` (${a.approvedBy.join(', ')})`} · expires <Time iso={a.expiresAt} /> · workflow{' '}
        <Link href={paths.workflow(a.workflowName)}>{a.workflowName}</Link>
      </p>
      <p class="small muted">May approve: {a.approvers.join(', ')}</p>
      {a.reason && <p class="small">Reason: {a.reason}</p>}
      {a.outcome && <p class="small">Outcome: {a.outcome}</p>}
      <Problem error={problem} />
      {a.canDecide && (
        <form onSubmit={(e) => e.preventDefault()}>
          <Field label="Comment (required to reject)" id={`${id}-comment`}>
            <textarea id={`${id}-comment`} rows={2} value={comment} onInput={(e) => setComment(e.currentTarget.value)} />
          </Field>
          <div class="actions">
            <button type="button" class="primary" onClick={() => void decide('approve')}>
              Approve
            </button>
            <button type="button" class="danger" disabled={!comment.trim()} onClick={() => void decide('reject')}>
              Reject
            </button>
          </div>
        </form>
      )}
    </li>
  );
}
