/**
 * The embedded sandbox backend (DESIGN "Ports": the default family, no outside service needed). Every port of
 * {@link Platform} over one durable state in `dataDir`:
 *
 * | file | what |
 * |---|---|
 * | `state.ts` | the persisted document (zod) |
 * | `store.ts` | atomic, serialized writes; directory lock |
 * | `journal.ts` | log lines (`logs.jsonl`, bounded per service) |
 * | `operations.ts` | the operation table: one plan factory per operation id (`plan.ts` types; `tenant-`, `service-`, `preview-operations.ts`, `steps.ts`) |
 * | `engine.ts` | the workflow engine: runs steps, settles workflows and audit entries, resumes after restart |
 * | `previews.ts` | preview expiry |
 * | `backend.ts` | tenants, services, status, logs, resources |
 * | `audit.ts`, `code-host.ts`, `once.ts`, `oauth.ts` | the other ports |
 *
 * Files in `dataDir`: `state.json`, `logs.jsonl`, `lock` (and, for a moment during a readiness check, `ready-probe`).
 */
import path from 'node:path';
import { silentLogger, type Logger } from '../../core/logger.js';
import { assertImplementsEveryOperation } from '../../core/operations/index.js';
import { sandboxOperations } from './operations.js';
import type { Platform } from '../../core/ports.js';
import { sandboxAuditStore } from './audit.js';
import { sandboxBackend } from './backend.js';
import { sandboxCodeHost } from './code-host.js';
import { SandboxWorkflowEngine } from './engine.js';
import { LogJournal } from './journal.js';
import { dropExpiredClaims, sandboxOnceStore } from './once.js';
import { dropExpiredOAuthRecords, sandboxOAuthStore } from './oauth.js';
import { PreviewReaper } from './previews.js';
import { serviceKey } from './state.js';
import { StateStore } from './store.js';

export { sandboxOperations } from './operations.js';
export { DEFAULT_QUOTAS } from './tenant-operations.js';
export { NOMINAL_REQUESTS } from './backend.js';

export interface SandboxOptions {
  /** Directory holding the state (`PDS_DATA_DIR`); created when missing. One process at a time. */
  dataDir: string;
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
  /** Newest log lines kept per service (default 5,000). */
  maxLogLinesPerService?: number;
  /** Where the sandbox reports failures it handles itself (default: nowhere). */
  log?: Logger;
  /**
   * The composition root's "shutting down" signal (SIGTERM): `Platform.shutdown` aborts with it, before `close()`,
   * so waits answer at once while requests in flight are still being finished.
   */
  shutdown?: AbortSignal;
}

const HOUR_MS = 3_600_000;

/**
 * Open (or create) the sandbox in `options.dataDir`: load the state, remove previews that expired while it was down,
 * and resume workflows that were running when the previous process stopped. Register `onSettled` listeners right
 * after this resolves; resumed workflows take their next step only after `stepMs`.
 * @throws Error when the directory is in use by another process or its `state.json` is not valid sandbox state.
 * @example
 * const platform = await createSandboxPlatform({ dataDir: '.pds', domain: 'apps.localhost', stepMs: 1500, githubAppSlug: 'pds-platform' });
 * await platform.workflows.submit({ name: 'create-tenant-x7k2p', operation: 'create-tenant', parameters: { team_name: 'acme' }, recorded: { team_name: 'acme' }, userId: 'alice', audit });
 */
export async function createSandboxPlatform(options: SandboxOptions): Promise<Platform> {
  assertImplementsEveryOperation('sandbox', sandboxOperations);
  const now = options.now ?? (() => new Date());
  const log = (options.log ?? silentLogger).child({ component: 'sandbox' });
  const store = await StateStore.open(options.dataDir);
  let journal: LogJournal;
  try {
    journal = await LogJournal.open(path.join(store.dataDir, 'logs.jsonl'), {
      maxPerKey: options.maxLogLinesPerService,
      // `latest`: lines are appended in the same turn as the change that creates their service, before it is on disk.
      keep: (team, app) => (app === '' ? team in store.latest.tenants : serviceKey(team, app) in store.latest.services),
    });
    await store.mutate((draft) => {
      dropExpiredClaims(draft, now().getTime());
      dropExpiredOAuthRecords(draft, now().getTime());
    });
  } catch (err) {
    await store.close();
    throw err;
  }

  const reaper = new PreviewReaper({ store, journal, now, log });
  await reaper.sweep();
  const engine = new SandboxWorkflowEngine({
    store,
    journal,
    stepMs: options.stepMs,
    now,
    env: { domain: options.domain, hourMs: options.hourMs ?? HOUR_MS },
    afterCommit: () => reaper.rearm(),
    log,
  });
  engine.resumeAll();
  reaper.rearm();

  const shutdown = new AbortController();
  options.shutdown?.addEventListener('abort', () => shutdown.abort(), { once: true });
  let closing: Promise<void> | undefined;
  return {
    kind: 'sandbox',
    backend: sandboxBackend({ store, journal, now }),
    workflows: engine,
    audit: sandboxAuditStore(store),
    codeHost: sandboxCodeHost({ store, githubAppSlug: options.githubAppSlug, now }),
    once: sandboxOnceStore(store, now),
    oauth: sandboxOAuthStore(store, now),
    shutdown: shutdown.signal,
    /** True while open and the state can be written (a failed write is retried, else a probe file is written). */
    async ready() {
      return !shutdown.signal.aborted && (await store.probe());
    },
    close() {
      shutdown.abort();
      closing ??= (async () => {
        await engine.close();
        await reaper.close();
        await journal.flush();
        await store.close();
      })();
      return closing;
    },
  };
}
