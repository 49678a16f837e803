/**
 * Audit: the 50 most recent executions the person may see (`GET /api/v1/audit`), filtered here by tenant, operation,
 * user and outcome (the API takes no filters; the list is small and bounded).
 */
import { useState } from 'preact/hooks';
import { get, type AuditEntry } from '../api.js';
import { Badge, Field, Link, Loading, Problem, Table, Time, paths, useLoad } from '../ui.js';

const ALL = '';

/** The audit page (`/console/audit`). */
export function AuditPage() {
  const { data, error, loading } = useLoad(() => get<{ items: Omit<AuditEntry, 'message'>[] }>('/audit'), []);
  const [filter, setFilter] = useState({ tenant: ALL, operation: ALL, user: ALL, outcome: ALL });
  const items = data?.items ?? [];
  const options = (pick: (e: Omit<AuditEntry, 'message'>) => string | undefined) => [...new Set(items.map(pick).filter((v): v is string => !!v))].sort();
  const shown = items.filter(
    (e) =>
      (!filter.tenant || e.parameters.team_name === filter.tenant) &&
      (!filter.operation || e.operation === filter.operation) &&
      (!filter.user || e.userId === filter.user) &&
      (!filter.outcome || e.status === filter.outcome),
  );
  const select = (key: keyof typeof filter, label: string, values: string[]) => (
    <Field label={label} id={`filter-${key}`}>
      <select id={`filter-${key}`} value={filter[key]} onChange={(e) => setFilter({ ...filter, [key]: e.currentTarget.value })}>
        <option value={ALL}>all</option>
        {values.map((v) => (
          <option key={v} value={v}>
            {v}
          </option>
        ))}
      </select>
    </Field>
  );
  return (
    <>
      <h1>Audit</h1>
      <Problem error={error} />
      {loading && !data && <Loading what="the audit trail" />}
      {data && (
        <>
          <form class="filters" aria-label="Filter the audit trail" onSubmit={(e) => e.preventDefault()}>
            {select('tenant', 'Tenant', options((e) => e.parameters.team_name))}
            {select('operation', 'Operation', options((e) => e.operation))}
            {select('user', 'User', options((e) => e.userId))}
            {select('outcome', 'Outcome', ['submitted', 'succeeded', 'failed'])}
          </form>
          <p class="muted small" aria-live="polite">
            {shown.length} of the {items.length} most recent executions
          </p>
          <Table caption="Audit trail, newest first" head={['When', 'User', 'Operation', 'Tenant', 'Risk', 'Outcome', 'Workflow']}>
            {shown.map((e) => (
              <tr key={e.id}>
                <td>
                  <Time iso={e.timestamp} />
                </td>
                <td>{e.userId}</td>
                <td>{e.operation}</td>
                <td>{e.parameters.team_name ?? '—'}</td>
                <td>{e.riskLevel}</td>
                <td>
                  <Badge value={e.status} />
                </td>
                <td>
                  <Link href={paths.workflow(e.workflowName)}>{e.workflowName}</Link>
                </td>
              </tr>
            ))}
          </Table>
        </>
      )}
    </>
  );
}
