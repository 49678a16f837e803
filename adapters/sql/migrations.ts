/**
 * The schema's migrations, in code (Kysely `Migrator` with an in-code provider), the same list on SQLite and
 * PostgreSQL; they run at start (`openDatabase`). Kysely records applied migrations in `kysely_migration` and takes
 * `kysely_migration_lock` while migrating, so two replicas starting together on one PostgreSQL migrate once.
 *
 * Rules for later migrations: never edit one that shipped; add the next, named `NNNN-what` (applied in name order).
 * The only difference between the engines is the auto-increment key (`withSeq` below).
 */
import type { CreateTableBuilder, Kysely, Migration, MigrationProvider } from 'kysely';
import { Migrator, sql } from './kysely.js';
import type { Engine } from './database.js';

/** Adds `seq`: an increasing integer key (SQLite `integer primary key autoincrement`, PostgreSQL an identity column). */
function withSeq(engine: Engine) {
  return (table: CreateTableBuilder<string, never>) =>
    engine === 'sqlite'
      ? table.addColumn('seq', 'integer', (c) => c.primaryKey().autoIncrement())
      : table.addColumn('seq', 'bigint', (c) => c.primaryKey().generatedAlwaysAsIdentity());
}

function initial(engine: Engine): Migration {
  return {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('tenants')
        .addColumn('uid', 'text', (c) => c.primaryKey())
        .addColumn('name', 'text', (c) => c.notNull().unique())
        .addColumn('display_name', 'text', (c) => c.notNull())
        .addColumn('description', 'text', (c) => c.notNull())
        .addColumn('contact_email', 'text', (c) => c.notNull())
        .addColumn('quota_cpu', 'text', (c) => c.notNull())
        .addColumn('quota_memory', 'text', (c) => c.notNull())
        .addColumn('quota_pods', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();

      await db.schema
        .createTable('tenant_members')
        .addColumn('tenant_uid', 'text', (c) => c.notNull().references('tenants.uid').onDelete('cascade'))
        .addColumn('user_id', 'text', (c) => c.notNull())
        .addColumn('role', 'text', (c) => c.notNull().check(sql`role in ('admin', 'member', 'viewer')`))
        .addColumn('position', 'integer', (c) => c.notNull())
        .addPrimaryKeyConstraint('tenant_members_pk', ['tenant_uid', 'user_id'])
        .execute();
      // The tenants a user belongs to (who may see what).
      await db.schema.createIndex('tenant_members_by_user').on('tenant_members').column('user_id').execute();

      await db.schema
        .createTable('services')
        .addColumn('tenant_uid', 'text', (c) => c.notNull().references('tenants.uid').onDelete('cascade'))
        .addColumn('team', 'text', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('image_tag', 'text', (c) => c.notNull())
        .addColumn('host', 'text', (c) => c.notNull())
        .addColumn('port', 'text', (c) => c.notNull())
        .addColumn('component_type', 'text', (c) => c.notNull())
        .addColumn('has_database', 'integer', (c) => c.notNull())
        .addColumn('sync_status', 'text', (c) => c.notNull())
        .addColumn('health_status', 'text', (c) => c.notNull())
        .addColumn('message', 'text', (c) => c.notNull())
        .addColumn('deployed_tags', 'text', (c) => c.notNull())
        .addColumn('env', 'text', (c) => c.notNull())
        .addColumn('health_check_path', 'text', (c) => c.notNull())
        .addColumn('dockerfile_repo', 'text', (c) => c.notNull())
        .addColumn('dockerfile_path', 'text', (c) => c.notNull())
        .addColumn('service_template', 'text', (c) => c.notNull())
        .addColumn('database_engine', 'text')
        .addColumn('database_storage', 'text')
        .addColumn('preview_base', 'text')
        .addColumn('preview_image_tag', 'text')
        .addColumn('preview_ttl_hours', 'text')
        .addColumn('preview_expires_at', 'bigint')
        .addColumn('active_workflow', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('services_pk', ['tenant_uid', 'name'])
        .execute();
      // Services by team, in name order (listServices, getService).
      await db.schema.createIndex('services_by_team').on('services').columns(['team', 'name']).unique().execute();
      // Expired previews: only preview rows are in this index.
      await db.schema
        .createIndex('services_preview_expiry')
        .on('services')
        .column('preview_expires_at')
        .where(sql.ref('preview_expires_at'), 'is not', null)
        .execute();

      await db.schema
        .createTable('workflows')
        .$call(withSeq(engine))
        .addColumn('name', 'text', (c) => c.notNull().unique())
        .addColumn('operation', 'text', (c) => c.notNull())
        .addColumn('workflow_template', 'text', (c) => c.notNull())
        .addColumn('user_id', 'text', (c) => c.notNull())
        .addColumn('tenant', 'text', (c) => c.notNull())
        .addColumn('tenant_uid', 'text')
        .addColumn('service', 'text', (c) => c.notNull())
        .addColumn('parameters', 'text', (c) => c.notNull())
        .addColumn('phase', 'text', (c) => c.notNull().check(sql`phase in ('submitted', 'succeeded', 'failed')`))
        .addColumn('message', 'text', (c) => c.notNull())
        .addColumn('started_at', 'text', (c) => c.notNull())
        .addColumn('finished_at', 'text')
        .addColumn('steps', 'text', (c) => c.notNull())
        .addColumn('next_step', 'integer', (c) => c.notNull())
        .addColumn('due_at', 'bigint', (c) => c.notNull())
        .addColumn('lease_owner', 'text')
        .addColumn('lease_expires_at', 'bigint')
        .execute();
      // Workflows of a tenant / a service, newest first.
      await db.schema.createIndex('workflows_by_service').on('workflows').columns(['tenant', 'service', 'seq']).execute();
      // Unfinished workflows only (a handful, however long the history): what the engine claims, in submission order,
      // and the queue check "is an earlier or running workflow of this service (or its tenant) unfinished?".
      await db.schema.createIndex('workflows_unfinished').on('workflows').column('seq').where(sql.ref('phase'), '=', sql.lit('submitted')).execute();
      await db.schema
        .createIndex('workflows_unfinished_by_tenant')
        .on('workflows')
        .columns(['tenant', 'seq'])
        .where(sql.ref('phase'), '=', sql.lit('submitted'))
        .execute();

      await db.schema
        .createTable('workflow_arguments')
        .addColumn('workflow_name', 'text', (c) => c.primaryKey().references('workflows.name').onDelete('cascade'))
        .addColumn('arguments', 'text', (c) => c.notNull())
        .execute();

      await db.schema
        .createTable('audit_entries')
        .$call(withSeq(engine))
        .addColumn('id', 'text', (c) => c.notNull())
        .addColumn('timestamp', 'text', (c) => c.notNull())
        .addColumn('user_id', 'text', (c) => c.notNull())
        .addColumn('operation', 'text', (c) => c.notNull())
        .addColumn('parameters', 'text', (c) => c.notNull())
        .addColumn('workflow_name', 'text', (c) => c.notNull().unique())
        .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('submitted', 'succeeded', 'failed')`))
        .addColumn('risk_level', 'text', (c) => c.notNull())
        .addColumn('message', 'text', (c) => c.notNull())
        .addColumn('tenant', 'text', (c) => c.notNull())
        .addColumn('tenant_uid', 'text')
        .addColumn('service', 'text', (c) => c.notNull())
        .execute();
      // Newest first per tenant (by identity, and by name for platform admins), and per user (their own entries).
      await db.schema.createIndex('audit_by_tenant_uid').on('audit_entries').columns(['tenant_uid', 'seq']).execute();
      await db.schema.createIndex('audit_by_tenant').on('audit_entries').columns(['tenant', 'seq']).execute();
      await db.schema.createIndex('audit_by_user').on('audit_entries').columns(['user_id', 'seq']).execute();

      await db.schema
        .createTable('repositories')
        .addColumn('tenant_uid', 'text', (c) => c.notNull())
        .addColumn('team', 'text', (c) => c.notNull())
        .addColumn('full_name', 'text', (c) => c.notNull())
        .addColumn('default_branch', 'text', (c) => c.notNull())
        .addColumn('private', 'integer', (c) => c.notNull())
        .addColumn('url', 'text', (c) => c.notNull())
        .addColumn('installation_id', 'bigint')
        .addPrimaryKeyConstraint('repositories_pk', ['tenant_uid', 'full_name'])
        .execute();

      await db.schema
        .createTable('installations')
        .addColumn('id', 'bigint', (c) => c.primaryKey())
        .addColumn('tenant_uid', 'text', (c) => c.notNull())
        .addColumn('team', 'text', (c) => c.notNull())
        .addColumn('repo', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addUniqueConstraint('installations_tenant_repo', ['tenant_uid', 'repo'])
        .execute();

      await db.schema
        .createTable('once_claims')
        .addColumn('key', 'text', (c) => c.primaryKey())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('once_claims_expiry').on('once_claims').column('expires_at').execute();

      await db.schema
        .createTable('pds_meta')
        .addColumn('key', 'text', (c) => c.primaryKey())
        .addColumn('value', 'text', (c) => c.notNull())
        .execute();
    },
  };
}

/** The OAuth authorization server's records (issue 12): one table for every model, looked up by kind and id. */
const oauthRecords: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('oauth_records')
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('id', 'text', (c) => c.notNull())
      .addColumn('payload', 'text', (c) => c.notNull())
      .addColumn('grant_id', 'text')
      .addColumn('uid', 'text')
      .addColumn('user_code', 'text')
      .addColumn('consumed_at', 'bigint')
      .addColumn('expires_at', 'bigint')
      .addPrimaryKeyConstraint('oauth_records_pk', ['kind', 'id'])
      .execute();
    // A refresh-token family is revoked by its grant; sessions are found by uid, device codes by user code.
    await db.schema.createIndex('oauth_records_by_grant').on('oauth_records').column('grant_id').execute();
    await db.schema.createIndex('oauth_records_by_uid').on('oauth_records').columns(['kind', 'uid']).execute();
    await db.schema.createIndex('oauth_records_by_user_code').on('oauth_records').columns(['kind', 'user_code']).execute();
    await db.schema.createIndex('oauth_records_expiry').on('oauth_records').column('expires_at').execute();
  },
};

/**
 * The sandbox's log lines (moved from the bounded `logs.jsonl`, so every process on one database reads the same lines
 * and a step's lines commit with the step), and the indexes of the workflow list by tenant identity and by author.
 */
function logLines(engine: Engine): Migration {
  return {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('log_lines')
        .$call(withSeq(engine))
        .addColumn('team', 'text', (c) => c.notNull())
        .addColumn('app', 'text', (c) => c.notNull())
        .addColumn('timestamp', 'text', (c) => c.notNull())
        .addColumn('line', 'text', (c) => c.notNull())
        .addColumn('labels', 'text', (c) => c.notNull())
        .execute();
      // The newest lines of one service (or tenant, app ''), and the cut of the oldest beyond the bound.
      await db.schema.createIndex('log_lines_by_service').on('log_lines').columns(['team', 'app', 'seq']).execute();
      // GET /workflows for a tenant member: by the tenant's identity, and the caller's own; newest first.
      await db.schema.createIndex('workflows_by_tenant_uid').on('workflows').columns(['tenant_uid', 'seq']).execute();
      await db.schema.createIndex('workflows_by_user').on('workflows').columns(['user_id', 'seq']).execute();
    },
  };
}

/**
 * Who registered a repository to a tenant and how (issue 17 item 2): the code-host login whose push access was checked
 * and the permission that allowed it. Rows from before stay null: such a registration builds nothing until someone who
 * may push to the repository syncs it again (`core/operations/preflight.ts`).
 */
const repositoryRegistrants: Migration = {
  async up(db: Kysely<any>) {
    for (const column of ['registered_by', 'registered_via', 'registered_at']) {
      await db.schema.alterTable('repositories').addColumn(column, 'text').execute();
    }
  },
};

/**
 * Governance (issue 20): one policy document per tenant identity, and the tenant event feed (policy changes, freeze
 * overrides), newest first per tenant identity.
 */
function governance(engine: Engine): Migration {
  return {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('tenant_policies')
        .addColumn('tenant_uid', 'text', (c) => c.primaryKey())
        .addColumn('team', 'text', (c) => c.notNull())
        .addColumn('policy', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .addColumn('updated_by', 'text', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('tenant_events')
        .$call(withSeq(engine))
        .addColumn('id', 'text', (c) => c.notNull().unique())
        .addColumn('tenant_uid', 'text', (c) => c.notNull())
        .addColumn('team', 'text', (c) => c.notNull())
        .addColumn('type', 'text', (c) => c.notNull())
        .addColumn('user_id', 'text', (c) => c.notNull())
        .addColumn('timestamp', 'text', (c) => c.notNull())
        .addColumn('data', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('tenant_events_by_tenant').on('tenant_events').columns(['tenant_uid', 'seq']).execute();
    },
  };
}

/**
 * Approvals (issue 20 item 2): one approval request per waiting workflow, each person's approval once (the primary key
 * of `approval_votes`), and on the workflow whether it still waits (`awaiting_approval`: not claimed, not queued
 * ahead of others, not a ghost) and which approval it has.
 */
function approvals(engine: Engine): Migration {
  return {
    async up(db: Kysely<any>) {
      await db.schema.alterTable('workflows').addColumn('approval_id', 'text').execute();
      await db.schema
        .alterTable('workflows')
        .addColumn('awaiting_approval', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();
      await db.schema
        .createTable('approvals')
        .$call(withSeq(engine))
        .addColumn('id', 'text', (c) => c.notNull().unique())
        .addColumn('workflow_name', 'text', (c) => c.notNull().unique())
        .addColumn('tenant', 'text', (c) => c.notNull())
        .addColumn('tenant_uid', 'text')
        .addColumn('operation', 'text', (c) => c.notNull())
        .addColumn('parameters', 'text', (c) => c.notNull())
        .addColumn('requested_by', 'text', (c) => c.notNull())
        .addColumn('requested_at', 'text', (c) => c.notNull())
        .addColumn('required', 'integer', (c) => c.notNull())
        .addColumn('approvers', 'text', (c) => c.notNull())
        .addColumn('state', 'text', (c) => c.notNull())
        .addColumn('expires_at', 'text', (c) => c.notNull())
        .addColumn('decided_at', 'text')
        .addColumn('decided_by', 'text')
        .addColumn('reason', 'text')
        .execute();
      await db.schema.createIndex('approvals_by_state_expiry').on('approvals').columns(['state', 'expires_at']).execute();
      await db.schema.createIndex('approvals_by_tenant').on('approvals').columns(['tenant', 'seq']).execute();
      await db.schema
        .createTable('approval_votes')
        .addColumn('approval_id', 'text', (c) => c.notNull())
        .addColumn('user_id', 'text', (c) => c.notNull())
        .addColumn('comment', 'text')
        .addColumn('timestamp', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('approval_votes_pk', ['approval_id', 'user_id'])
        .execute();
    },
  };
}

/**
 * Verified promotion (issue 20 item 4): the sandbox's registry of built images (a source is built once), and the
 * intervals during which each service ran one image Synced and Healthy, at most one open per service.
 */
function images(engine: Engine): Migration {
  return {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('images')
        .addColumn('image', 'text', (c) => c.primaryKey())
        .addColumn('digest', 'text', (c) => c.notNull())
        .addColumn('built_at', 'text', (c) => c.notNull())
        .addColumn('workflow', 'text', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('image_observations')
        .$call(withSeq(engine))
        .addColumn('tenant_uid', 'text', (c) => c.notNull())
        .addColumn('team', 'text', (c) => c.notNull())
        .addColumn('app', 'text', (c) => c.notNull())
        .addColumn('image', 'text', (c) => c.notNull())
        .addColumn('digest', 'text', (c) => c.notNull())
        .addColumn('repo', 'text')
        .addColumn('dockerfile_path', 'text')
        .addColumn('since', 'text', (c) => c.notNull())
        .addColumn('until', 'text')
        .execute();
      await db.schema.createIndex('image_observations_by_image').on('image_observations').columns(['tenant_uid', 'app', 'image']).execute();
      // Replicas observing the same change race to open its interval: one wins, the other sees it open.
      await db.schema
        .createIndex('image_observations_open')
        .on('image_observations')
        .columns(['tenant_uid', 'app'])
        .unique()
        .where(sql.ref('until'), 'is', null)
        .execute();
    },
  };
}

/**
 * Webhooks (issue 20 item 5): each tenant's hooks (secrets sealed), and the delivery outbox — one row per event and
 * hook (unique, so an event written twice is delivered once), claimed with a lease by one process at a time.
 */
function webhooks(engine: Engine): Migration {
  return {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('webhooks')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('tenant_uid', 'text', (c) => c.notNull())
        .addColumn('team', 'text', (c) => c.notNull())
        .addColumn('position', 'integer', (c) => c.notNull())
        .addColumn('url', 'text', (c) => c.notNull())
        .addColumn('events', 'text', (c) => c.notNull())
        .addColumn('format', 'text', (c) => c.notNull().check(sql`format in ('json', 'slack')`))
        .addColumn('secret', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('created_by', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('webhooks_by_tenant').on('webhooks').columns(['tenant_uid', 'position']).execute();
      await db.schema
        .createTable('webhook_deliveries')
        .$call(withSeq(engine))
        .addColumn('id', 'text', (c) => c.notNull().unique())
        .addColumn('hook_id', 'text', (c) => c.notNull())
        .addColumn('tenant_uid', 'text', (c) => c.notNull())
        .addColumn('team', 'text', (c) => c.notNull())
        .addColumn('event_type', 'text', (c) => c.notNull())
        .addColumn('event_key', 'text', (c) => c.notNull())
        .addColumn('event_id', 'text', (c) => c.notNull())
        .addColumn('body', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('created_ms', 'bigint', (c) => c.notNull())
        .addColumn('attempts', 'integer', (c) => c.notNull())
        .addColumn('outcome', 'text', (c) => c.notNull().check(sql`outcome in ('pending', 'delivered', 'failed')`))
        .addColumn('last_status', 'integer')
        .addColumn('last_error', 'text')
        .addColumn('next_attempt_at', 'bigint')
        .addColumn('lease_owner', 'text')
        .addColumn('lease_expires_at', 'bigint')
        .addUniqueConstraint('webhook_deliveries_once', ['hook_id', 'event_key'])
        .execute();
      // A tenant's deliveries, newest first; and the due ones (pending only: a handful, however long the history).
      await db.schema.createIndex('webhook_deliveries_by_tenant').on('webhook_deliveries').columns(['tenant_uid', 'seq']).execute();
      await db.schema
        .createIndex('webhook_deliveries_due')
        .on('webhook_deliveries')
        .column('next_attempt_at')
        .where(sql.ref('outcome'), '=', sql.lit('pending'))
        .execute();
    },
  };
}

/**
 * The code host's ids of a registered repository and of its owner (issue 20 item 6): names can be re-used, ids cannot,
 * so a CI token of a repository re-created under a registered name is told apart. Rows from before stay null until
 * the next sync of the tenant fills them.
 */
const repositoryIds: Migration = {
  async up(db: Kysely<any>) {
    for (const column of ['repository_id', 'owner_id']) {
      await db.schema.alterTable('repositories').addColumn(column, 'text').execute();
    }
  },
};

/**
 * Rollouts (issue 22): a service's rollout strategy (`rollout_strategy`, `canary_steps`) and its current or last
 * progressive release (`rollout`, JSON); a workflow's pending promote or abort by hand (`rollout_command`, JSON), which
 * its rollout step reads and clears.
 */
const rollouts: Migration = {
  async up(db: Kysely<any>) {
    await db.schema.alterTable('services').addColumn('rollout_strategy', 'text').execute();
    await db.schema.alterTable('services').addColumn('canary_steps', 'text').execute();
    await db.schema.alterTable('services').addColumn('rollout', 'text').execute();
    await db.schema.alterTable('workflows').addColumn('rollout_command', 'text').execute();
  },
};

/**
 * Stop and retry (issue 22 item 5): who asked to stop an unfinished workflow and why (the engine settles it
 * `cancelled by <user>: <reason>`), and the failed workflow a retry re-runs. Both null for every workflow from before.
 */
const workflowControl: Migration = {
  async up(db: Kysely<any>) {
    await db.schema.alterTable('workflows').addColumn('cancelled_by', 'text').execute();
    await db.schema.alterTable('workflows').addColumn('cancel_reason', 'text').execute();
    await db.schema.alterTable('workflows').addColumn('retry_of', 'text').execute();
  },
};

/**
 * Promotes held for approval (issue 22 item 4): an approval's `subject` (`workflow` for every row from before, or
 * `promote`), the release a promote is for (`release_workflow`, the deploy workflow's name) and what the approved
 * promote did (`outcome`). A promote's row cannot carry the release's name in `workflow_name`: that column is unique
 * (one approval per waiting workflow) and SQLite cannot drop the constraint without rebuilding the table, so a
 * promote's row holds `promote:<approval id>` there, which no workflow name can be (`:` is not DNS-safe).
 */
const promoteApprovals: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .alterTable('approvals')
      .addColumn('subject', 'text', (c) => c.notNull().defaultTo('workflow'))
      .execute();
    await db.schema.alterTable('approvals').addColumn('release_workflow', 'text').execute();
    await db.schema.alterTable('approvals').addColumn('outcome', 'text').execute();
    // The pending promote of a release, looked for before another is recorded.
    await db.schema.createIndex('approvals_by_release').on('approvals').columns(['release_workflow', 'state']).execute();
  },
};

/**
 * Log reads without a table read per line (issue 23 item 4): a read counts how many of a service's newest 5,000 lines
 * are newer than `since` (`adapters/sql/logs.ts`), and with `timestamp` outside the index every counted line was
 * fetched from the table; the PostgreSQL soak's log reads slowed as `log_lines` filled. With `timestamp` in the index
 * the count is read from the index alone (SQLite's covering index, PostgreSQL's index-only scan). The new index serves
 * every query the old one did (its leading columns are the same), so the old one goes.
 */
const logLinesCovering: Migration = {
  async up(db: Kysely<any>) {
    await db.schema.createIndex('log_lines_by_service_time').on('log_lines').columns(['team', 'app', 'seq', 'timestamp']).execute();
    await db.schema.dropIndex('log_lines_by_service').execute();
  },
};

/** The migrations of `engine`, by name. */
export function migrations(engine: Engine): Record<string, Migration> {
  return {
    '0001-initial': initial(engine),
    '0002-oauth-records': oauthRecords,
    '0003-log-lines': logLines(engine),
    '0004-repository-registrants': repositoryRegistrants,
    '0005-governance': governance(engine),
    '0006-approvals': approvals(engine),
    '0007-webhooks': webhooks(engine),
    '0008-images': images(engine),
    '0009-repository-ids': repositoryIds,
    '0010-rollouts': rollouts,
    '0011-workflow-control': workflowControl,
    '0012-promote-approvals': promoteApprovals,
    '0013-log-lines-covering': logLinesCovering,
  };
}

/**
 * Apply every pending migration.
 * @throws Error naming the migration that failed (the database is left at the last one that succeeded).
 */
export async function migrateToLatest(db: Kysely<any>, engine: Engine): Promise<string[]> {
  const provider: MigrationProvider = { getMigrations: async () => migrations(engine) };
  // Migrations are independent of each other's order (each adds its own tables or columns), and branches land in any
  // order: a record store that ran a later-numbered one first still takes an earlier one it lacks.
  const { error, results } = await new Migrator({ db, provider, allowUnorderedMigrations: true }).migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === 'Error')?.migrationName ?? '(before any migration ran)';
    throw new Error(`record store migration ${failed} failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
