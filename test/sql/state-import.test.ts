/**
 * Importing a data directory written by the sandbox of main before the record store (`state.json`, STATE_VERSION 1):
 * the directory in `fixtures/state-v1/` was made by running that sandbox (`createSandboxPlatform` on `state.json`,
 * commit 21b82aa) through every kind of record, then imported into each engine and compared record by record.
 */
import { cp, copyFile, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { importStateFile, type RecordStore } from '../../adapters/sql/index.js';
import { tempDir as sandboxDir } from '../sandbox/helpers.js';
import type { Engine } from '../../adapters/sql/database.js';
import { ENGINES, openStore, testLocation } from './helpers.js';

const SECRET = 'hunter2-value';
const FIXTURE = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures/state-v1');

/** The layout of a STATE_VERSION 1 file, as far as these tests read it. */
interface LegacyState {
  tenants: Record<string, { name: string } & Record<string, unknown>>;
  services: Record<string, { team: string; name: string } & Record<string, unknown>>;
  workflows: Record<string, { name: string; parameters: Record<string, string>; arguments?: unknown } & Record<string, any>>;
  audit: Array<{ workflowName: string; parameters: Record<string, string> } & Record<string, any>>;
  repositories: Record<string, unknown[]>;
  installations: Array<{ id: number; team: string; repo: string }>;
}

/** `KEY=VALUE` lines as the sandbox recorded them: `KEY=***`. */
function redacted(parameters: Record<string, string>): Record<string, string> {
  if (parameters.env_vars === undefined) return parameters;
  return { ...parameters, env_vars: parameters.env_vars.split('\n').map((l) => `${l.slice(0, l.indexOf('='))}=***`).join('\n') };
}

/**
 * A copy of the fixture: every kind of record, a tenant deleted and re-created, an update-config cut off mid-way. On
 * disk the env values are in clear, as the sandbox wrote them before it redacted (main at 1c67be9), so the import
 * must redact them; `state` is the file as the sandbox records them now (values redacted).
 */
async function stateMadeByTheSandbox(): Promise<{ dir: string; state: LegacyState; running: string }> {
  const dir = await sandboxDir();
  // The fixture's single-use claim was live for an hour when it was made: move its expiry an hour from now.
  const made = JSON.parse(await readFile(path.join(FIXTURE, 'state.json'), 'utf8')) as { once: Record<string, number> };
  for (const key of Object.keys(made.once)) made.once[key] = Date.now() + 3_600_000;
  await writeFile(path.join(dir, 'state.json'), JSON.stringify(made));
  await cp(path.join(FIXTURE, 'logs.jsonl'), path.join(dir, 'logs.jsonl'));
  const running = (await readFile(path.join(FIXTURE, 'running.txt'), 'utf8')).trim();
  const state = JSON.parse(await readFile(path.join(dir, 'state.json'), 'utf8')) as LegacyState;
  expect(JSON.stringify(state)).toContain(SECRET);
  expect(state.workflows[running]).toMatchObject({ phase: 'submitted' });
  expect(JSON.stringify(state.workflows[running]!.arguments)).toContain(`${SECRET}-2`);
  for (const record of [...state.audit, ...Object.values(state.workflows)]) record.parameters = redacted(record.parameters);
  return { dir, state, running };
}

async function everything(store: RecordStore) {
  return {
    tenants: await store.tenants.list(),
    services: await store.services.list(),
    audit: await store.audit.query({ visible: 'all', limit: 10_000 }),
    workflows: await store.db.selectFrom('workflows').selectAll().orderBy('seq').execute(),
  };
}

describe.each(ENGINES)('importing a state.json made by the sandbox into %s', (engine) => {
  it('brings every record in, redacts env values, keeps tenant identities apart, renames the file', async () => {
    const { dir, state, running } = await stateMadeByTheSandbox();
    const store = await storeFor(engine, dir);
    const summary = await importStateFile(store, { dataDir: dir });

    expect(summary).toMatchObject({
      tenants: 2,
      services: 2,
      workflows: Object.keys(state.workflows).length,
      auditEntries: state.audit.length,
      repositories: 1,
      installations: 2,
      installationsOfGoneTenants: 1,
      claims: 1,
    });
    expect((await readdir(dir)).sort()).toEqual(expect.arrayContaining(['state.json.imported', 'logs.jsonl']));
    expect(await readdir(dir)).not.toContain('state.json');

    // Tenants: every field, the uid the sandbox gave each one included.
    const tenants = await store.tenants.list();
    expect(tenants).toEqual(Object.values(state.tenants).sort((a, b) => (a.name < b.name ? -1 : 1)));
    const uid = Object.fromEntries(tenants.map((t) => [t.name, t.uid]));

    // Services and previews: every field unchanged (the applied environment included).
    for (const service of Object.values(state.services)) expect(await store.services.get(service.team, service.name)).toEqual(service);
    expect((await store.services.get('acme', 'web'))!.env).toEqual({ API_TOKEN: SECRET, LOG_LEVEL: 'debug' });

    // Workflows: progress as it was; parameters redacted as today's sandbox records them; the running one's typed
    // arguments (secret values included) kept apart until it settles.
    for (const run of Object.values(state.workflows)) {
      const record = await store.workflows.get(run.name);
      expect(record).toMatchObject({
        name: run.name,
        operation: run.operation,
        workflowTemplate: run.workflowTemplate,
        userId: run.userId,
        phase: run.phase,
        message: run.message,
        startedAt: run.startedAt,
        steps: run.steps,
        nextStep: run.nextStep,
        parameters: run.parameters,
      });
      expect(record!.finishedAt).toBe(run.finishedAt);
    }
    expect(await store.workflows.arguments(running)).toEqual(state.workflows[running]!.arguments);
    expect((await store.workflows.unfinished()).map((w) => w.name)).toEqual([running]);

    // Audit: the same entries in the same order, env values redacted.
    const audit = await store.audit.query({ visible: 'all', limit: 10_000 });
    expect(audit).toEqual([...state.audit].reverse());
    const { tenants: _t, services: _s, workflows, ...rest } = await everything(store);
    expect(JSON.stringify(rest)).not.toContain(SECRET);
    expect(JSON.stringify(workflows)).not.toContain(SECRET);

    // Identity: the re-created tenant's members see its creation, not the deleted one's history.
    const newMembers = { userId: 'new-admin', tenants: [{ name: 'gone', uid: uid.gone! }] };
    const seen = await store.audit.query({ visible: newMembers, limit: 50 });
    expect(seen.map((e) => e.operation)).toEqual(['create-tenant']);
    expect(seen[0]!.parameters).toMatchObject({ admins: 'new-admin' });
    const history = await store.audit.query({ visible: 'all', limit: 50, tenant: 'gone' });
    expect(history.map((e) => e.operation)).toEqual(['create-tenant', 'delete-tenant', 'create-tenant']);
    // The deleted generation's two entries keep the uid today's sandbox gave it, which is not the live tenant's.
    const [, ...deletedGeneration] = history;
    expect(new Set(deletedGeneration.map((e) => e.tenantUid)).size).toBe(1);
    expect(deletedGeneration[0]!.tenantUid).toBeDefined();
    expect(deletedGeneration[0]!.tenantUid).not.toBe(uid.gone);
    const acmeEntries = await store.audit.query({ visible: { userId: 'bob', tenants: [{ name: 'acme', uid: uid.acme! }] }, limit: 50 });
    expect(acmeEntries.length).toBe(state.audit.filter((e) => e.parameters.team_name === 'acme').length);

    // Repositories and installations belong to the live tenant; the deleted one's installation grants nothing.
    expect(await store.repositories.list(uid.acme!)).toEqual(state.repositories.acme);
    expect((await store.repositories.installations(uid.acme!)).map((i) => [i.id, i.repo])).toEqual(
      state.installations.filter((i) => i.team === 'acme').map((i) => [i.id, i.repo]),
    );
    expect(await store.repositories.installations(uid.gone!)).toEqual([]);
    expect(await store.repositories.list(uid.gone!)).toEqual([]);

    // The single-use claim is still used.
    expect(await store.once.claim('confirm:live', 3600)).toBe(false);

    // Importing again finds no file and changes nothing.
    const before = await everything(store);
    expect(await importStateFile(store, { dataDir: dir })).toBeUndefined();
    expect(await everything(store)).toEqual(before);
  });

  it('only renames a file whose import committed before a crash, and refuses a different one', async () => {
    const { dir } = await stateMadeByTheSandbox();
    const store = await storeFor(engine, dir);
    const original = await readFile(path.join(dir, 'state.json'), 'utf8');
    await importStateFile(store, { dataDir: dir });
    const before = await everything(store);

    // The process stopped between the commit and the rename.
    await copyFile(path.join(dir, 'state.json.imported'), path.join(dir, 'state.json'));
    expect(await importStateFile(store, { dataDir: dir })).toBeUndefined();
    expect(await readdir(dir)).not.toContain('state.json');
    expect(await everything(store)).toEqual(before);

    // Another state.json beside records that hold an import already is refused and left in place.
    await writeFile(path.join(dir, 'state.json'), original.replace('"acme"', '"acme"     '));
    await expect(importStateFile(store, { dataDir: dir })).rejects.toThrow(/was not imported/);
    expect(await readdir(dir)).toContain('state.json');
  });

  it('imports a running workflow of a file written before typed arguments without any (the engine fails it)', async () => {
    const { dir, running } = await stateMadeByTheSandbox();
    const file = path.join(dir, 'state.json');
    const old = JSON.parse(await readFile(file, 'utf8')) as LegacyState;
    delete old.workflows[running]!.arguments;
    await writeFile(file, JSON.stringify(old));
    const store = await storeFor(engine, dir);
    await importStateFile(store, { dataDir: dir });
    expect(await store.workflows.get(running)).toMatchObject({ phase: 'submitted', parameters: { env_vars: 'API_TOKEN=***' } });
    expect(await store.workflows.arguments(running)).toBeUndefined();
  });

  it('refuses a state.json that is not version 1, importing nothing and keeping the file', async () => {
    const dir = await sandboxDir();
    await writeFile(path.join(dir, 'state.json'), '{"version":2}');
    const store = await storeFor(engine, dir);
    await expect(importStateFile(store, { dataDir: dir })).rejects.toThrow(/not sandbox state of version 1/);
    await writeFile(path.join(dir, 'state.json'), '{"version":1,');
    await expect(importStateFile(store, { dataDir: dir })).rejects.toThrow(/not valid JSON/);
    expect(await readdir(dir)).toContain('state.json');
    expect(await store.tenants.list()).toEqual([]);
  });
});

/** A store whose data directory is `dir` (SQLite: `dir/pds.db`; PostgreSQL: a database of its own). */
async function storeFor(engine: Engine, dir: string): Promise<RecordStore> {
  return openStore(engine === 'sqlite' ? { dataDir: dir } : { ...(await testLocation('postgres')), dataDir: dir });
}
