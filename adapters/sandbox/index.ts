/**
 * The embedded sandbox backend (DESIGN "Ports": the default family, no outside service needed). Every port of
 * {@link Platform} over the record store (`adapters/sql/`): SQLite at `<dataDir>/pds.db` by default, PostgreSQL when
 * `databaseUrl` is given (then several pds processes share the records and the work).
 *
 * | file | what |
 * |---|---|
 * | `state.ts` | what a step sees: the draft of one tenant and its services |
 * | `operations.ts` | the operation table: one plan factory per operation id (`plan.ts` types; `tenant-`, `service-`, `preview-operations.ts`, `steps.ts`) |
 * | `engine.ts` | the workflow engine: leases, runs steps, settles workflows and audit entries, continues after a restart |
 * | `previews.ts` | preview expiry |
 * | `backend.ts` | tenants, services, status, logs, resources |
 * | `code-host.ts` | repositories and installations |
 * | `observer.ts` | what each service runs Synced and Healthy, for verified promotion |
 *
 * The audit trail, single-use claims and OAuth records are the record store's own (`SqlAuditStore`, `SqlOnceStore`,
 * `SqlOAuthStore`). Files in `dataDir`: `pds-records.json` (which records the directory belongs with: item 13); SQLite:
 * `pds.db` with its `-wal` and `-shm`; after an upgrade, `state.json.imported` and `logs.jsonl.imported`.
 */
import { silentLogger, type Logger } from '../../core/logger.js';
import { assertImplementsEveryOperation } from '../../core/operations/index.js';
import type { Platform } from '../../core/ports.js';
import { checkDataDirectory, claimDataDirectory, importLogJournal, importStateFile, openRecordStore, type RecordStore } from '../sql/index.js';
import { sandboxBackend } from './backend.js';
import { sandboxCodeHost } from './code-host.js';
import { ApprovalExpiry } from '../sql/approval-expiry.js';
import { SandboxWorkflowEngine } from './engine.js';
import { sandboxOperations } from './operations.js';
import type { RolloutEnv } from './plan.js';
import { PreviewReaper } from './previews.js';
import { SandboxObserver } from './observer.js';
import { sandboxRegistry } from './steps.js';
import { DEFAULT_BUILD_FILE, sourceImage } from '../../core/images.js';
import { sandboxRollouts } from './rollouts.js';
import { createWebhooks, type WebhookOptions } from '../webhooks/index.js';

export { sandboxOperations } from './operations.js';
export { DEFAULT_QUOTAS } from './tenant-operations.js';
export { NOMINAL_REQUESTS } from './backend.js';

export interface SandboxOptions {
  /** Directory of `pds.db` (`PDS_DATA_DIR`); created when missing. */
  dataDir: string;
  /** `PDS_DATABASE_URL`: a `postgres://` URL keeps the records in PostgreSQL instead of `<dataDir>/pds.db`. */
  databaseUrl?: string;
  /** Service hosts are `<team>-<service>.<domain>` (`PDS_DOMAIN`). */
  domain: string;
  /** Delay before each workflow step, milliseconds (`PDS_SANDBOX_STEP_MS`). */
  stepMs: number;
  /** GitHub App slug in grant-access URLs (`PDS_GITHUB_APP_SLUG`). */
  githubAppSlug: string;
  /** Clock for timestamps and expiries (default: the system clock). Timers stay real. */
  now?: () => Date;
  /** Milliseconds per `ttl_hours` hour of a preview (default 3,600,000); tests make it small. */
  hourMs?: number;
  /**
   * Canary and blue-green simulation (issue 22): pause scale (`PDS_SANDBOX_PAUSE_SCALE`, default 1), unhealthy tags
   * (`PDS_SANDBOX_UNHEALTHY_TAGS`), the error-rate source (Prometheus, when `PDS_PROMETHEUS_URL` is set).
   */
  rollout?: { pauseScale?: number; unhealthyTags?: readonly string[]; errorRate?: RolloutEnv['errorRate'] };
  /** Newest log lines kept per service (default 5,000). */
  maxLogLinesPerService?: number;
  /**
   * How long a workflow lease lasts without renewal, milliseconds: how soon another process continues the workflows
   * of a pds that died on another host (default 15,000). A process of this host that no longer runs is noticed at once.
   */
  leaseMs?: number;
  /** SQLite: how long a write waits for another connection's lock, milliseconds (default 5,000). */
  busyTimeoutMs?: number;
  /** Where the sandbox reports failures it handles itself (default: nowhere). */
  log?: Logger;
  /**
   * The composition root's "shutting down" signal (SIGTERM): `Platform.shutdown` aborts with it, before `close()`,
   * so waits answer at once while requests in flight are still being finished.
   */
  shutdown?: AbortSignal;
  /** Webhook signing and delivery (default: private addresses refused, a random sealing key for this process). */
  webhooks?: WebhookOptions;
  /** Awaited before each workflow step (tests hold a step open with it: `EngineOptions.beforeStep`). */
  beforeStep?: (workflow: string, step: number) => Promise<void>;
}

const HOUR_MS = 3_600_000;

/** How often expired single-use claims, OAuth records and log lines beyond the bound are deleted, milliseconds. */
const SWEEP_MS = 10 * 60_000;

/**
 * Open (or create) the sandbox: refuse a data directory that lost its records (issue 7 item 13), open the record store
 * (migrations run), import an old `state.json` and `logs.jsonl` once, remove previews that expired while it was down,
 * and continue workflows left unfinished. Register `onSettled` listeners right after this resolves.
 * @throws DataDirectoryError when the data directory holds pds files but not its records; Error when the database
 *   cannot be opened or migrated, or an old `state.json` cannot be imported.
 * @example
 * const platform = await createSandboxPlatform({ dataDir: '.pds', domain: 'apps.localhost', stepMs: 1500, githubAppSlug: 'pds-platform' });
 */
export async function createSandboxPlatform(options: SandboxOptions): Promise<Platform> {
  assertImplementsEveryOperation('sandbox', sandboxOperations);
  const now = options.now ?? (() => new Date());
  const env = { domain: options.domain, hourMs: options.hourMs ?? HOUR_MS, rollout: rolloutEnv(options) };
  const log = (options.log ?? silentLogger).child({ component: 'sandbox' });
  await checkDataDirectory({ dataDir: options.dataDir, engine: options.databaseUrl ? 'postgres' : 'sqlite' });
  const store = await openRecordStore({
    dataDir: options.dataDir,
    databaseUrl: options.databaseUrl,
    now,
    busyTimeoutMs: options.busyTimeoutMs,
    maxLogLinesPerService: options.maxLogLinesPerService,
    log,
  });
  let engine: SandboxWorkflowEngine;
  let reaper: PreviewReaper;
  let expiry: ApprovalExpiry;
  let observer: SandboxObserver;
  try {
    const imported = await importStateFile(store, { dataDir: options.dataDir, now, log });
    if (imported) log.info({ imported }, 'sandbox: imported state.json into the record store');
    await importLogJournal(store, { dataDir: options.dataDir, maxPerKey: options.maxLogLinesPerService, log });
    await claimDataDirectory(store, options.dataDir);
    await sweepExpired(store, log);
    reaper = new PreviewReaper({ store, now, log });
    await reaper.sweep();
    engine = new SandboxWorkflowEngine({
      store,
      stepMs: options.stepMs,
      leaseMs: options.leaseMs,
      now,
      env,
      afterCommit: () => void reaper.rearm(),
      ...(options.beforeStep ? { beforeStep: options.beforeStep } : {}),
      log,
    });
    observer = new SandboxObserver({ engine, store, env, now, log });
    await engine.start();
    // The real clock, as the execute pipeline's expiry times are (`now` may be a test's clock for timestamps).
    expiry = new ApprovalExpiry({ approvals: store.approvals, engine, log });
    expiry.start();
  } catch (err) {
    await store.close();
    throw err;
  }
  const sweeper = setInterval(() => void sweepExpired(store, log), SWEEP_MS);
  sweeper.unref();
  const webhooks = createWebhooks(store, options.webhooks ?? { allowPrivate: false }, log.child({ component: 'webhooks' }));

  const shutdown = new AbortController();
  options.shutdown?.addEventListener('abort', () => shutdown.abort(), { once: true });
  let closing: Promise<void> | undefined;
  return {
    kind: 'sandbox',
    backend: sandboxBackend({ store, now }),
    workflows: engine,
    audit: store.audit,
    codeHost: sandboxCodeHost({ store, githubAppSlug: options.githubAppSlug, now }),
    once: store.once,
    oauth: store.oauth,
    governance: store.governance,
    approvals: store.approvals,
    images: store.images,
    async sourceImage(team, app, source) {
      const dockerfilePath = source.dockerfilePath ?? (await store.services.get(team, app))?.dockerfilePath ?? DEFAULT_BUILD_FILE;
      return sourceImage(sandboxRegistry(env), { ...source, dockerfilePath });
    },
    now,
    rollouts: sandboxRollouts({ store, now }),
    webhooks: webhooks.service,
    shutdown: shutdown.signal,
    /** True while open and a write to the record store commits within 2 s (issue 9 item 7, issue 7 item 12). */
    async ready() {
      return !shutdown.signal.aborted && (await store.writable());
    },
    close() {
      shutdown.abort();
      closing ??= (async () => {
        clearInterval(sweeper);
        await expiry.close();
        await webhooks.close();
        await engine.close();
        await observer.close();
        await reaper.close();
        await store.close();
      })();
      return closing;
    },
  };
}

/** The rollout simulation's settings from the options. */
function rolloutEnv(options: SandboxOptions): RolloutEnv {
  const { pauseScale = 1, unhealthyTags = [], errorRate } = options.rollout ?? {};
  return {
    pauseMsPerSecond: 1000 * pauseScale,
    // Often enough that a promote or abort by hand takes effect within a second, seldom enough to cost nothing.
    recheckMs: Math.min(1000, Math.max(50, options.stepMs)),
    unhealthyTags: new Set(unhealthyTags),
    ...(errorRate ? { errorRate } : {}),
  };
}

/**
 * Delete expired single-use claims and OAuth records, and log lines beyond the bound per service; failures are logged
 * (the next sweep retries).
 */
async function sweepExpired(store: RecordStore, log: Logger): Promise<void> {
  try {
    await store.once.sweep();
    await store.oauth.sweep();
    await store.logs.trim();
  } catch (err) {
    log.warn({ err }, 'sandbox: could not delete expired claims and OAuth records; retrying later');
  }
}
