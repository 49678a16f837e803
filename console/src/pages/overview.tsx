/** Overview: the tenants and services the person may see, with sync and health, image tag, host and last workflow. */
import { useEffect } from 'preact/hooks';
import { followWorkflow, get, query, type Service, type Status, type WorkflowItem } from '../api.js';
import { Badge, Link, Loading, Problem, Table, Time, paths, useLoad } from '../ui.js';

interface Row {
  service: Service;
  status?: Status;
  last?: WorkflowItem;
}

async function load(): Promise<{ rows: Row[]; tenants: string[] }> {
  const [services, workflows] = await Promise.all([
    get<{ items: Service[] }>('/services'),
    get<{ items: WorkflowItem[] }>(`/workflows${query({ limit: 100 })}`),
  ]);
  const own = services.items.filter((s) => s.componentType !== 'preview');
  const statuses = await Promise.all(own.map((s) => get<Status>(`/status/${s.team}/${s.name}`).catch(() => undefined)));
  const rows = own.map((service, i) => ({
    service,
    status: statuses[i],
    last: workflows.items.find((w) => w.parameters.team_name === service.team && w.parameters.component_name === service.name),
  }));
  const tenants = new Set(services.items.map((s) => s.team));
  // Tenants without a service yet show through their workflows (e.g. a create-tenant).
  for (const w of workflows.items) if (w.parameters.team_name) tenants.add(w.parameters.team_name);
  return { rows, tenants: [...tenants].sort() };
}

/** The overview (`/`). */
export function Overview() {
  const { data, error, loading, reload } = useLoad(load, []);
  // A workflow still running shows its outcome when it settles: its event stream says when, then the page reads again.
  const running = (data?.rows ?? []).map((r) => r.last).filter((w): w is WorkflowItem => !!w && (w.phase === 'submitted' || w.phase === 'running'));
  const key = running.map((w) => w.name).join(' ');
  useEffect(() => {
    const stops = running.map((w) => followWorkflow(w.name, { step: () => {}, settled: reload }));
    return () => stops.forEach((stop) => stop());
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [key]);
  return (
    <>
      <h1>Overview</h1>
      <Problem error={error} />
      {loading && !data && <Loading what="services" />}
      {data && (
        <>
          <section aria-labelledby="tenants-h">
            <h2 id="tenants-h">Tenants</h2>
            {data.tenants.length ? (
              <ul class="chips">
                {data.tenants.map((t) => (
                  <li key={t}>
                    <Link href={paths.tenant(t)}>{t}</Link>
                  </li>
                ))}
              </ul>
            ) : (
              <p class="muted">You are not a member of any tenant yet.</p>
            )}
          </section>
          <section aria-labelledby="services-h">
            <h2 id="services-h">Services</h2>
            {data.rows.length === 0 ? (
              <p class="muted">No service you may see is deployed yet.</p>
            ) : (
              <Table caption="Services" head={['Service', 'Sync', 'Health', 'Tag', 'Host', 'Last workflow']}>
                {data.rows.map(({ service, status, last }) => (
                  <tr key={`${service.team}/${service.name}`}>
                    <th scope="row">
                      <Link href={paths.service(service.team, service.name)}>
                        {service.team}/{service.name}
                      </Link>
                    </th>
                    <td>{status ? <Badge value={status.argocd.syncStatus} /> : <span class="muted">—</span>}</td>
                    <td>{status ? <Badge value={status.argocd.healthStatus} /> : <span class="muted">—</span>}</td>
                    <td>
                      <code>{service.imageTag}</code>
                    </td>
                    <td class="wrap">{service.host}</td>
                    <td>
                      {last ? (
                        <>
                          <Link href={paths.workflow(last.name)}>{last.operation}</Link> <Badge value={last.phase} /> <Time iso={last.startedAt} />
                        </>
                      ) : (
                        <span class="muted">—</span>
                      )}
                    </td>
                  </tr>
                ))}
              </Table>
            )}
          </section>
        </>
      )}
    </>
  );
}
