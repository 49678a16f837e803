/**
 * The record store under real `pds serve` processes (bin/pds.js), on SQLite and on PostgreSQL (issue 9 items 5–7,
 * issue 7 items 12 and 13): kill -9 mid-workflow and restart; a store that cannot be written; a data directory that
 * lost its store.
 */
import { readdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { startPostgres } from '../fixtures/postgres.js';
import { startPds, settledOver, type PdsProcess } from '../helpers/pds-process.js';
import { afterThisTest, ENGINES, tempDir, testLocation, type TestLocation } from '../sql/helpers.js';

/** Start pds on `location`, stopped (SIGKILL) after the test if still running. */
async function pdsOn(location: TestLocation, options: { stepMs?: number; env?: Record<string, string> } = {}): Promise<PdsProcess> {
  const pds = await startPds({ dataDir: location.dataDir, ...(location.databaseUrl ? { databaseUrl: location.databaseUrl } : {}), ...options });
  afterThisTest(() => pds.kill9());
  return pds;
}

async function execute(pds: PdsProcess, user: string, operation: string, body: Record<string, string>) {
  return pds.api(user, 'POST', `/api/v1/operations/${operation}/execute`, body);
}

async function untilStatus(pds: PdsProcess, p: string, status: number, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await fetch(pds.url + p).catch(() => undefined);
    if (res?.status === status) return;
    if (Date.now() > deadline) throw new Error(`${p} did not answer ${status} (last ${res?.status})`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Every audit entry root sees, and whether each has its workflow (GET /workflows/{name} 200 with the same status). */
async function auditWithWorkflows(pds: PdsProcess): Promise<Array<{ name: string; status: string; workflow: number }>> {
  const audit = await pds.api('root', 'GET', '/api/v1/audit');
  expect(audit.status).toBe(200);
  return Promise.all(
    audit.body.items.map(async (e: any) => ({ name: e.workflowName, status: e.status, workflow: (await pds.api('root', 'GET', `/api/v1/workflows/${e.workflowName}`)).status })),
  );
}

const onboard = (app: string) => ({ action: 'onboard', team_name: 'acme', component_name: app, dockerfile_repo: 'acme/web', git_tag: '0.1.0', port: '8080', service_template: 'default' });

describe.each(ENGINES)('pds on %s, killed with SIGKILL mid-workflow', (engine) => {
  it('finishes the workflow after a restart; every acknowledged operation is there; no audit entry without its workflow', async () => {
    const location = await testLocation(engine);
    const first = await pdsOn(location, { stepMs: 150 });
    expect((await execute(first, 'root', 'create-tenant', { team_name: 'acme', admins: 'alice' })).status).toBe(200);
    await untilStatus(first, '/readyz', 200);
    const created = (await first.api('root', 'GET', '/api/v1/audit')).body.items[0].workflowName;
    await settledOver(first, "root", created);
    await first.api('alice', 'POST', '/api/v1/repos/grant-access', { team_name: 'acme', repo: 'acme/web' });
    await first.api('alice', 'POST', '/api/v1/repos/sync', { team: 'acme' });

    // Onboardings submitted while the process dies: whatever was answered 200 must be there afterwards.
    const acknowledged: string[] = [];
    let killed = false;
    const submitting = (async () => {
      for (let i = 0; !killed && i < 40; i++) {
        const res = await execute(first, 'alice', 'deploy-service', onboard(`web${i}`)).catch(() => undefined);
        if (res?.status === 200) acknowledged.push(res.body.workflowName);
      }
    })();
    const deadline = Date.now() + 20_000;
    while (Date.now() < deadline) {
      const running = acknowledged[0] && (await first.api('alice', 'GET', `/api/v1/workflows/${acknowledged[0]}`));
      if (running && /step [3-8]\/9/.test(running.body.note)) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    killed = true;
    await first.kill9();
    await submitting;
    expect(acknowledged.length).toBeGreaterThan(1);

    const second = await pdsOn(location, { stepMs: 5 });
    for (const name of acknowledged) expect((await settledOver(second, 'alice', name)).audit.status).toBe('succeeded');
    const entries = await auditWithWorkflows(second);
    expect(entries.map((e) => e.name)).toEqual(expect.arrayContaining(acknowledged));
    expect(entries.filter((e) => e.workflow !== 200)).toEqual([]);
    expect(entries.filter((e) => e.status === 'submitted')).toEqual([]);
    const services = (await second.api('alice', 'GET', '/api/v1/services?team=acme')).body.items.map((s: any) => s.name);
    for (const name of acknowledged) {
      const app = (await second.api('alice', 'GET', `/api/v1/workflows/${name}`)).body.audit.parameters.component_name;
      expect(services).toContain(app);
    }
    // Every step of the interrupted workflow ran once: its log has each step header once.
    const app = (await second.api('alice', 'GET', `/api/v1/workflows/${acknowledged[0]}`)).body.audit.parameters.component_name;
    const lines = (await second.api('alice', 'GET', `/api/v1/logs/acme/${app}?lines=1000`)).body.lines as Array<{ line: string }>;
    expect(lines.filter((l) => /^step \d\/9:/.test(l.line)).map((l) => l.line.slice(0, 8))).toEqual(
      ['step 1/9', 'step 2/9', 'step 3/9', 'step 4/9', 'step 5/9', 'step 6/9', 'step 7/9', 'step 8/9', 'step 9/9'],
    );
  }, 90_000);
});

describe('issue 7 item 12: a record store that cannot be written', () => {
  it('SQLite (another process holds the write lock): executes 503, /readyz 503; afterwards no ghost entries, ready by itself', async () => {
    const location = await testLocation('sqlite');
    const pds = await pdsOn(location, { env: { PDS_SQLITE_BUSY_TIMEOUT_MS: '200' } });
    expect((await execute(pds, 'root', 'create-tenant', { team_name: 'acme' })).status).toBe(200);
    const before = await auditWithWorkflows(pds);

    const other = new BetterSqlite3(path.join(location.dataDir, 'pds.db'));
    other.exec('begin immediate');
    try {
      for (const team of ['beta', 'gamma', 'delta']) {
        const refused = await execute(pds, 'root', 'create-tenant', { team_name: team });
        expect(refused.status).toBe(503);
        expect(refused.body.error).toMatch(/record store cannot be reached or written/);
      }
      await untilStatus(pds, '/readyz', 503);
    } finally {
      other.exec('rollback');
      other.close();
    }
    await untilStatus(pds, '/readyz', 200);
    const after = await auditWithWorkflows(pds);
    expect(after.map((e) => e.name).sort()).toEqual(before.map((e) => e.name).sort());
    expect(after.filter((e) => e.workflow !== 200)).toEqual([]);
    expect((await execute(pds, 'root', 'create-tenant', { team_name: 'beta' })).status).toBe(200);
  });

  it('PostgreSQL (the server turned read-only): executes 503, /readyz 503; afterwards no ghost entries, ready by itself', async () => {
    const server = await startPostgres();
    afterThisTest(() => server.stop());
    const dataDir = await tempDir();
    const pds = await pdsOn({ dataDir, databaseUrl: server.url });
    expect((await execute(pds, 'root', 'create-tenant', { team_name: 'acme' })).status).toBe(200);
    const before = await auditWithWorkflows(pds);
    const admin = async (statement: string) => {
      const client = new pg.Client({ connectionString: server.url });
      await client.connect();
      await client.query(statement);
      await client.end();
    };
    await admin('alter system set default_transaction_read_only = on');
    await admin('select pg_reload_conf()');
    await untilStatus(pds, '/readyz', 503);
    for (const team of ['beta', 'gamma']) expect((await execute(pds, 'root', 'create-tenant', { team_name: team })).status).toBe(503);
    await admin('alter system reset default_transaction_read_only');
    await admin('select pg_reload_conf()');
    await untilStatus(pds, '/readyz', 200);
    const after = await auditWithWorkflows(pds);
    expect(after.map((e) => e.name).sort()).toEqual(before.map((e) => e.name).sort());
    expect((await execute(pds, 'root', 'create-tenant', { team_name: 'beta' })).status).toBe(200);
  });
});

describe('issue 7 item 13: a data directory that holds pds files but not its store', () => {
  it('SQLite: pds.db gone — refuses to start, names the file and how to start fresh, deletes nothing', async () => {
    const location = await testLocation('sqlite');
    const pds = await pdsOn(location);
    expect((await execute(pds, 'root', 'create-tenant', { team_name: 'acme' })).status).toBe(200);
    await pds.stop();
    await rename(path.join(location.dataDir, 'pds.db'), path.join(location.dataDir, '..', `lost-${path.basename(location.dataDir)}.db`));
    const listing = (await readdir(location.dataDir)).sort();
    expect(listing).toContain('pds-records.json');

    const refused = await startPds({ dataDir: location.dataDir, waitReady: false });
    expect(await refused.exited).not.toBe(0);
    expect(refused.output()).toContain('pds-records.json');
    expect(refused.output()).toMatch(/to start fresh, move the directory aside \(mv /);
    expect((await readdir(location.dataDir)).sort()).toEqual(listing);
  });

  it('PostgreSQL: an empty database where the records were — refuses to start, names the file, deletes nothing', async () => {
    const location = await testLocation('postgres');
    const pds = await pdsOn(location);
    expect((await execute(pds, 'root', 'create-tenant', { team_name: 'acme' })).status).toBe(200);
    await pds.stop();
    const claim = await readFile(path.join(location.dataDir, 'pds-records.json'), 'utf8');
    const elsewhere = await testLocation('postgres');

    const refused = await startPds({ dataDir: location.dataDir, databaseUrl: elsewhere.databaseUrl!, waitReady: false });
    expect(await refused.exited).not.toBe(0);
    expect(refused.output()).toContain('pds-records.json');
    expect(refused.output()).toContain('holds no records of pds');
    expect(refused.output()).toMatch(/move .*pds-records\.json aside/);
    expect(await readFile(path.join(location.dataDir, 'pds-records.json'), 'utf8')).toBe(claim);
    // The database it belongs with still starts.
    await pdsOn(location);
  });

  it('a data directory with only jwt-secret (pds token ran first) starts', async () => {
    const dataDir = await tempDir();
    await writeFile(path.join(dataDir, 'jwt-secret'), 'x'.repeat(40));
    await pdsOn({ dataDir });
  });
});
