/**
 * The audit trail (`docs/api.md#audit-entry`) in SQL: {@link AuditStore}. One row per workflow, newest first by
 * `seq` (the order entries were recorded). Each entry carries its tenant's name and identity (`tenant_uid`), so a
 * tenant re-created under an old name does not inherit the old one's history (issue 7 item 4).
 *
 * `query` runs as one indexed branch per visible tenant plus one for the caller's own entries, each limited to `limit`
 * sequence numbers read from its index, merged and cut to `limit`, and then reads those `limit` rows: its cost is
 * ~(tenants + 1) × limit index entries and `limit` rows, however long the trail is.
 */
import type { Selectable, SelectQueryBuilder } from 'kysely';
import { sql } from './kysely.js';
import { Conflict } from '../../core/errors.js';
import type { AuditEntry, AuditStatus } from '../../core/model.js';
import type { AuditQuery, AuditRecord, AuditStore } from '../../core/ports.js';
import { json, type Executor } from './executor.js';
import type { AuditEntriesTable, Database } from './schema.js';
import { tenantUidOf } from './workflows.js';

type AuditRow = Selectable<AuditEntriesTable>;

/** The audit store; bound to the database or to one transaction. */
export class SqlAuditStore implements AuditStore {
  constructor(private readonly db: Executor) {}

  /**
   * Record a new entry. Its tenant is `options.tenantUid` (null: none), else the live tenant named
   * `parameters.team_name` (if any).
   * When its workflow has settled already, the entry takes the workflow's final status and message, so it can never
   * stay `submitted`.
   * @throws Conflict when an entry for the same workflow exists.
   */
  async append(entry: AuditEntry, options: { tenantUid?: string | null } = {}): Promise<void> {
    const tenant = entry.parameters.team_name ?? '';
    const tenantUid = options.tenantUid !== undefined ? options.tenantUid : await tenantUidOf(this.db, tenant);
    let { status, message } = entry;
    if (status === 'submitted') {
      const run = await this.db.selectFrom('workflows').select(['phase', 'message']).where('name', '=', entry.workflowName).executeTakeFirst();
      if (run && run.phase !== 'submitted') ({ phase: status, message } = run);
    }
    const inserted = await this.db
      .insertInto('audit_entries')
      .values({
        id: entry.id,
        timestamp: entry.timestamp,
        user_id: entry.userId,
        operation: entry.operation,
        parameters: JSON.stringify(entry.parameters),
        workflow_name: entry.workflowName,
        status,
        risk_level: entry.riskLevel,
        message,
        tenant,
        tenant_uid: tenantUid ?? null,
        service: entry.parameters.component_name ?? '',
      })
      .onConflict((oc) => oc.column('workflow_name').doNothing())
      .executeTakeFirst();
    if (Number(inserted.numInsertedOrUpdatedRows ?? 0) === 0) {
      throw new Conflict(`an audit entry for workflow ${entry.workflowName} exists already`);
    }
  }

  /**
   * Move the entry of `workflowName` to `status` with `message`; unknown names are ignored. (Settling a workflow
   * through `WorkflowStore.settle` settles its entry too.)
   */
  async settle(workflowName: string, status: AuditStatus, message: string): Promise<void> {
    await this.db.updateTable('audit_entries').set({ status, message }).where('workflow_name', '=', workflowName).execute();
  }

  /** The entry of one workflow, with its tenant's uid, or `undefined`. */
  async get(workflowName: string): Promise<AuditRecord | undefined> {
    const row = await this.db.selectFrom('audit_entries').selectAll().where('workflow_name', '=', workflowName).executeTakeFirst();
    return row && fromRow(row);
  }

  /** The newest entries `query.visible` allows and the filters select, at most `query.limit`, newest first. */
  async query(query: AuditQuery): Promise<AuditRecord[]> {
    const limit = Math.max(0, Math.floor(query.limit));
    if (limit === 0) return [];
    // Each branch finds the sequence numbers of its newest entries in its index alone (covering: (key, seq)).
    const branch = () => {
      let q = this.db.selectFrom('audit_entries').select('seq');
      if (query.service !== undefined) q = q.where('service', '=', query.service);
      if (query.userId !== undefined) q = q.where('user_id', '=', query.userId);
      return q;
    };
    let branches: Array<ReturnType<typeof branch>>;
    if (query.visible === 'all') {
      branches = [query.tenant === undefined ? branch() : branch().where('tenant', '=', query.tenant)];
    } else {
      const tenants = query.visible.tenants.filter((t) => query.tenant === undefined || t.name === query.tenant);
      branches = tenants.map((t) => branch().where('tenant_uid', '=', t.uid));
      // The caller's own entries, whatever tenant they name (e.g. a create-tenant they ran that failed).
      if (query.userId === undefined || query.userId === query.visible.userId) {
        let own = branch().where('user_id', '=', query.visible.userId);
        if (query.tenant !== undefined) own = own.where('tenant', '=', query.tenant);
        branches.push(own);
      }
    }
    if (branches.length === 0) return [];
    // SQLite allows ORDER BY/LIMIT only on a whole compound select, so each branch is a derived table. UNION drops the
    // entries two branches share (their tenant's and their author's) on integers alone; then only the `limit` newest
    // rows are read whole.
    const limited = branches.map((b) => b.orderBy('seq', 'desc').limit(limit));
    const newest = limited.length === 1 ? limited[0]! : this.newestOf(limited, limit);
    const rows = await this.db.selectFrom('audit_entries').selectAll().where('seq', 'in', newest).orderBy('seq', 'desc').execute();
    return rows.map(fromRow);
  }

  /** The `limit` highest sequence numbers of the branches' results together, as one query. */
  private newestOf(branches: Array<SelectQueryBuilder<Database, 'audit_entries', { seq: number }>>, limit: number) {
    const [first, ...rest] = branches.map((b, i) => this.db.selectFrom(b.as(`b${i}`)).select('seq'));
    let union = first!;
    for (const next of rest) union = union.union(next);
    return this.db.selectFrom(union.as('visible')).select('seq').orderBy('seq', 'desc').limit(limit);
  }

  /** How many entries the trail holds. */
  async count(): Promise<number> {
    const row = await this.db.selectFrom('audit_entries').select(sql<number>`count(*)`.as('n')).executeTakeFirstOrThrow();
    return Number(row.n);
  }
}

function fromRow(row: AuditRow): AuditRecord {
  const entry: AuditRecord = {
    id: row.id,
    timestamp: row.timestamp,
    userId: row.user_id,
    operation: row.operation,
    parameters: json<Record<string, string>>(row.parameters),
    workflowName: row.workflow_name,
    status: row.status,
    riskLevel: row.risk_level,
    message: row.message,
  };
  if (row.tenant_uid !== null) entry.tenantUid = row.tenant_uid;
  return entry;
}
