/**
 * The record store under real `pds serve` processes (bin/pds-src.js), on SQLite and on PostgreSQL (issue 9 items 5–7,
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
    await server.readOnly(true);
    await untilStatus(pds, '/readyz', 503);
    for (const team of ['beta', 'gamma']) expect((await execute(pds, 'root', 'create-tenant', { team_name: team })).status).toBe(503);
    await server.readOnly(false);
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

describe('two pds processes on one PostgreSQL (issue 9 item 6)', () => {
  it('run every step once, see every audit entry at once, accept a confirmation once, and finish what the other left when killed', async () => {
    const location = await testLocation('postgres');
    const a = await pdsOn(location, { stepMs: 20 });
    const b = await pdsOn({ dataDir: await tempDir(), databaseUrl: location.databaseUrl! }, { stepMs: 20 });

    const created = await execute(a, 'root', 'create-tenant', { team_name: 'acme', admins: 'alice' });
    expect(created.status).toBe(200);
    // Both see the entry at once: no waiting between the answer of one and the read of the other.
    expect((await b.api('root', 'GET', '/api/v1/audit')).body.items.map((e: any) => e.workflowName)).toContain(created.body.workflowName);
    await settledOver(b, 'root', created.body.workflowName);
    expect((await b.api('alice', 'POST', '/api/v1/repos/grant-access', { team_name: 'acme', repo: 'acme/web' })).status).toBe(200);
    expect((await a.api('alice', 'POST', '/api/v1/repos/sync', { team: 'acme' })).body.added).toEqual(['acme/web']);

    // Twelve onboardings submitted to both: each step of each runs once, by whichever process holds its lease.
    const names: string[] = [];
    for (let i = 0; i < 12; i++) {
      const res = await execute([a, b][i % 2]!, 'alice', 'deploy-service', onboard(`svc${i}`));
      expect(res.status).toBe(200);
      for (const other of [a, b]) {
        expect((await other.api('alice', 'GET', `/api/v1/workflows/${res.body.workflowName}`)).status).toBe(200);
      }
      names.push(res.body.workflowName);
    }
    for (const name of names) expect((await settledOver([a, b][names.indexOf(name) % 2]!, 'alice', name)).audit.status).toBe('succeeded');
    const ran = new Set<string>();
    for (let i = 0; i < 12; i++) {
      const lines = (await b.api('alice', 'GET', `/api/v1/logs/acme/svc${i}?lines=1000`)).body.lines as Array<{ line: string; labels: Record<string, string> }>;
      // The first onboarding builds the image (9 steps); the others reuse it by digest (issue 20 item 4: one source,
      // built once), with fewer steps. Either way each step ran once.
      const headers = lines.map((l) => /^step (\d+)\/(\d+):/.exec(l.line)).filter((m) => m !== null).map((m) => `${m[1]}/${m[2]}`);
      const total = Number(headers[0]?.split('/')[1]);
      expect([7, 8, 9]).toContain(total);
      expect(headers).toEqual(Array.from({ length: total }, (_, k) => `${k + 1}/${total}`));
      for (const l of lines) if (l.labels.workflow) ran.add(l.labels.workflow);
    }
    expect([...ran].sort()).toEqual([...names].sort());

    // A confirmation value is accepted once across both.
    const asked = await execute(a, 'alice', 'retire-service', { team_name: 'acme', component_name: 'svc0' });
    expect(asked.status).toBe(400);
    const confirm = /"confirm": "([^"]+)"/.exec(String(asked.body.error))![1]!;
    const answers = await Promise.all([a, b, a, b].map((p) => execute(p, 'alice', 'retire-service', { team_name: 'acme', component_name: 'svc0', confirm })));
    expect(answers.map((r) => r.status).sort()).toEqual([200, 400, 400, 400]);
    for (const refused of answers.filter((r) => r.status === 400)) expect(refused.body.error).toMatch(/already (been )?used/);

    // Killing one mid-workflow: the other finishes it. Deploys are submitted until one is mid-way under a's lease.
    const db = new pg.Client({ connectionString: location.databaseUrl! });
    await db.connect();
    afterThisTest(() => db.end());
    let slow: { body: any } | undefined;
    for (let attempt = 0; attempt < 10 && !slow; attempt++) {
      const res = await execute(a, 'alice', 'deploy-service', { action: 'deploy', team_name: 'acme', component_name: 'svc1', git_tag: `0.2.${attempt}`, dockerfile_repo: 'acme/web' });
      expect(res.status).toBe(200);
      for (;;) {
        const { rows } = await db.query('select phase, next_step, lease_owner from workflows where name = $1', [res.body.workflowName]);
        const row = rows[0] as { phase: string; next_step: number; lease_owner: string | null };
        if (row.phase !== 'submitted') break;
        if (row.next_step >= 2 && row.next_step <= 6) {
          if (row.lease_owner?.includes(`:${a.child.pid}:`)) slow = res;
          else await settledOver(b, 'alice', res.body.workflowName);
          break;
        }
        await new Promise((r) => setTimeout(r, 2));
      }
    }
    expect(slow).toBeDefined();
    await a.kill9();
    expect((await b.api('alice', 'GET', `/api/v1/workflows/${slow!.body.workflowName}`)).body.audit.status).toBe('submitted');
    const tag = (await b.api('alice', 'GET', `/api/v1/workflows/${slow!.body.workflowName}`)).body.audit.parameters.git_tag;
    expect((await settledOver(b, 'alice', slow!.body.workflowName)).audit.status).toBe('succeeded');
    expect((await b.api('alice', 'GET', '/api/v1/services/acme/svc1')).body.imageTag).toBe(tag);
    const lines = (await b.api('alice', 'GET', '/api/v1/logs/acme/svc1?lines=1000')).body.lines as Array<{ line: string; labels: Record<string, string> }>;
    const steps = lines.filter((l) => l.labels.workflow === slow!.body.workflowName && /^step \d\/8:/.test(l.line)).map((l) => l.line.slice(0, 8));
    expect(steps).toEqual(['step 1/8', 'step 2/8', 'step 3/8', 'step 4/8', 'step 5/8', 'step 6/8', 'step 7/8', 'step 8/8']);
  }, 90_000);
});
