/**
 * Services and preview environments (sandbox): found by `(team, name)`, owned by the tenant's uid (deleted with it).
 * A preview is a service row with `preview_*` set; its expiry is indexed, so the reaper asks for expired previews
 * instead of reading every service.
 */
import { sql } from './kysely.js';
import { NotFound } from '../../core/errors.js';
import type { HealthStatus, SyncStatus } from '../../core/model.js';
import type { RolloutStrategy, RolloutView } from '../../core/rollouts.js';
import { json, type Executor } from './executor.js';
import type { ServiceRecord } from './records.js';
import type { ServicesTable } from './schema.js';

/** Reads and writes of services; bound to the database or to one transaction. */
export class ServiceStore {
  constructor(private readonly db: Executor) {}

  /** The service (or preview) `team/name`, or `undefined`. */
  async get(team: string, name: string): Promise<ServiceRecord | undefined> {
    const row = await this.db.selectFrom('services').selectAll().where('team', '=', team).where('name', '=', name).executeTakeFirst();
    return row && fromRow(row);
  }

  /** Services and previews, sorted by team then name; only those of `team` when given. */
  async list(team?: string): Promise<ServiceRecord[]> {
    let query = this.db.selectFrom('services').selectAll();
    if (team !== undefined) query = query.where('team', '=', team);
    const rows = await query.orderBy('team').orderBy('name').execute();
    return rows.map(fromRow);
  }

  /**
   * Insert or replace the whole record of `service.team/service.name`.
   * @throws NotFound `tenant not found: <team>` when no live tenant has that name.
   */
  async put(service: ServiceRecord): Promise<void> {
    const tenant = await this.db.selectFrom('tenants').select('uid').where('name', '=', service.team).executeTakeFirst();
    if (!tenant) throw new NotFound(`tenant not found: ${service.team}`);
    const row = toRow(service, tenant.uid);
    const { team: _team, name: _name, ...changes } = row;
    await this.db
      .insertInto('services')
      .values(row)
      .onConflict((oc) => oc.columns(['team', 'name']).doUpdateSet(changes))
      .execute();
  }

  /** Delete `team/name`. @returns whether it existed. */
  async delete(team: string, name: string): Promise<boolean> {
    const deleted = await this.db.deleteFrom('services').where('team', '=', team).where('name', '=', name).executeTakeFirst();
    return Number(deleted.numDeletedRows) > 0;
  }

  /**
   * Services of any tenant whose Application name `<team>-<name>` is `applicationName` (issue 7 item 5: two services
   * whose names join to the same text would share a host and an Argo CD Application).
   */
  async byApplicationName(applicationName: string): Promise<ServiceRecord[]> {
    const rows = await this.db
      .selectFrom('services')
      .selectAll()
      .where(sql<string>`team || '-' || name`, '=', applicationName)
      .execute();
    return rows.map(fromRow);
  }

  /**
   * Previews whose expiry is at or before `atMs` (milliseconds since the epoch), soonest first, at most `limit`.
   */
  async expiredPreviews(atMs: number, limit = 100): Promise<ServiceRecord[]> {
    const rows = await this.db
      .selectFrom('services')
      .selectAll()
      .where('preview_expires_at', 'is not', null)
      .where('preview_expires_at', '<=', atMs)
      .orderBy('preview_expires_at')
      .limit(limit)
      .execute();
    return rows.map(fromRow);
  }

  /** The earliest preview expiry (milliseconds since the epoch), or `undefined` when there is no preview. */
  async nextPreviewExpiry(): Promise<number | undefined> {
    const row = await this.db
      .selectFrom('services')
      .select('preview_expires_at')
      .where('preview_expires_at', 'is not', null)
      .orderBy('preview_expires_at')
      .limit(1)
      .executeTakeFirst();
    return row?.preview_expires_at ?? undefined;
  }
}

function toRow(s: ServiceRecord, tenantUid: string): ServicesTable {
  return {
    tenant_uid: tenantUid,
    team: s.team,
    name: s.name,
    image_tag: s.imageTag,
    host: s.host,
    port: s.port,
    component_type: s.componentType,
    has_database: s.hasDatabase ? 1 : 0,
    sync_status: s.syncStatus,
    health_status: s.healthStatus,
    message: s.message,
    deployed_tags: JSON.stringify(s.deployedTags),
    env: JSON.stringify(s.env),
    health_check_path: s.healthCheckPath,
    dockerfile_repo: s.dockerfileRepo,
    dockerfile_path: s.dockerfilePath,
    service_template: s.serviceTemplate,
    database_engine: s.database?.engine ?? null,
    database_storage: s.database?.storage ?? null,
    preview_base: s.preview?.base ?? null,
    preview_image_tag: s.preview?.imageTag ?? null,
    preview_ttl_hours: s.preview?.ttlHours ?? null,
    preview_expires_at: s.preview ? Date.parse(s.preview.expiresAt) : null,
    active_workflow: s.activeWorkflow ?? null,
    created_at: s.createdAt,
    rollout_strategy: s.strategy ?? null,
    canary_steps: s.canarySteps ?? null,
    rollout: s.rollout ? JSON.stringify(s.rollout) : null,
  };
}

function fromRow(row: ServicesTable): ServiceRecord {
  const record: ServiceRecord = {
    team: row.team,
    name: row.name,
    imageTag: row.image_tag,
    host: row.host,
    port: row.port,
    componentType: row.component_type,
    hasDatabase: row.has_database === 1,
    syncStatus: row.sync_status as SyncStatus,
    healthStatus: row.health_status as HealthStatus,
    message: row.message,
    deployedTags: json<string[]>(row.deployed_tags),
    env: json<Record<string, string>>(row.env),
    healthCheckPath: row.health_check_path,
    dockerfileRepo: row.dockerfile_repo,
    dockerfilePath: row.dockerfile_path,
    serviceTemplate: row.service_template,
    createdAt: row.created_at,
  };
  if (row.database_engine !== null) record.database = { engine: row.database_engine, storage: row.database_storage ?? '' };
  if (row.preview_base !== null && row.preview_expires_at !== null) {
    record.preview = {
      base: row.preview_base,
      imageTag: row.preview_image_tag ?? '',
      ttlHours: row.preview_ttl_hours ?? '',
      expiresAt: new Date(row.preview_expires_at).toISOString(),
    };
  }
  if (row.active_workflow !== null) record.activeWorkflow = row.active_workflow;
  if (row.rollout_strategy !== null) record.strategy = row.rollout_strategy as RolloutStrategy;
  if (row.canary_steps !== null) record.canarySteps = row.canary_steps;
  if (row.rollout !== null) record.rollout = json<RolloutView>(row.rollout);
  return record;
}
