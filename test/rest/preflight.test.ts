/**
 * Checks at the door of the execute pipeline (issue 7 items 3 and 5): a tenant builds only repositories registered to
 * it, and `<team>-<service>` names one service only. A refused call audits and submits nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerRepository, startTestServer, waitForWorkflow, type TestServer } from '../helpers/server.js';

let pds: TestServer;

async function execute(user: string, operation: string, params: Record<string, string>) {
  return pds.api(user, 'POST', `/api/v1/operations/${operation}/execute`, params);
}
async function executed(user: string, operation: string, params: Record<string, string>) {
  const res = await execute(user, operation, params);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return waitForWorkflow(pds, user, res.body.workflowName);
}
const onboard = (team: string, app: string, repo: string) => ({
  action: 'onboard', team_name: team, component_name: app, dockerfile_repo: repo, git_tag: '0.1.0', port: '8080',
});
const auditCount = async () => (await pds.api('root', 'GET', '/api/v1/audit')).body.count;

beforeAll(async () => {
  pds = await startTestServer();
  await executed('root', 'create-tenant', { team_name: 'tena', admins: 'alice' });
  await executed('root', 'create-tenant', { team_name: 'tena-pay', admins: 'alice' });
  await executed('root', 'create-tenant', { team_name: 'bobco', admins: 'bob' });
  await registerRepository(pds, 'bob', 'bobco', 'bob/secret-repo');
  await registerRepository(pds, 'alice', 'tena', 'tena/pay-api');
  await registerRepository(pds, 'alice', 'tena-pay', 'tena/api');
});
afterAll(() => pds.stop());

describe('registered repositories only (issue 7 item 3)', () => {
  it('refuses to onboard or deploy a repository registered only to another tenant, naming the tools that register one', async () => {
    const before = await auditCount();
    const stolen = await execute('alice', 'deploy-service', onboard('tena', 'stolen', 'bob/secret-repo'));
    expect(stolen.status).toBe(403);
    expect(stolen.body.error).toMatch(/"bob\/secret-repo" is not registered to tenant "tena"/);
    // REST names the paths that register one (issue 11 item 10: words for each door; MCP names the tools).
    expect(stolen.body.error).toContain('POST /api/v1/repos/grant-access {"team_name":"tena","repo":"bob/secret-repo"}');
    expect(stolen.body.error).toContain('POST /api/v1/repos/sync {"team":"tena"}');
    const deploy = await execute('alice', 'deploy-service', {
      action: 'deploy', team_name: 'tena', component_name: 'stolen', dockerfile_repo: 'bob/secret-repo', git_tag: '0.1.1',
    });
    expect(deploy.status).toBe(403);
    expect(await auditCount()).toBe(before); // nothing audited, nothing submitted
    // The owner may.
    expect((await executed('bob', 'deploy-service', onboard('bobco', 'secret', 'bob/secret-repo'))).audit.status).toBe('succeeded');
  });
});

describe('one service per <team>-<service> (issue 7 item 5)', () => {
  it('refuses the second service whose name joins to the same Application and host, naming who holds it', async () => {
    expect((await executed('alice', 'deploy-service', onboard('tena', 'pay-api', 'tena/pay-api'))).audit.status).toBe('succeeded');
    const before = await auditCount();
    const clash = await execute('alice', 'deploy-service', onboard('tena-pay', 'api', 'tena/api'));
    expect(clash.status).toBe(400);
    expect(clash.body.error).toMatch(/^component_name: "tena-pay-api" .* is already used by service tena\/pay-api/);
    expect(await auditCount()).toBe(before);
    const services = (await pds.api('root', 'GET', '/api/v1/services')).body.items.map((s: { team: string; name: string }) => `${s.team}/${s.name}`);
    expect(services).not.toContain('tena-pay/api');
  });
});
