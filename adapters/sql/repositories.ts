/**
 * Repository registrations and code-host app installations, per tenant identity (`tenant_uid`): a tenant re-created
 * under an old name sees neither the old one's repositories nor its installations (issue 7 item 4). On Kubernetes the
 * uid is the Namespace UID and registrations come from the GitHub App; in the sandbox, installations stand in for the
 * user installing the app (`grantAccessUrl`) and `sync` registers them.
 */
import type { Repository } from '../../core/model.js';
import type { Executor } from './executor.js';
import type { InstallationRecord } from './records.js';

/** First installation id handed out when none is given; ids only need to be unique within one store. */
const FIRST_INSTALLATION_ID = 1000;

/** Registrations and installations; bound to the database or to one transaction. */
export class RepositoryStore {
  constructor(private readonly db: Executor) {}

  /** Repositories registered for the tenant, sorted by full name. */
  async list(tenantUid: string): Promise<Repository[]> {
    const rows = await this.db.selectFrom('repositories').selectAll().where('tenant_uid', '=', tenantUid).orderBy('full_name').execute();
    return rows.map((r) => {
      const repo: Repository = { fullName: r.full_name, defaultBranch: r.default_branch, private: r.private === 1, url: r.url };
      if (r.installation_id !== null) repo.installationId = Number(r.installation_id);
      if (r.registered_by !== null) repo.registeredBy = r.registered_by;
      if (r.registered_via !== null) repo.registeredVia = r.registered_via;
      if (r.registered_at !== null) repo.registeredAt = r.registered_at;
      if (r.repository_id !== null) repo.id = r.repository_id;
      if (r.owner_id !== null) repo.ownerId = r.owner_id;
      return repo;
    });
  }

  /** Whether `fullName` is registered for the tenant. */
  async isRegistered(tenantUid: string, fullName: string): Promise<boolean> {
    const row = await this.db
      .selectFrom('repositories')
      .select('full_name')
      .where('tenant_uid', '=', tenantUid)
      .where('full_name', '=', fullName)
      .executeTakeFirst();
    return row !== undefined;
  }

  /**
   * Register repositories for the tenant, with who registered them and how (`registeredBy`, `registeredVia`,
   * `registeredAt`); those registered already are left as they are, except that a registration from before the
   * push-access rule (no `registered_by`) takes the new one's registrant, and one without the code host's ids takes
   * the new one's (never replacing ids already recorded: a repository re-created under the name is another one).
   * @returns the full names newly registered (or newly given a registrant), sorted.
   */
  async register(tenantUid: string, team: string, repositories: readonly Repository[]): Promise<string[]> {
    const added: string[] = [];
    for (const repo of repositories) {
      const registrant = {
        registered_by: repo.registeredBy ?? null,
        registered_via: repo.registeredVia ?? null,
        registered_at: repo.registeredBy ? (repo.registeredAt ?? new Date().toISOString()) : null,
      };
      const inserted = await this.db
        .insertInto('repositories')
        .values({
          tenant_uid: tenantUid,
          team,
          full_name: repo.fullName,
          default_branch: repo.defaultBranch,
          private: repo.private ? 1 : 0,
          url: repo.url,
          installation_id: repo.installationId ?? null,
          repository_id: repo.id ?? null,
          owner_id: repo.ownerId ?? null,
          ...registrant,
        })
        .onConflict((oc) => {
          const columns = oc.columns(['tenant_uid', 'full_name']);
          return registrant.registered_by === null
            ? columns.doNothing()
            : columns.doUpdateSet(registrant).where('repositories.registered_by', 'is', null);
        })
        .executeTakeFirst();
      if (Number(inserted.numInsertedOrUpdatedRows ?? 0) > 0) added.push(repo.fullName);
      if (repo.id !== undefined && repo.ownerId !== undefined) {
        await this.db
          .updateTable('repositories')
          .set({ repository_id: repo.id, owner_id: repo.ownerId })
          .where('tenant_uid', '=', tenantUid)
          .where('full_name', '=', repo.fullName)
          .where('repository_id', 'is', null)
          .execute();
      }
    }
    return added.sort();
  }

  /** Installations granted to the tenant, by id. */
  async installations(tenantUid: string): Promise<InstallationRecord[]> {
    const rows = await this.db.selectFrom('installations').selectAll().where('tenant_uid', '=', tenantUid).orderBy('id').execute();
    return rows.map((r) => ({ id: r.id, tenantUid: r.tenant_uid, team: r.team, repo: r.repo, createdAt: r.created_at }));
  }

  /**
   * Record that the tenant was granted `repo`, once per tenant and repository.
   * @param installation.id the code host's id; when absent, the next free id from 1000 (sandbox).
   * @returns the installation as stored (the earlier one when it existed).
   */
  async addInstallation(installation: Omit<InstallationRecord, 'id'> & { id?: number }): Promise<InstallationRecord> {
    // Two processes may pick the same next id: the insert then does nothing and the next round sees the other's row.
    for (;;) {
      const existing = await this.db
        .selectFrom('installations')
        .selectAll()
        .where('tenant_uid', '=', installation.tenantUid)
        .where('repo', '=', installation.repo)
        .executeTakeFirst();
      if (existing) {
        return { id: existing.id, tenantUid: existing.tenant_uid, team: existing.team, repo: existing.repo, createdAt: existing.created_at };
      }
      const id = installation.id ?? (await this.nextInstallationId());
      const inserted = await this.db
        .insertInto('installations')
        .values({ id, tenant_uid: installation.tenantUid, team: installation.team, repo: installation.repo, created_at: installation.createdAt })
        .onConflict((oc) => oc.doNothing())
        .executeTakeFirst();
      if (Number(inserted.numInsertedOrUpdatedRows ?? 0) > 0) return { ...installation, id };
      if (installation.id !== undefined) {
        throw new Error(`installation id ${installation.id} is taken by another tenant or repository`);
      }
    }
  }

  /** Forget the tenant's registrations and installations (delete-tenant). */
  async deleteTenant(tenantUid: string): Promise<void> {
    await this.db.deleteFrom('repositories').where('tenant_uid', '=', tenantUid).execute();
    await this.db.deleteFrom('installations').where('tenant_uid', '=', tenantUid).execute();
  }

  private async nextInstallationId(): Promise<number> {
    const row = await this.db
      .selectFrom('installations')
      .select((eb) => eb.fn.max<number | null>('id').as('max'))
      .executeTakeFirst();
    return Math.max(FIRST_INSTALLATION_ID - 1, row?.max ?? 0) + 1;
  }
}
