/**
 * The record store (issue 9): every record pds keeps — tenants and members, services and previews, workflows with
 * their progress and leases, the audit trail, repository registrations and installations, single-use claims, the OAuth
 * authorization server's codes, refresh tokens, grants and clients — in SQL,
 * SQLite by default (`<dataDir>/pds.db`) or PostgreSQL (`PDS_DATABASE_URL`), shared by every process on it.
 *
 * | file | what |
 * |---|---|
 * | `database.ts` | opening either engine (WAL, `synchronous=FULL`; the `pg` pool), migrations at open |
 * | `schema.ts`, `migrations.ts` | the tables and indexes, the same on both engines |
 * | `tenants.ts`, `services.ts`, `workflows.ts`, `audit.ts`, `repositories.ts`, `once.ts`, `oauth.ts`, `logs.ts`, `meta.ts`, `governance.ts`, `webhooks.ts`, `outbox.ts`, `approvals.ts`, `images.ts` | one store per record |
 * | `tenant-records.ts` | one tenant's records as a draft a workflow step changes, and the write-back of its changes |
 * | `state-import.ts`, `log-import.ts` | the one-time import of an old `state.json` and `logs.jsonl` |
 * | `data-directory.ts` | the start-up refusal when the data directory lost its store |
 * | `errors.ts` | database failures as `Unavailable`/`Upstream` |
 *
 * Use {@link RecordStore.transaction} to make several changes commit together (a workflow step's state change, its
 * progress and, on settle, its audit entry); outside it every call commits on its own.
 */
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { sql } from './kysely.js';
import { silentLogger, type Logger } from '../../core/logger.js';
import { SqlApprovalStore } from './approvals.js';
import { SqlAuditStore } from './audit.js';
import { openDatabase, type Engine, type OpenDatabase } from './database.js';
import { asStoreError, translated } from './errors.js';
import type { Executor } from './executor.js';
import { SqlGovernanceStore } from './governance.js';
import { ImageStore } from './images.js';
import { MetaStore } from './meta.js';
import { LogStore } from './logs.js';
import { SqlOAuthStore } from './oauth.js';
import { SqlOnceStore } from './once.js';
import { RepositoryStore } from './repositories.js';
import { ServiceStore } from './services.js';
import { TenantStore } from './tenants.js';
import { WorkflowStore } from './workflows.js';
import { OutboxStore } from './outbox.js';
import { WebhookStore } from './webhooks.js';

export type { Engine } from './database.js';
export type { AttemptResult, DeliveryRow } from './outbox.js';
export type { StoredWebhook } from './webhooks.js';
export type { LogRecord } from './logs.js';
export { LeaseLost, type NewWorkflow, type Progress, type Settlement } from './workflows.js';
export type { NewApproval, VoteResult } from './approvals.js';
export type { InstallationRecord, NewTenant, RolloutCommand, ServiceRecord, StepProgress, StepStatus, TenantRecord, WorkflowRecord } from './records.js';

/** The stores, bound to the database or to one transaction. */
export interface Records {
  readonly tenants: TenantStore;
  readonly services: ServiceStore;
  readonly workflows: WorkflowStore;
  readonly audit: SqlAuditStore;
  readonly repositories: RepositoryStore;
  readonly once: SqlOnceStore;
  readonly oauth: SqlOAuthStore;
  readonly logs: LogStore;
  readonly meta: MetaStore;
  readonly governance: SqlGovernanceStore;
  readonly approvals: SqlApprovalStore;
  readonly images: ImageStore;
  readonly webhooks: WebhookStore;
  readonly outbox: OutboxStore;
}

/** Options of {@link openRecordStore}. */
export interface RecordStoreOptions {
  /** `PDS_DATA_DIR`: holds `pds.db` when no `databaseUrl` is given. */
  dataDir: string;
  /** `PDS_DATABASE_URL`: a `postgres://` URL selects PostgreSQL. */
  databaseUrl?: string;
  /** Clock for claims that expire (default: the system clock). */
  now?: () => Date;
  /** PostgreSQL connections per process (default 10). */
  poolSize?: number;
  /** SQLite: how long a write waits for another connection's lock, milliseconds (default 5,000). */
  busyTimeoutMs?: number;
  /** Newest log lines kept per service (default 5,000). */
  maxLogLinesPerService?: number;
  log?: Logger;
}

/** Milliseconds a readiness check waits for the database before answering "not ready". */
const READINESS_TIMEOUT_MS = 2_000;

/** The open record store. Create with {@link openRecordStore}. */
export class RecordStore implements Records {
  readonly tenants: TenantStore;
  readonly services: ServiceStore;
  readonly workflows: WorkflowStore;
  readonly audit: SqlAuditStore;
  readonly repositories: RepositoryStore;
  readonly once: SqlOnceStore;
  readonly oauth: SqlOAuthStore;
  readonly logs: LogStore;
  readonly meta: MetaStore;
  readonly governance: SqlGovernanceStore;
  readonly approvals: SqlApprovalStore;
  readonly images: ImageStore;
  readonly webhooks: WebhookStore;
  readonly outbox: OutboxStore;
  private closed = false;

  constructor(
    private readonly database: OpenDatabase,
    private readonly now: () => Date,
    private readonly maxLogLinesPerService?: number,
  ) {
    const bound = this.bind(database.db);
    this.tenants = bound.tenants;
    this.services = bound.services;
    this.workflows = bound.workflows;
    this.audit = bound.audit;
    this.repositories = bound.repositories;
    this.once = bound.once;
    this.oauth = bound.oauth;
    this.logs = bound.logs;
    this.meta = bound.meta;
    this.governance = bound.governance;
    this.approvals = bound.approvals;
    this.images = bound.images;
    this.webhooks = bound.webhooks;
    this.outbox = bound.outbox;
  }

  /** `sqlite` or `postgres`. */
  get engine(): Engine {
    return this.database.engine;
  }

  /** Where the records are: the SQLite file, or the PostgreSQL URL without its password. */
  get location(): string {
    return this.database.location;
  }

  /** The Kysely instance, for the import, the benchmark and tests; engines use the stores. */
  get db(): Executor {
    return this.database.db;
  }

  /**
   * Run `work` in one transaction: everything it changes through `tx` commits together, or nothing does (when it
   * throws, or the commit fails).
   * @returns what `work` returns, once committed.
   * @throws what `work` throws; `Unavailable` when the database cannot be reached or written; `Upstream` when it
   *   refused a statement.
   * @example
   * await store.transaction(async (tx) => {
   *   await tx.audit.append(entry);
   *   await tx.workflows.create({ name: entry.workflowName, … });
   * });
   */
  async transaction<T>(work: (tx: Records) => Promise<T>): Promise<T> {
    try {
      return await this.database.db.transaction().execute((trx) => work(this.bind(trx)));
    } catch (err) {
      // Errors of `work` itself (a step that throws) pass through as they are; only the database's are translated.
      throw asStoreError(err);
    }
  }

  /** True when the database answers a query within 2 s. Never throws. */
  async ping(): Promise<boolean> {
    return this.check(async () => void (await sql`select 1`.execute(this.database.db)));
  }

  /**
   * True when a write commits within 2 s (the readiness of `/readyz`: 503 while the database cannot be reached or
   * written; it recovers by itself once the database does). Never throws.
   */
  async writable(): Promise<boolean> {
    return this.check(() => this.meta.put('readiness_checked_at', this.now().toISOString()));
  }

  /** Close every connection; later calls fail with `Unavailable`. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.database.close();
  }

  private async check(probe: () => Promise<void>): Promise<boolean> {
    if (this.closed) return false;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), READINESS_TIMEOUT_MS)));
    try {
      return await Promise.race([probe().then(() => true as const), timeout]);
    } catch {
      return false;
    } finally {
      clearTimeout(timer);
    }
  }

  private bind(db: Executor): Records {
    const nowMs = () => this.now().getTime();
    return {
      tenants: translated(new TenantStore(db)),
      services: translated(new ServiceStore(db)),
      workflows: translated(new WorkflowStore(db, this.database.engine)),
      audit: translated(new SqlAuditStore(db)),
      repositories: translated(new RepositoryStore(db)),
      once: translated(new SqlOnceStore(db, nowMs)),
      oauth: translated(new SqlOAuthStore(db, nowMs)),
      logs: translated(new LogStore(db, this.maxLogLinesPerService)),
      meta: translated(new MetaStore(db)),
      governance: translated(new SqlGovernanceStore(db)),
      approvals: translated(new SqlApprovalStore(db, this.database.engine)),
      images: translated(new ImageStore(db)),
      webhooks: translated(new WebhookStore(db)),
      outbox: translated(new OutboxStore(db, this.database.engine)),
    };
  }
}

/**
 * Open the record store: SQLite at `<dataDir>/pds.db`, or PostgreSQL at `databaseUrl`; apply pending migrations.
 * Call {@link checkDataDirectory} first and {@link importStateFile} right after (the platform factory does both).
 * @throws Error naming the location when the database cannot be opened or migrated.
 * @example
 * const store = await openRecordStore({ dataDir: '.pds', databaseUrl: process.env.PDS_DATABASE_URL });
 */
export async function openRecordStore(options: RecordStoreOptions): Promise<RecordStore> {
  const database = await openDatabase({
    dataDir: options.dataDir,
    databaseUrl: options.databaseUrl,
    poolSize: options.poolSize,
    busyTimeoutMs: options.busyTimeoutMs,
    log: (options.log ?? silentLogger).child({ component: 'records' }),
  });
  return new RecordStore(database, options.now ?? (() => new Date()), options.maxLogLinesPerService);
}

/** An id for this process as a lease owner: `<host>:<pid>:<random>`, unique across restarts and replicas. */
export function leaseOwnerId(): string {
  return `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
}

export { checkDataDirectory, claimDataDirectory, DataDirectoryError, RECORDS_FILE } from './data-directory.js';
export { importStateFile } from './state-import.js';
export { importLogJournal } from './log-import.js';
