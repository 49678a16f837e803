/**
 * Issue 7 items 2, 4 and 6 through real HTTP against pds on the record store (SQLite in its data directory): env values
 * never readable after the step that applies them; a re-created tenant does not inherit its predecessor's history or
 * repositories; operations on one service take effect in submission order.
 */
import { cp } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import BetterSqlite3 from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { connectHttp, CLIENTS, textOf } from '../helpers/mcp-clients.js';
import { recordingLogger } from '../helpers/log.js';
import { startTestServer, waitForWorkflow, type TestServer } from '../helpers/server.js';
import { tempDir } from '../sandbox/helpers.js';

const SECRET = 'sk_live_do-not-show-me';
const FIXTURE = path.join(path.dirname(fileURLToPath(import.meta.url)), '../sql/fixtures/state-v1');

const servers: TestServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.stop()));
});

async function start(env: Record<string, string> = {}) {
  const recording = recordingLogger('debug');
  const pds = await startTestServer(env, { log: recording.log });
  servers.push(pds);
  return { pds, recording };
}

/** Execute as `user`, confirming with the value pds hands back when the operation asks for one. */
async function execute(pds: TestServer, user: string, operation: string, body: Record<string, string>): Promise<string> {
  let res = await pds.api(user, 'POST', `/api/v1/operations/${operation}/execute`, body);
  const confirm = res.status === 400 ? /"confirm": "([^"]+)"/.exec(String(res.body.error))?.[1] : undefined;
  if (confirm) res = await pds.api(user, 'POST', `/api/v1/operations/${operation}/execute`, { ...body, confirm });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.workflowName as string;
}

async function executed(pds: TestServer, user: string, operation: string, body: Record<string, string>): Promise<any> {
  return waitForWorkflow(pds, user, await execute(pds, user, operation, body));
}

/** Register `repo` to `team` the way a tenant does: grant access (the sandbox's installation), then sync. */
async function registerRepo(pds: TestServer, user: string, team: string, repo: string): Promise<void> {
  expect((await pds.api(user, 'POST', '/api/v1/repos/grant-access', { team_name: team, repo })).status).toBe(200);
  expect((await pds.api(user, 'POST', '/api/v1/repos/sync', { team })).status).toBe(200);
}

/**
 * Every row of `pds.db` as text (what anyone with the database file reads), but for the services' applied environment
 * (`services.env`, the stand-in for the service's Secret: where the values must be), which is returned apart.
 */
function databaseText(dataDir: string): { records: string; environments: string } {
  const db = new BetterSqlite3(path.join(dataDir, 'pds.db'), { readonly: true });
  try {
    const tables = db.prepare("select name from sqlite_master where type = 'table'").all() as Array<{ name: string }>;
    const services = db.prepare('select * from services').all() as Array<Record<string, unknown>>;
    const records = tables
      .filter(({ name }) => name !== 'services')
      .map(({ name }) => JSON.stringify(db.prepare(`select * from "${name}"`).all()))
      .concat(JSON.stringify(services.map(({ env: _env, ...rest }) => rest)))
      .join('\n');
    return { records, environments: JSON.stringify(services.map((s) => s.env)) };
  } finally {
    db.close();
  }
}

async function listAuditOverMcp(pds: TestServer, user: string): Promise<string> {
  const client = await connectHttp(CLIENTS[0]!, `${pds.url}/mcp?toolsets=all`, { Authorization: `Bearer ${await pds.token(user)}` });
  try {
    const result = await client.callTool({ name: 'platform_list_audit', arguments: {} });
    expect(result.isError ?? false).toBe(false);
    return JSON.stringify(result.structuredContent ?? null) + textOf(result);
  } finally {
    await client.close();
  }
}

describe('issue 7 item 2: env values are redacted everywhere but the step that applies them', () => {
  it('in /audit, /workflows/{name}, platform_list_audit, every database row and the log; the service runs with them', async () => {
    const { pds, recording } = await start();
    await executed(pds, 'root', 'create-tenant', { team_name: 'acme', admins: 'alice', viewers: 'vic' });
    await registerRepo(pds, 'alice', 'acme', 'acme/web');
    const onboard = { action: 'onboard', team_name: 'acme', component_name: 'web', dockerfile_repo: 'acme/web', git_tag: '0.1.0', port: '8080', service_template: 'default' };
    await executed(pds, 'alice', 'deploy-service', onboard);
    const name = await execute(pds, 'alice', 'deploy-service', {
      action: 'update-config',
      team_name: 'acme',
      component_name: 'web',
      env_vars: `LOG_LEVEL=debug\nAPI_TOKEN=${SECRET}`,
    });
    // While it runs, the typed arguments are kept apart (workflow_arguments); nothing anyone reads shows them.
    const running = await pds.api('vic', 'GET', `/api/v1/workflows/${name}`);
    expect(JSON.stringify(running.body)).not.toContain(SECRET);
    const done = await waitForWorkflow(pds, 'alice', name);
    expect(done.audit).toMatchObject({ status: 'succeeded', parameters: { env_vars: 'LOG_LEVEL=***\nAPI_TOKEN=***' } });

    for (const user of ['root', 'alice', 'vic']) {
      const audit = await pds.api(user, 'GET', '/api/v1/audit');
      expect(audit.status).toBe(200);
      expect(audit.body.items.find((e: any) => e.workflowName === name)?.parameters.env_vars).toBe('LOG_LEVEL=***\nAPI_TOKEN=***');
      expect(JSON.stringify(audit.body)).not.toContain(SECRET);
      const workflow = await pds.api(user, 'GET', `/api/v1/workflows/${name}`);
      expect(workflow.status).toBe(200);
      expect(JSON.stringify(workflow.body)).not.toContain(SECRET);
      const overMcp = await listAuditOverMcp(pds, user);
      expect(overMcp).toContain('API_TOKEN=***');
      expect(overMcp).not.toContain(SECRET);
    }
    // The only place the value is kept is the service's environment (the stand-in for its Secret), which no read returns.
    const rows = databaseText(pds.dataDir);
    expect(rows.records.includes(SECRET)).toBe(false);
    expect(rows.environments.includes(SECRET)).toBe(true);
    expect(JSON.stringify((await pds.api('root', 'GET', '/api/v1/services/acme/web')).body)).not.toContain(SECRET);
    expect(JSON.stringify(recording.lines).includes(SECRET)).toBe(false);
    expect(recording.lines.length).toBeGreaterThan(0);
  });

  it('in records imported from a state.json written before the fix (the values were in clear there)', async () => {
    const dataDir = await tempDir();
    await cp(path.join(FIXTURE, 'state.json'), path.join(dataDir, 'state.json'));
    await cp(path.join(FIXTURE, 'logs.jsonl'), path.join(dataDir, 'logs.jsonl'));
    const { pds, recording } = await start({ PDS_DATA_DIR: dataDir });
    const audit = await pds.api('root', 'GET', '/api/v1/audit');
    const configs = audit.body.items.filter((e: any) => e.parameters.env_vars !== undefined);
    expect(configs.map((e: any) => e.parameters.env_vars).sort()).toEqual(['API_TOKEN=***', 'LOG_LEVEL=***\nAPI_TOKEN=***']);
    expect(JSON.stringify(audit.body)).not.toContain('hunter2');
    for (const entry of configs) {
      const workflow = await pds.api('root', 'GET', `/api/v1/workflows/${entry.workflowName}`);
      expect(JSON.stringify(workflow.body)).not.toContain('hunter2');
    }
    expect(await listAuditOverMcp(pds, 'root')).not.toContain('hunter2');
    // The cut-off update-config finishes with its values (kept apart until then), and then none is left in any record
    // but the service's environment.
    const running = (await import('node:fs')).readFileSync(path.join(FIXTURE, 'running.txt'), 'utf8').trim();
    expect(await waitForWorkflow(pds, 'root', running)).toMatchObject({ audit: { status: 'succeeded' } });
    const rows = databaseText(dataDir);
    expect(rows.records.includes('hunter2')).toBe(false);
    expect(rows.environments.includes('hunter2-value-2')).toBe(true);
    expect(JSON.stringify(recording.lines).includes('hunter2')).toBe(false);
    // The old log journal came along, and both files are kept under their new names.
    // (Read in the database: the fixture's lines may be older than the 7 days GET /logs looks back.)
    const db = new BetterSqlite3(path.join(dataDir, 'pds.db'), { readonly: true });
    const imported = db.prepare("select count(*) as n from log_lines where team = 'acme' and app = 'web' and labels like '%deploy-service-1158-2%'").get() as { n: number };
    db.close();
    expect(imported.n).toBeGreaterThan(5);
    const { readdirSync } = await import('node:fs');
    expect(readdirSync(dataDir)).toEqual(expect.arrayContaining(['state.json.imported', 'logs.jsonl.imported', 'pds.db', 'pds-records.json']));
    expect(readdirSync(dataDir)).not.toContain('state.json');
    expect(readdirSync(dataDir)).not.toContain('logs.jsonl');
  });
});

describe('issue 7 item 4: a deleted tenant re-created under its name', () => {
  it("shows the new admins none of the old history, does not re-register the old repositories; platform admins see all", async () => {
    const { pds } = await start();
    await executed(pds, 'root', 'create-tenant', { team_name: 'acme', admins: 'old-admin' });
    await registerRepo(pds, 'old-admin', 'acme', 'old-admin/private');
    const onboard = { action: 'onboard', team_name: 'acme', component_name: 'web', dockerfile_repo: 'old-admin/private', git_tag: '0.1.0', port: '8080', service_template: 'default' };
    const oldDeploy = (await executed(pds, 'old-admin', 'deploy-service', onboard)).workflow;
    const oldConfig = (await executed(pds, 'old-admin', 'deploy-service', { action: 'update-config', team_name: 'acme', component_name: 'web', env_vars: 'K=v' })).workflow;
    await executed(pds, 'root', 'delete-tenant', { team_name: 'acme' });
    const recreated = (await executed(pds, 'root', 'create-tenant', { team_name: 'acme', admins: 'new-admin' })).workflow;

    const seen = await pds.api('new-admin', 'GET', '/api/v1/audit');
    expect(seen.body.items.map((e: any) => e.workflowName)).toEqual([recreated]);
    for (const old of [oldDeploy, oldConfig]) expect((await pds.api('new-admin', 'GET', `/api/v1/workflows/${old}`)).status).toBe(404);
    expect(await listAuditOverMcp(pds, 'new-admin')).not.toContain(oldDeploy);

    const synced = await pds.api('new-admin', 'POST', '/api/v1/repos/sync', { team: 'acme' });
    expect(synced.status).toBe(200);
    expect(synced.body).toMatchObject({ items: [], added: [] });
    expect((await pds.api('new-admin', 'GET', '/api/v1/repos?team=acme')).body.items).toEqual([]);
    const refused = await pds.api('new-admin', 'POST', '/api/v1/operations/deploy-service/execute', onboard);
    expect(refused.status).toBe(403);
    expect(refused.body.error).toContain('is not registered to tenant "acme"');

    const all = await pds.api('root', 'GET', '/api/v1/audit');
    expect(all.body.items.map((e: any) => e.workflowName)).toEqual(expect.arrayContaining([recreated, oldDeploy, oldConfig]));
    expect((await pds.api('root', 'GET', `/api/v1/workflows/${oldConfig}`)).status).toBe(200);
    // The old admin still sees what they did themselves, not the new tenant's history.
    const own = await pds.api('old-admin', 'GET', '/api/v1/audit');
    expect(own.body.items.map((e: any) => e.workflowName)).toEqual(expect.arrayContaining([oldDeploy, oldConfig]));
    expect(own.body.items.map((e: any) => e.workflowName)).not.toContain(recreated);
  });
});

describe('issue 7 item 6: operations on one service take effect in submission order', () => {
  it('an onboarding, four deploys and a rollback submitted back to back end on the last one, each after the one before', async () => {
    const { pds } = await start({ PDS_SANDBOX_STEP_MS: '3' });
    await executed(pds, 'root', 'create-tenant', { team_name: 'acme', admins: 'alice' });
    await registerRepo(pds, 'alice', 'acme', 'acme/web');
    const onboard = { action: 'onboard', team_name: 'acme', component_name: 'web', dockerfile_repo: 'acme/web', git_tag: '0.1.0', port: '8080', service_template: 'default' };
    await executed(pds, 'alice', 'deploy-service', onboard); // rollback needs an earlier tag to return to
    const names: string[] = [];
    for (const tag of ['0.2.0', '0.3.0', '0.4.0', '0.5.0']) {
      names.push(await execute(pds, 'alice', 'deploy-service', { action: 'deploy', team_name: 'acme', component_name: 'web', git_tag: tag, dockerfile_repo: 'acme/web' }));
    }
    names.push(await execute(pds, 'alice', 'rollback-service', { team_name: 'acme', component_name: 'web', target_tag: '0.1.0' }));
    const runs: any[] = [];
    for (const name of names) runs.push(await waitForWorkflow(pds, 'alice', name, 30_000));
    expect(runs.map((r) => r.audit.status)).toEqual(['succeeded', 'succeeded', 'succeeded', 'succeeded', 'succeeded']);
    expect((await pds.api('alice', 'GET', '/api/v1/services/acme/web')).body).toMatchObject({ imageTag: '0.1.0' });
    expect((await pds.api('alice', 'GET', '/api/v1/status/acme/web')).body.argocd).toMatchObject({ syncStatus: 'Synced', healthStatus: 'Healthy' });
    // Each began after the one submitted before it had finished: its first step's log line follows the other's last.
    const logs = (await pds.api('alice', 'GET', '/api/v1/logs/acme/web?lines=1000')).body.lines as Array<{ line: string; labels: Record<string, string> }>;
    const order = logs.filter((l) => l.labels.workflow !== undefined && names.includes(l.labels.workflow)).map((l) => l.labels.workflow);
    const firstIndex = names.map((n) => order.indexOf(n));
    const lastIndex = names.map((n) => order.lastIndexOf(n));
    for (let i = 1; i < names.length; i++) expect(firstIndex[i]!).toBeGreaterThan(lastIndex[i - 1]!);
  });
});
