/**
 * Tenant: quotas against use, members, the governance policy (edited by tenant and platform admins), the event feed,
 * and webhooks with their recent deliveries.
 */
import { useEffect, useState } from 'preact/hooks';
import { ApiError, currentUser, get, send, type ResourceUsage, type Service, type TenantAnswer } from '../api.js';
import { Badge, Field, Link, Loading, Problem, Table, Time, paths, useLoad } from '../ui.js';

interface TenantEvent {
  id: string;
  timestamp: string;
  userId: string;
  type: string;
  [key: string]: unknown;
}

interface Hook {
  id: string;
  url: string;
  events: string[];
  format: string;
  createdBy: string;
}

interface Delivery {
  id: string;
  hookId: string;
  event: string;
  createdAt: string;
  attempts: number;
  lastStatusCode: number | null;
  lastError: string | null;
  outcome: string;
}

/** A read that a pds without the feature answers 404: `undefined` then, so the page says it is not there. */
const optional = <T,>(p: Promise<T>): Promise<T | undefined> => p.catch((err: unknown) => (err instanceof ApiError && err.status === 404 ? undefined : Promise.reject(err)));

/** A tenant's page (`/console/tenants/{name}`). */
export function TenantPage({ name }: { name: string }) {
  const { data, error, loading } = useLoad(
    () =>
      Promise.all([
        get<TenantAnswer>(`/tenants/${name}`),
        get<ResourceUsage>(`/resources/${name}`).catch(() => undefined),
      ]),
    [name],
  );
  const detail = data?.[0];
  const usage = data?.[1];
  const role = detail?.tenant.members.find((m) => m.userId === currentUser())?.role ?? (detail ? 'platform admin' : undefined);
  return (
    <>
      <p class="crumbs">
        <Link href="/">Overview</Link>
      </p>
      <h1>Tenant {detail?.tenant.displayName && detail.tenant.displayName !== name ? `${detail.tenant.displayName} (${name})` : name}</h1>
      <Problem error={error} />
      {loading && !data && <Loading what="the tenant" />}
      {detail && (
        <>
          <section aria-labelledby="quota-h" class="panel">
            <h2 id="quota-h">Quotas and use</h2>
            <dl class="facts">
              {(['cpu', 'memory', 'pods'] as const).map((k) => (
                <div key={k}>
                  <dt>{k}</dt>
                  <dd>
                    {usage ? `${usage.used[k]} of ${usage.allocated[k]}` : detail.tenant.quotas[k]}
                  </dd>
                </div>
              ))}
            </dl>
            {usage?.note && <p class="muted small">{usage.note}</p>}
          </section>
          <section aria-labelledby="services-h">
            <h2 id="services-h">Services</h2>
            <ServiceList services={detail.services} />
          </section>
          <section aria-labelledby="members-h">
            <h2 id="members-h">Members</h2>
            <Table caption="Members" head={['User', 'Role']}>
              {detail.tenant.members.map((m) => (
                <tr key={m.userId}>
                  <td>{m.userId}</td>
                  <td>{m.role}</td>
                </tr>
              ))}
            </Table>
          </section>
          <Policy name={name} canEdit={role === 'admin' || role === 'platform admin'} />
          <Events name={name} />
          <Webhooks name={name} />
        </>
      )}
    </>
  );
}

function ServiceList({ services }: { services: Service[] }) {
  if (!services.length) return <p class="muted">No service yet.</p>;
  return (
    <ul class="chips">
      {services.map((s) => (
        <li key={s.name}>
          <Link href={paths.service(s.team, s.name)}>{s.name}</Link>
        </li>
      ))}
    </ul>
  );
}

function Policy({ name, canEdit }: { name: string; canEdit: boolean }) {
  const { data, error, reload } = useLoad(() => optional(get<{ policy: Record<string, unknown> }>(`/tenants/${name}/policy`)), [name]);
  const [text, setText] = useState('');
  const [editing, setEditing] = useState(false);
  const [problem, setProblem] = useState<Error | undefined>();
  const [saved, setSaved] = useState(false);
  useEffect(() => setText(JSON.stringify(data?.policy ?? {}, null, 2)), [data]);
  const save = async (e: Event) => {
    e.preventDefault();
    setProblem(undefined);
    let policy: unknown;
    try {
      policy = JSON.parse(text);
    } catch {
      setProblem(new Error('the policy is not valid JSON'));
      return;
    }
    try {
      await send('PUT', `/tenants/${name}/policy`, policy);
      setEditing(false);
      setSaved(true);
      reload();
    } catch (err) {
      setProblem(err as Error);
    }
  };
  return (
    <section aria-labelledby="policy-h">
      <h2 id="policy-h">Policy</h2>
      <Problem error={error} />
      {data === undefined && !error ? <p class="muted">No policy on this pds.</p> : null}
      {data && !editing && (
        <>
          {saved && <p role="status">Policy saved.</p>}
          <pre tabIndex={0} aria-label="policy document" class="code">
            {JSON.stringify(data.policy, null, 2)}
          </pre>
          {canEdit && (
            <button type="button" onClick={() => (setEditing(true), setSaved(false))}>
              Edit policy
            </button>
          )}
        </>
      )}
      {data && editing && (
        <form onSubmit={save}>
          <Problem error={problem} />
          <Field label="Policy (JSON: approvals, freezeWindows, promotion)" id="policy-text">
            <textarea id="policy-text" rows={12} class="code" value={text} onInput={(e) => setText(e.currentTarget.value)} />
          </Field>
          <div class="actions">
            <button type="button" onClick={() => setEditing(false)}>
              Cancel
            </button>
            <button type="submit" class="primary">
              Save policy
            </button>
          </div>
        </form>
      )}
    </section>
  );
}

function Events({ name }: { name: string }) {
  const { data, error } = useLoad(() => optional(get<{ items: TenantEvent[] }>(`/tenants/${name}/events?limit=20`)), [name]);
  return (
    <section aria-labelledby="events-h">
      <h2 id="events-h">Recent events</h2>
      <Problem error={error} />
      {data && !data.items.length && <p class="muted">No event yet.</p>}
      {data && data.items.length > 0 && (
        <Table caption="Tenant events, newest first" head={['When', 'Who', 'What']}>
          {data.items.map((e) => (
            <tr key={e.id}>
              <td>
                <Time iso={e.timestamp} />
              </td>
              <td>{e.userId}</td>
              <td>
                <code>{e.type}</code>
                {typeof e.comment === 'string' && e.comment ? ` — ${e.comment}` : typeof e.reason === 'string' && e.reason ? ` — ${e.reason}` : ''}
              </td>
            </tr>
          ))}
        </Table>
      )}
    </section>
  );
}

function Webhooks({ name }: { name: string }) {
  const { data, error } = useLoad(
    () => Promise.all([optional(get<{ hooks: Hook[] }>(`/tenants/${name}/webhooks`)), optional(get<{ items: Delivery[] }>(`/tenants/${name}/webhooks/deliveries?limit=20`))]),
    [name],
  );
  const [hooks, deliveries] = data ?? [];
  return (
    <section aria-labelledby="webhooks-h">
      <h2 id="webhooks-h">Webhooks</h2>
      <Problem error={error} />
      {data && !hooks && <p class="muted">No webhooks on this pds.</p>}
      {hooks && (hooks.hooks.length === 0 ? <p class="muted">No webhook is set.</p> : (
        <Table caption="Webhooks" head={['URL', 'Events', 'Format', 'Added by']}>
          {hooks.hooks.map((h) => (
            <tr key={h.id}>
              <td class="wrap">{h.url}</td>
              <td>{h.events.join(', ')}</td>
              <td>{h.format}</td>
              <td>{h.createdBy}</td>
            </tr>
          ))}
        </Table>
      ))}
      {deliveries && deliveries.items.length > 0 && (
        <>
          <h3>Recent deliveries</h3>
          <Table caption="Recent webhook deliveries" head={['When', 'Event', 'Attempts', 'Last status', 'Outcome']}>
            {deliveries.items.map((d) => (
              <tr key={d.id}>
                <td>
                  <Time iso={d.createdAt} />
                </td>
                <td>{d.event}</td>
                <td>{d.attempts}</td>
                <td>{d.lastStatusCode ?? d.lastError ?? '—'}</td>
                <td>
                  <Badge value={d.outcome} />
                </td>
              </tr>
            ))}
          </Table>
        </>
      )}
    </section>
  );
}
