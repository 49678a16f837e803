/**
 * Every endpoint of `docs/api.md#endpoints`: the exact fields, status codes and `{ "error" }` bodies, and the access rules
 * of issue 2 §8 (admins, members, viewers, strangers).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPERATION_IDS } from '../../core/operations/index.js';
import { registerRepository, startTestServer, waitForWorkflow, type TestServer } from '../helpers/server.js';

let pds: TestServer;

async function execute(user: string, operation: string, params: Record<string, string>) {
  const res = await pds.api(user, 'POST', `/api/v1/operations/${operation}/execute`, params);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return waitForWorkflow(pds, user, res.body.workflowName);
}

beforeAll(async () => {
  pds = await startTestServer();
  await execute('root', 'create-tenant', { team_name: 'acme', admins: 'alice', members: 'carol', viewers: 'dave', description: 'Payments', contact_email: 'acme@example.com', cpu: '2', memory: '4Gi', pods: '10' });
  await execute('root', 'create-tenant', { team_name: 'umbrella', admins: 'uma' });
  await registerRepository(pds, 'alice', 'acme', 'acme/web');
  await registerRepository(pds, 'uma', 'umbrella', 'umbrella/lab');
  await execute('alice', 'deploy-service', { action: 'onboard', team_name: 'acme', component_name: 'web', dockerfile_repo: 'acme/web', git_tag: '0.1.0', port: '8787', service_template: 'default' });
  await execute('uma', 'deploy-service', { action: 'onboard', team_name: 'umbrella', component_name: 'lab', dockerfile_repo: 'umbrella/lab', git_tag: '1.0.0', port: '8080', service_template: 'default' });
});

afterAll(() => pds.stop());

describe('health', () => {
  it('answers /healthz and /readyz without a token', async () => {
    expect(await pds.api(undefined, 'GET', '/healthz')).toMatchObject({ status: 200, body: { status: 'ok' } });
    expect((await pds.api(undefined, 'GET', '/readyz')).status).toBe(200);
  });
});

describe('authentication', () => {
  it('refuses /api/v1 without a token: 401, error body, Bearer challenge', async () => {
    const res = await pds.api(undefined, 'GET', '/api/v1/services');
    expect(res.status).toBe(401);
    expect(Object.keys(res.body)).toEqual(['error']);
    expect(res.headers.get('www-authenticate')).toMatch(/^Bearer realm="pds"/);
  });

  it('refuses a token signed with another secret', async () => {
    const res = await fetch(`${pds.url}/api/v1/services`, {
      headers: { authorization: 'Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4IiwiaXNzIjoiaHR0cDovL3gifQ.c2lnbmF0dXJl' },
    });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toContain('error="invalid_token"');
  });
});

describe('tenants', () => {
  it('lists every tenant for a platform admin, with all fields', async () => {
    const res = await pds.api('root', 'GET', '/api/v1/tenants');
    expect(res.status).toBe(200);
    expect(res.body.count).toBe(2);
    const acme = res.body.items.find((t: any) => t.name === 'acme');
    expect(acme).toEqual({
      name: 'acme',
      displayName: expect.any(String),
      description: 'Payments',
      contactEmail: 'acme@example.com',
      quotas: { cpu: '2', memory: '4Gi', pods: '10' },
      members: [
        { userId: 'alice', role: 'admin' },
        { userId: 'carol', role: 'member' },
        { userId: 'dave', role: 'viewer' },
      ],
    });
  });

  it('answers 403 "admin access required" to anyone else, saying how one becomes an admin', async () => {
    const refused = await pds.api('alice', 'GET', '/api/v1/tenants');
    expect(refused.status).toBe(403);
    // The contract's text first, then the way to become one (issue 19 item 4).
    expect(refused.body.error).toMatch(/^admin access required: /);
    expect(refused.body.error).toContain('your user id ("alice") to PDS_ADMINS');
    expect(refused.body.error).toContain('`pds dev`');
  });

  it('shows one tenant (detail fields only) with its services to a member; 404 for admins on a missing one', async () => {
    const res = await pds.api('alice', 'GET', '/api/v1/tenants/acme');
    expect(res.status).toBe(200);
    expect(Object.keys(res.body.tenant).sort()).toEqual(['displayName', 'members', 'name', 'quotas']);
    expect(res.body.services.map((s: any) => s.name)).toEqual(['web']);
    expect(await pds.api('root', 'GET', '/api/v1/tenants/nope')).toMatchObject({ status: 404, body: { error: 'tenant not found: nope' } });
    expect(await pds.api('alice', 'GET', '/api/v1/tenants/umbrella')).toMatchObject({ status: 403, body: { error: 'access denied to this tenant: umbrella' } });
  });
});

describe('services, status, logs, resources', () => {
  it('lists only the services the caller may see, and filters by team', async () => {
    const mine = await pds.api('alice', 'GET', '/api/v1/services');
    expect(mine.body).toMatchObject({ count: 1, items: [{ team: 'acme', name: 'web' }] });
    const all = await pds.api('root', 'GET', '/api/v1/services');
    expect(all.body.count).toBe(2);
    const filtered = await pds.api('root', 'GET', '/api/v1/services?team=umbrella');
    expect(filtered.body.items.map((s: any) => s.team)).toEqual(['umbrella']);
    expect((await pds.api('alice', 'GET', '/api/v1/services?team=umbrella')).status).toBe(403);
    // A platform admin asking for a tenant that does not exist gets 404, as for the tenant's detail.
    expect(await pds.api('root', 'GET', '/api/v1/services?team=nope')).toMatchObject({ status: 404, body: { error: 'tenant not found: nope' } });
  });

  it('404s a missing service and a missing GitOps application with their own messages', async () => {
    expect(await pds.api('alice', 'GET', '/api/v1/services/acme/nope')).toMatchObject({ status: 404, body: { error: 'service not found: acme/nope' } });
    expect(await pds.api('alice', 'GET', '/api/v1/status/acme/nope')).toMatchObject({ status: 404, body: { error: 'GitOps application not found: acme-nope' } });
  });

  it('returns log lines with ISO 8601 UTC timestamps and labels, honouring lines and since', async () => {
    const res = await pds.api('alice', 'GET', '/api/v1/logs/acme/web?lines=3&since=15m');
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['app', 'count', 'lines', 'note', 'team']);
    expect(res.body.count).toBe(3);
    for (const line of res.body.lines) {
      expect(line.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
      expect(typeof line.line).toBe('string');
      expect(typeof line.labels).toBe('object');
    }
    const def = await pds.api('alice', 'GET', '/api/v1/logs/acme/web');
    expect(def.body.count).toBeGreaterThan(3);
    expect(def.body.count).toBeLessThanOrEqual(100);
  });

  it('rejects lines over 1000 and a bad since with 400s that say what is allowed', async () => {
    expect(await pds.api('alice', 'GET', '/api/v1/logs/acme/web?lines=1001')).toMatchObject({ status: 400, body: { error: expect.stringContaining('at most 1000') } });
    expect(await pds.api('alice', 'GET', '/api/v1/logs/acme/web?since=forever')).toMatchObject({ status: 400, body: { error: expect.stringContaining('"15m"') } });
    expect(await pds.api('alice', 'GET', '/api/v1/logs/acme/nope')).toMatchObject({ status: 404 });
  });

  it('reports allocated quotas and used resources; 404 for a missing tenant', async () => {
    const res = await pds.api('alice', 'GET', '/api/v1/resources/acme');
    expect(res.body).toEqual({
      tenant: 'acme',
      allocated: { cpu: '2', memory: '4Gi', pods: '10' },
      used: { cpu: expect.any(String), memory: expect.any(String), pods: '1' },
      note: expect.any(String),
    });
    expect(await pds.api('root', 'GET', '/api/v1/resources/nope')).toMatchObject({ status: 404, body: { error: 'tenant not found: nope' } });
  });
});

describe('operations', () => {
  it('lists every operation with definitions derived from their schemas, saying who may run each', async () => {
    const res = await pds.api('alice', 'GET', '/api/v1/operations');
    expect(res.body.count).toBe(OPERATION_IDS.length);
    expect(res.body.count).toBe(8); // `docs/api.md#operations`: eight operations
    const roles = Object.fromEntries(res.body.items.map((o: any) => [o.name, o.requiredRole]));
    expect(roles).toMatchObject({ 'retire-service': 'admin', 'delete-tenant': 'admin', 'create-tenant': 'platform-admin', 'deploy-service': 'member' });
    expect(res.body.items.find((o: any) => o.name === 'delete-tenant').description).toMatch(/Who may run it: the tenant's admins and platform admins\.$/);
    const risk = Object.fromEntries(res.body.items.map((o: any) => [o.name, o.riskLevel]));
    expect(risk).toEqual({
      'deploy-service': 'medium',
      'create-tenant': 'medium',
      'provision-database': 'medium',
      'rollback-service': 'medium',
      'retire-service': 'high',
      'delete-tenant': 'high',
      'preview-deploy': 'low',
      'preview-delete': 'low',
    });
    const rollback = res.body.items.find((o: any) => o.name === 'rollback-service');
    expect(rollback).toMatchObject({ workflowTemplate: 'rollback-service', requiresConfirm: false, displayName: expect.any(String) });
    expect(rollback.parameters).toEqual([
      { name: 'team_name', type: 'string', required: true, description: expect.any(String) },
      { name: 'component_name', type: 'string', required: true, description: expect.any(String) },
      { name: 'target_tag', type: 'string', required: true, description: expect.any(String) },
      // Beside the contract: a person's break-glass reason during a freeze window (issue 20).
      { name: 'override_reason', type: 'string', required: false, description: expect.any(String) },
    ]);
    const deploy = res.body.items.find((o: any) => o.name === 'deploy-service');
    expect(deploy.parameters.filter((p: any) => p.required).map((p: any) => p.name)).toEqual(['action', 'team_name', 'component_name']);
  });

  it('describes one operation and 404s an unknown one', async () => {
    expect((await pds.api('alice', 'GET', '/api/v1/operations/retire-service')).body).toMatchObject({ name: 'retire-service', requiresConfirm: true, riskLevel: 'high' });
    expect(await pds.api('alice', 'GET', '/api/v1/operations/nope')).toMatchObject({ status: 404, body: { error: expect.stringMatching(/^operation not found/) } });
    expect((await pds.api('alice', 'POST', '/api/v1/operations/nope/execute', {})).status).toBe(404);
  });

  it('validates every parameter and names it in the 400', async () => {
    const cases: [string, Record<string, string>, RegExp][] = [
      ['deploy-service', { action: 'ship', team_name: 'acme', component_name: 'web' }, /action: Invalid option/],
      ['deploy-service', { action: 'onboard', team_name: 'acme', component_name: 'web', dockerfile_repo: 'acme/web', git_tag: '0.1.0', port: '70000' }, /port: must be a port number 1-65535/],
      ['deploy-service', { action: 'update-config', team_name: 'acme', component_name: 'web', env_vars: 'GOOD=1\n1BAD=2' }, /env_vars: line 2 must be KEY=VALUE/],
      ['deploy-service', { action: 'deploy', team_name: 'Acme', component_name: 'web', dockerfile_repo: 'acme/web', git_tag: '0.1.0' }, /team_name: must be a DNS label/],
      ['deploy-service', { action: 'deploy', team_name: 'acme', component_name: 'web', dockerfile_repo: 'not a repo', git_tag: '0.1.0' }, /dockerfile_repo: must be "<owner>\/<repo>"/],
      ['preview-deploy', { team_name: 'acme', component_name: 'web', image_tag: '0.1.0', ttl_hours: '0' }, /ttl_hours: must be a whole number of hours/],
      ['preview-deploy', { team_name: 'acme', component_name: 'web', image_tag: '0.1.0', ttl_hours: '721' }, /ttl_hours: must be at most 720 hours/],
      ['rollback-service', { team_name: 'acme', component_name: 'web', target_tag: '0.1.0', extra: 'x' }, /unknown parameter "extra"; allowed: team_name, component_name, target_tag/],
      ['rollback-service', { team_name: 'acme', component_name: 'x'.repeat(40) + 'y'.repeat(0), target_tag: '0.1' }, /target_tag: must be a SemVer tag/],
    ];
    for (const [operation, params, message] of cases) {
      const res = await pds.api('alice', 'POST', `/api/v1/operations/${operation}/execute`, params);
      expect(res.status, JSON.stringify(params)).toBe(400);
      expect(res.body.error).toMatch(message);
    }
  });

  it('lets members operate and viewers only read', async () => {
    const rollback = { team_name: 'acme', component_name: 'web', target_tag: '0.1.0' };
    expect((await pds.api('carol', 'POST', '/api/v1/operations/rollback-service/execute', rollback)).status).toBe(200);
    const viewer = await pds.api('dave', 'POST', '/api/v1/operations/rollback-service/execute', rollback);
    expect(viewer.status).toBe(403);
    expect(viewer.body.error).toMatch(/^access denied to this tenant: role "viewer"/);
    expect((await pds.api('dave', 'GET', '/api/v1/status/acme/web')).status).toBe(200);
    expect((await pds.api('dave', 'GET', '/api/v1/logs/acme/web')).status).toBe(200);
    expect((await pds.api('dave', 'POST', '/api/v1/repos/sync', { team: 'acme' })).status).toBe(403);
  });

  it('needs tenant membership with a role that may change it', async () => {
    const params = { team_name: 'umbrella', component_name: 'lab', target_tag: '1.0.0' };
    expect(await pds.api('alice', 'POST', '/api/v1/operations/rollback-service/execute', params)).toMatchObject({ status: 403, body: { error: 'access denied to this tenant: umbrella' } });
    expect(await pds.api('alice', 'POST', '/api/v1/operations/create-tenant/execute', { team_name: 'newco' })).toMatchObject({ status: 403, body: { error: expect.stringMatching(/^admin access required: .*PDS_ADMINS/) } });
  });

  it('lets only tenant admins (and platform admins) destroy: a member may not retire a service or delete the tenant', async () => {
    const retire = await pds.api('carol', 'POST', '/api/v1/operations/retire-service/execute', { team_name: 'acme', component_name: 'web' });
    expect(retire).toMatchObject({ status: 403, body: { error: expect.stringMatching(/^access denied to this tenant: role "member"/) } });
    const remove = await pds.api('carol', 'POST', '/api/v1/operations/delete-tenant/execute', { team_name: 'acme' });
    expect(remove.status).toBe(403);
    expect((await pds.api('alice', 'POST', '/api/v1/operations/retire-service/execute', { team_name: 'acme', component_name: 'web' })).status).toBe(400); // asks to confirm
  });

  it('asks for confirmation before retire-service and accepts the value once, for the same caller and parameters', async () => {
    const params = { team_name: 'umbrella', component_name: 'lab' };
    const first = await pds.api('uma', 'POST', '/api/v1/operations/retire-service/execute', params);
    expect(first.status).toBe(400);
    expect(Object.keys(first.body)).toEqual(['error']); // the contract's body; the value also travels as data in headers
    const confirm = /"confirm": "([^"]+)"/.exec(first.body.error)![1]!;
    expect(first.headers.get('pds-confirm')).toBe(confirm);
    expect(Date.parse(first.headers.get('pds-confirm-expires')!)).toBeGreaterThan(Date.now());
    expect((await pds.api('uma', 'GET', '/api/v1/services/umbrella/lab')).status).toBe(200); // nothing changed yet

    // Bound to the parameters and the caller. lab2 exists, so the preflight (which runs first) lets the call reach the
    // confirmation check (issue 11 item 4).
    await registerRepository(pds, 'uma', 'umbrella', 'umbrella/lab2');
    await execute('uma', 'deploy-service', { action: 'onboard', team_name: 'umbrella', component_name: 'lab2', dockerfile_repo: 'umbrella/lab2', git_tag: '1.0.0', port: '8080' });
    const other = await pds.api('uma', 'POST', '/api/v1/operations/retire-service/execute', { team_name: 'umbrella', component_name: 'lab2', confirm });
    expect(other.body.error).toMatch(/does not match/);
    const stranger = await pds.api('root', 'POST', '/api/v1/operations/retire-service/execute', { ...params, confirm });
    expect(stranger.body.error).toMatch(/does not match/);
    const invented = await pds.api('uma', 'POST', '/api/v1/operations/retire-service/execute', { ...params, confirm: '9999999999.abc.def' });
    expect(invented.body.error).toMatch(/does not match/);

    const second = await pds.api('uma', 'POST', '/api/v1/operations/retire-service/execute', { ...params, confirm });
    expect(second.status).toBe(200);
    const done = await waitForWorkflow(pds, 'uma', second.body.workflowName);
    expect(done.audit.status).toBe('succeeded');
    expect(done.audit.parameters).not.toHaveProperty('confirm');
    expect((await pds.api('uma', 'GET', '/api/v1/services/umbrella/lab')).status).toBe(404);

    // Once: onboarded again (so the preflight lets the call through), the same value is refused.
    await execute('uma', 'deploy-service', { action: 'onboard', team_name: 'umbrella', component_name: 'lab', dockerfile_repo: 'umbrella/lab', git_tag: '1.0.0', port: '8080' });
    const replay = await pds.api('uma', 'POST', '/api/v1/operations/retire-service/execute', { ...params, confirm });
    expect(replay).toMatchObject({ status: 400, body: { error: expect.stringMatching(/already used/) } });
  });
});

describe('workflows and audit', () => {
  it('shows a workflow with its audit entry and a note; 404 for an unknown name', async () => {
    const audit = await pds.api('alice', 'GET', '/api/v1/audit');
    const name = audit.body.items[0].workflowName;
    const wf = await pds.api('alice', 'GET', `/api/v1/workflows/${name}`);
    // The contract's three fields (`docs/api.md#workflows-and-audit`), and the workflow view of issue 11 (phase, settled, steps; host once settled).
    expect(Object.keys(wf.body).sort()).toEqual(['audit', 'host', 'note', 'phase', 'settled', 'steps', 'workflow']);
    expect(Object.keys(wf.body.audit).sort()).toEqual(['id', 'message', 'operation', 'parameters', 'riskLevel', 'status', 'timestamp', 'userId', 'workflowName']);
    expect(await pds.api('alice', 'GET', '/api/v1/workflows/nope-12345')).toMatchObject({ status: 404 });
  });

  it('shows admins every entry and members only their tenants\'', async () => {
    const alice = await pds.api('alice', 'GET', '/api/v1/audit');
    expect(alice.body.items.every((e: any) => e.parameters.team_name === 'acme' || e.userId === 'alice')).toBe(true);
    expect(alice.body.items.some((e: any) => e.parameters.team_name === 'umbrella')).toBe(false);
    const root = await pds.api('root', 'GET', '/api/v1/audit');
    expect(root.body.items.some((e: any) => e.parameters.team_name === 'umbrella')).toBe(true);
    expect(root.body.count).toBe(root.body.items.length);
    const times = root.body.items.map((e: any) => e.timestamp);
    expect([...times].sort().reverse()).toEqual(times);
  });
});

describe('repositories', () => {
  it('lists, grants access to and syncs repositories', async () => {
    expect((await pds.api('alice', 'GET', '/api/v1/repos?team=acme')).body).toMatchObject({ team: 'acme', count: 1, items: [{ fullName: 'acme/web' }] });
    expect(await pds.api('alice', 'GET', '/api/v1/repos')).toMatchObject({ status: 400, body: { error: 'invalid parameters: team: is required' } });
    const grant = await pds.api('alice', 'POST', '/api/v1/repos/grant-access', { team_name: 'acme', repo: 'acme/api' });
    expect(grant.body.url).toContain('installations/new');
    const sync = await pds.api('alice', 'POST', '/api/v1/repos/sync', { team: 'acme', user: 'alice' });
    expect(sync.body).toMatchObject({ team: 'acme', count: 2, added: ['acme/api'], items: [{ fullName: 'acme/api' }, { fullName: 'acme/web' }] });
  });
});

describe('unknown routes and methods', () => {
  it('answers JSON 404 for unknown /api/v1 paths and 405 for a wrong method', async () => {
    expect(await pds.api('alice', 'GET', '/api/v1/nothing')).toMatchObject({ status: 404, body: { error: expect.stringContaining('no such endpoint') } });
    const wrong = await pds.api('alice', 'DELETE', '/api/v1/audit');
    expect(wrong.status).toBe(405);
    expect(Object.keys(wrong.body)).toEqual(['error']);
  });

  it('answers 400 JSON for a body that is not JSON', async () => {
    const res = await fetch(`${pds.url}/api/v1/operations/rollback-service/execute`, {
      method: 'POST',
      headers: { authorization: `Bearer ${await pds.token('alice')}`, 'content-type': 'application/json' },
      body: '{"team_name":',
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: expect.stringMatching(/JSON/i) });
  });
});
