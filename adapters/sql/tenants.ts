/**
 * Tenants and their members (sandbox; on Kubernetes tenants are Namespaces and this table stays empty). A tenant is
 * found by name among the live ones and identified by its `uid`; delete-tenant deletes the row, and its members and
 * services go with it (foreign keys), so a tenant re-created under the same name starts with nothing of the old one.
 */
import { randomUUID } from 'node:crypto';
import { Conflict } from '../../core/errors.js';
import type { Member } from '../../core/model.js';
import type { TenantRef } from '../../core/ports.js';
import type { NewTenant, TenantRecord } from './records.js';
import type { Executor } from './executor.js';
import type { TenantsTable } from './schema.js';

/** Reads and writes of tenants; bound to the database or to one transaction. */
export class TenantStore {
  constructor(private readonly db: Executor) {}

  /**
   * Create a tenant with its members.
   * @returns the record as stored, with its uid.
   * @throws Conflict `tenant <name> already exists`.
   */
  async create(tenant: NewTenant): Promise<TenantRecord> {
    const record: TenantRecord = { ...tenant, uid: tenant.uid ?? randomUUID() };
    const inserted = await this.db
      .insertInto('tenants')
      .values(toRow(record))
      .onConflict((oc) => oc.column('name').doNothing())
      .executeTakeFirst();
    if (Number(inserted.numInsertedOrUpdatedRows ?? 0) === 0) throw new Conflict(`tenant ${tenant.name} already exists`);
    await this.insertMembers(record.uid, record.members);
    return structuredClone(record);
  }

  /**
   * Replace what can change of an existing tenant (display name, description, contact, quotas, members); the uid,
   * name and creation time stay. Does nothing when no tenant has that uid.
   */
  async update(record: TenantRecord): Promise<void> {
    const { uid: _uid, name: _name, created_at: _created, ...changes } = toRow(record);
    const updated = await this.db.updateTable('tenants').set(changes).where('uid', '=', record.uid).executeTakeFirst();
    if (Number(updated.numUpdatedRows) === 0) return;
    await this.db.deleteFrom('tenant_members').where('tenant_uid', '=', record.uid).execute();
    await this.insertMembers(record.uid, record.members);
  }

  /** The live tenant named `name`, or `undefined`. */
  async get(name: string): Promise<TenantRecord | undefined> {
    const row = await this.db.selectFrom('tenants').selectAll().where('name', '=', name).executeTakeFirst();
    return row && (await this.withMembers([row]))[0];
  }

  /** The live tenant with identity `uid`, or `undefined` (it was deleted, or never existed). */
  async getByUid(uid: string): Promise<TenantRecord | undefined> {
    const row = await this.db.selectFrom('tenants').selectAll().where('uid', '=', uid).executeTakeFirst();
    return row && (await this.withMembers([row]))[0];
  }

  /** Every live tenant, sorted by name. */
  async list(): Promise<TenantRecord[]> {
    const rows = await this.db.selectFrom('tenants').selectAll().orderBy('name').execute();
    return this.withMembers(rows);
  }

  /** The tenants `userId` is a member of (any role), as name and uid, sorted by name: what the user may read. */
  async memberships(userId: string): Promise<Array<TenantRef & { role: Member['role'] }>> {
    return this.db
      .selectFrom('tenant_members')
      .innerJoin('tenants', 'tenants.uid', 'tenant_members.tenant_uid')
      .select(['tenants.name as name', 'tenants.uid as uid', 'tenant_members.role as role'])
      .where('tenant_members.user_id', '=', userId)
      .orderBy('tenants.name')
      .execute();
  }

  /** Delete the tenant with identity `uid` (members and services with it). @returns whether it existed. */
  async delete(uid: string): Promise<boolean> {
    const deleted = await this.db.deleteFrom('tenants').where('uid', '=', uid).executeTakeFirst();
    return Number(deleted.numDeletedRows) > 0;
  }

  private async insertMembers(uid: string, members: readonly Member[]): Promise<void> {
    if (members.length === 0) return;
    await this.db
      .insertInto('tenant_members')
      .values(members.map((m, position) => ({ tenant_uid: uid, user_id: m.userId, role: m.role, position })))
      .execute();
  }

  private async withMembers(rows: TenantsTable[]): Promise<TenantRecord[]> {
    if (rows.length === 0) return [];
    const members = await this.db
      .selectFrom('tenant_members')
      .select(['tenant_uid', 'user_id', 'role'])
      .where('tenant_uid', 'in', rows.map((r) => r.uid))
      .orderBy('tenant_uid')
      .orderBy('position')
      .execute();
    const byTenant = new Map<string, Member[]>();
    for (const m of members) {
      let list = byTenant.get(m.tenant_uid);
      if (!list) byTenant.set(m.tenant_uid, (list = []));
      list.push({ userId: m.user_id, role: m.role });
    }
    return rows.map((row) => fromRow(row, byTenant.get(row.uid) ?? []));
  }
}

function toRow(t: TenantRecord): TenantsTable {
  return {
    uid: t.uid,
    name: t.name,
    display_name: t.displayName,
    description: t.description,
    contact_email: t.contactEmail,
    quota_cpu: t.quotas.cpu,
    quota_memory: t.quotas.memory,
    quota_pods: t.quotas.pods,
    created_at: t.createdAt,
  };
}

function fromRow(row: TenantsTable, members: Member[]): TenantRecord {
  return {
    uid: row.uid,
    name: row.name,
    displayName: row.display_name,
    description: row.description,
    contactEmail: row.contact_email,
    quotas: { cpu: row.quota_cpu, memory: row.quota_memory, pods: row.quota_pods },
    members,
    createdAt: row.created_at,
  };
}
