/**
 * The one-time import of a data directory written before the record store: `<dataDir>/state.json` (the sandbox's
 * document, STATE_VERSION 1) goes into the database in one transaction, and the file is then renamed
 * `state.json.imported` (kept, never deleted). The platform factory calls {@link importStateFile} right after opening
 * the store.
 *
 * Nothing is lost, with two deliberate changes (issue 7 items 2 and 4):
 * - **env values are redacted** in audit entries and workflow parameters (`KEY=***`, keys kept), as a file written
 *   before pds redacted them holds them in clear. A workflow still running keeps its typed `arguments` (which a file
 *   written since holds, secret values included) apart, in `workflow_arguments`, until it settles; a running workflow
 *   of an older file has none, and the engine fails it as one it cannot resume, as the sandbox does.
 * - **Tenant identity.** Old state knew tenants by name only. Each live tenant gets a uid; records are given that uid
 *   when they belong to it — made at or after its creation, or the create-tenant that created it. Records of an
 *   earlier tenant of the same name (deleted, then re-created) get none, so the new members do not read them
 *   (platform admins still do). Installations of an earlier tenant, or of a tenant that no longer exists, grant
 *   nothing and are not imported (counted in the summary).
 *
 * A crash between the commit and the rename is harmless: the import marker in `pds_meta` is committed with the data,
 * and the next start only renames the file.
 */
import { rename } from 'node:fs/promises';
import { z } from 'zod';
import { AuditEntry, AuditStatus, HealthStatus, Repository, Service, SyncStatus, Tenant } from '../../core/model.js';
import { silentLogger, type Logger } from '../../core/logger.js';
import { readLegacyFile } from './legacy-file.js';
import type { RecordStore, Records, TenantRecord } from './index.js';

/** The file imported. */
export const LEGACY_STATE_FILE = 'state.json';
/** What it is renamed to once imported. */
export const IMPORTED_STATE_FILE = 'state.json.imported';
/** `pds_meta` key recording the import (SHA-256 of the file and when). */
const IMPORT_MARKER = 'state_json_imported';

/**
 * The layout of `state.json` STATE_VERSION 1, frozen here: the sandbox's own schema (`adapters/sandbox/state.ts`)
 * moves on, the files written by it do not.
 */
const StateV1 = z.object({
  version: z.literal(1),
  tenants: z.record(z.string(), Tenant.extend({ createdAt: z.string(), uid: z.string().optional() })),
  services: z.record(
    z.string(),
    Service.extend({
      syncStatus: SyncStatus,
      healthStatus: HealthStatus,
      message: z.string(),
      deployedTags: z.array(z.string()),
      env: z.record(z.string(), z.string()),
      healthCheckPath: z.string(),
      dockerfileRepo: z.string(),
      dockerfilePath: z.string(),
      serviceTemplate: z.string(),
      database: z.object({ engine: z.string(), storage: z.string() }).optional(),
      preview: z.object({ base: z.string(), imageTag: z.string(), ttlHours: z.string(), expiresAt: z.string() }).optional(),
      activeWorkflow: z.string().optional(),
      createdAt: z.string(),
    }),
  ),
  workflows: z.record(
    z.string(),
    z.object({
      name: z.string(),
      operation: z.string(),
      workflowTemplate: z.string(),
      parameters: z.record(z.string(), z.string()),
      arguments: z.unknown().optional(),
      userId: z.string(),
      phase: AuditStatus,
      message: z.string(),
      startedAt: z.string(),
      finishedAt: z.string().optional(),
      steps: z.array(z.object({ name: z.string(), status: z.enum(['pending', 'succeeded', 'failed']), startedAt: z.string().optional(), finishedAt: z.string().optional() })),
      nextStep: z.number().int().min(0),
      tenantUid: z.string().optional(),
    }),
  ),
  audit: z.array(AuditEntry.extend({ tenantUid: z.string().optional() })),
  repositories: z.record(z.string(), z.array(Repository)),
  installations: z.array(z.object({ id: z.number().int(), team: z.string(), repo: z.string(), createdAt: z.string() })),
  once: z.record(z.string(), z.number()),
});
type StateV1 = z.infer<typeof StateV1>;

/** What an import brought in. */
export interface ImportSummary {
  file: string;
  tenants: number;
  services: number;
  workflows: number;
  auditEntries: number;
  repositories: number;
  installations: number;
  claims: number;
  /** Installations not imported: of a tenant that no longer exists, or of an earlier tenant of the same name. */
  installationsOfGoneTenants: number;
  /** Claims not imported because they had expired. */
  expiredClaims: number;
}

/**
 * Import `<dataDir>/state.json` if there is one, then rename it `state.json.imported`.
 * @returns what was imported, or `undefined` when there was no file (or it had been imported before a crash; it is
 *   then only renamed).
 * @throws Error when the file is not valid JSON or not STATE_VERSION 1 (nothing imported, the file left in place), or
 *   when the database already holds a record the file also holds.
 */
export async function importStateFile(
  store: RecordStore,
  options: { dataDir: string; now?: () => Date; log?: Logger },
): Promise<ImportSummary | undefined> {
  const log = options.log ?? silentLogger;
  const legacy = await readLegacyFile(options.dataDir, LEGACY_STATE_FILE, IMPORTED_STATE_FILE);
  if (!legacy) return undefined;
  const { file, text, digest, target } = legacy;
  const marker = await store.meta.get(IMPORT_MARKER);
  if (marker) {
    if ((JSON.parse(marker) as { sha256?: string }).sha256 !== digest) {
      throw new Error(
        `${file} was not imported: the records hold an import of another state.json (${marker}); move ${file} aside to start`,
      );
    }
    // The import committed but the process stopped before the rename.
    await rename(file, target);
    log.info({ file }, 'records: state.json had been imported already; renamed it');
    return undefined;
  }

  const state = parseState(file, text);
  const now = (options.now ?? (() => new Date()))();
  const summary = await store.transaction(async (tx) => {
    const counts = await importState(tx, state, now);
    await tx.meta.put(IMPORT_MARKER, JSON.stringify({ sha256: digest, at: now.toISOString() }));
    return counts;
  });
  await rename(file, target);
  const result = { file, ...summary };
  log.info({ ...result }, 'records: imported state.json into the record store');
  return result;
}

function parseState(file: string, text: string): StateV1 {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new Error(`${file} is not valid JSON (${(err as Error).message}); move it aside to start without it`);
  }
  const parsed = StateV1.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(
      `${file} is not sandbox state of version 1 (${issue?.path.join('.') || '(root)'}: ${issue?.message}); ` +
        'move it aside to start without it',
    );
  }
  return parsed.data;
}

async function importState(tx: Records, state: StateV1, now: Date): Promise<Omit<ImportSummary, 'file'>> {
  const tenants = new Map<string, TenantRecord>();
  for (const tenant of Object.values(state.tenants)) tenants.set(tenant.name, await tx.tenants.create(tenant));

  // Which records belong to the live tenant of their name (see the file comment).
  const creators = new Map<string, string>(); // tenant name → workflow that created the live tenant
  for (const entry of state.audit) {
    const tenant = tenants.get(entry.parameters.team_name ?? '');
    if (entry.operation === 'create-tenant' && entry.status === 'succeeded' && tenant && entry.timestamp <= tenant.createdAt) {
      creators.set(tenant.name, entry.workflowName);
    }
  }
  const ownerOf = (team: string | undefined, at: string, workflow?: string): string | undefined => {
    const tenant = tenants.get(team ?? '');
    if (!tenant) return undefined;
    return at >= tenant.createdAt || (workflow !== undefined && creators.get(tenant.name) === workflow) ? tenant.uid : undefined;
  };

  for (const service of Object.values(state.services)) await tx.services.put(service);

  // Submission order: the audit trail's order, then workflows it does not name by start time.
  const order = new Map(state.audit.map((e, i) => [e.workflowName, i]));
  const workflows = Object.values(state.workflows).sort(
    (a, b) => (order.get(a.name) ?? Infinity) - (order.get(b.name) ?? Infinity) || (a.startedAt < b.startedAt ? -1 : 1),
  );
  for (const run of workflows) {
    await tx.workflows.create(
      {
        name: run.name,
        operation: run.operation,
        workflowTemplate: run.workflowTemplate,
        parameters: redactParameters(run.parameters),
        userId: run.userId,
        steps: run.steps.map((s) => s.name),
        message: run.message,
        startedAt: run.startedAt,
        tenantUid: run.tenantUid ?? ownerOf(run.parameters.team_name, run.startedAt, run.name) ?? null,
        arguments: run.phase === 'submitted' ? run.arguments : undefined,
      },
      { phase: run.phase, steps: run.steps, nextStep: run.nextStep, finishedAt: run.finishedAt },
    );
  }

  for (const entry of state.audit) {
    const { tenantUid, ...fields } = entry;
    await tx.audit.append(
      { ...fields, parameters: redactParameters(entry.parameters) },
      { tenantUid: tenantUid ?? ownerOf(entry.parameters.team_name, entry.timestamp, entry.workflowName) ?? null },
    );
  }

  let repositories = 0;
  for (const [team, list] of Object.entries(state.repositories)) {
    const tenant = tenants.get(team);
    if (tenant) repositories += (await tx.repositories.register(tenant.uid, team, list)).length;
  }

  let installations = 0;
  let installationsOfGoneTenants = 0;
  for (const installation of state.installations) {
    const uid = ownerOf(installation.team, installation.createdAt);
    if (!uid) {
      installationsOfGoneTenants++;
      continue;
    }
    await tx.repositories.addInstallation({ ...installation, tenantUid: uid });
    installations++;
  }

  let claims = 0;
  let expiredClaims = 0;
  for (const [key, expiresAt] of Object.entries(state.once)) {
    if (expiresAt <= now.getTime()) {
      expiredClaims++;
      continue;
    }
    // The sandbox prefixed keys with "k:" (see adapters/sandbox/once.ts); the store keeps the caller's key.
    await tx.once.restore(key.startsWith('k:') ? key.slice(2) : key, expiresAt);
    claims++;
  }

  return {
    tenants: tenants.size,
    services: Object.keys(state.services).length,
    workflows: workflows.length,
    auditEntries: state.audit.length,
    repositories,
    installations,
    claims,
    installationsOfGoneTenants,
    expiredClaims,
  };
}

/**
 * Parameters with `env_vars` redacted: every `KEY=VALUE` line becomes `KEY=***`, any other non-blank line `***`.
 * @example redactParameters({ env_vars: 'A=1\nB=2' }) // { env_vars: 'A=***\nB=***' }
 */
export function redactParameters(parameters: Record<string, string>): Record<string, string> {
  if (parameters.env_vars === undefined) return { ...parameters };
  const redacted = parameters.env_vars
    .split(/\r?\n/)
    .filter((line) => line.trim() !== '')
    .map((line) => {
      const eq = line.indexOf('=');
      return eq > 0 ? `${line.slice(0, eq).trim()}=***` : '***';
    })
    .join('\n');
  return { ...parameters, env_vars: redacted };
}
