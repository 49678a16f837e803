/**
 * Checks at the door of the execute pipeline: a tenant builds only repositories registered to it, and
 * `<team>-<service>` names one service only (issue 7 items 3 and 5); the tenant and service exist (or, to create
 * them, do not), tenant names are not reserved, the repository holds the onboarding artifacts (`docs/api.md#what-the-service-does`), and every
 * missing field is reported at once (issue 11 item 4). A refused call audits and submits nothing; its error names the
 * fix in the caller's words (REST paths here).
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandboxPlatform } from '../../adapters/sandbox/index.js';
import { NotFound, Upstream } from '../../core/errors.js';
import type { CodeHost } from '../../core/ports.js';
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

describe('what must exist, and what must not (issue 11 item 4)', () => {
  const svc = (team: string, app: string) => ({ team_name: team, component_name: app });

  it('refuses with 404 an operation on a tenant that does not exist, naming create-tenant, and audits nothing', async () => {
    const before = await auditCount();
    for (const [operation, params] of [
      ['deploy-service', { action: 'deploy', ...svc('ghost', 'web'), dockerfile_repo: 'ghost/web', git_tag: '0.1.0' }],
      ['deploy-service', { action: 'update-config', ...svc('ghost', 'web'), env_vars: 'A=1' }],
      ['rollback-service', { ...svc('ghost', 'web'), target_tag: '0.1.0' }],
      ['provision-database', svc('ghost', 'web')],
      ['retire-service', svc('ghost', 'web')],
      ['preview-deploy', { ...svc('ghost', 'web'), image_tag: '0.1.0', ttl_hours: '2' }],
      ['preview-delete', { ...svc('ghost', 'web'), image_tag: '0.1.0' }],
      ['delete-tenant', { team_name: 'ghost' }],
    ] as const) {
      const res = await execute('root', operation, params as Record<string, string>);
      expect(res.status, `${operation} ${JSON.stringify(res.body)}`).toBe(404);
      expect(res.body.error, operation).toBe('tenant not found: ghost; a platform admin creates it with POST /api/v1/operations/create-tenant/execute {"team_name":"ghost"}');
    }
    expect(await auditCount()).toBe(before);
  });

  it('refuses with 404 an operation on a service that does not exist, naming the tenant\'s services', async () => {
    const before = await auditCount();
    for (const [operation, params] of [
      ['deploy-service', { action: 'update-config', ...svc('tena', 'nope'), env_vars: 'A=1' }],
      ['rollback-service', { ...svc('tena', 'nope'), target_tag: '0.1.0' }],
      ['provision-database', svc('tena', 'nope')],
      ['retire-service', svc('tena', 'nope')],
      ['preview-deploy', { ...svc('tena', 'nope'), image_tag: '0.1.0', ttl_hours: '2' }],
    ] as const) {
      const res = await execute('alice', operation, params as Record<string, string>);
      expect(res.status, `${operation} ${JSON.stringify(res.body)}`).toBe(404);
      expect(res.body.error).toBe('service not found: tena/nope; the tenant\'s services: GET /api/v1/services?team=tena');
    }
    const preview = await execute('alice', 'preview-delete', { ...svc('tena', 'pay-api'), image_tag: '9.9.9' });
    expect(preview.status).toBe(404);
    expect(preview.body.error).toMatch(/^no preview of tena\/pay-api at 9\.9\.9; previews are listed .* GET \/api\/v1\/services\?team=tena$/);
    expect(await auditCount()).toBe(before);
  });

  it('refuses with 400 an onboarding of a service that exists and a tenant that exists, naming what to do instead', async () => {
    const before = await auditCount();
    const again = await execute('alice', 'deploy-service', onboard('tena', 'pay-api', 'tena/pay-api'));
    expect(again.status).toBe(400);
    expect(again.body.error).toMatch(/^component_name: service tena\/pay-api is already onboarded; ship a new tag with POST \/api\/v1\/operations\/deploy-service\/execute \{"action":"deploy"/);
    const tenant = await execute('root', 'create-tenant', { team_name: 'tena' });
    expect(tenant.status).toBe(400);
    expect(tenant.body.error).toBe('team_name: tenant tena already exists and create-tenant never changes one; see it with GET /api/v1/tenants/tena');
    expect(await auditCount()).toBe(before);
  });

  it('refuses reserved tenant names on every backend, the configured namespaces included', async () => {
    const custom = await startTestServer({ PDS_WORKFLOW_NAMESPACE: 'wf-runs', PDS_ARGOCD_NAMESPACE: 'gitops' });
    try {
      for (const name of ['default', 'kube-system', 'kube-public', 'argo', 'argocd', 'pds-workflows', 'pds-anything', 'wf-runs', 'gitops']) {
        const res = await custom.api('root', 'POST', '/api/v1/operations/create-tenant/execute', { team_name: name });
        expect(res.status, name).toBe(400);
        expect(res.body.error, name).toMatch(new RegExp(`^team_name: "${name}" is reserved \\(.+\\); choose another name`));
      }
      expect((await custom.api('root', 'GET', '/api/v1/audit')).body.count).toBe(0);
      expect((await custom.api('root', 'POST', '/api/v1/operations/create-tenant/execute', { team_name: 'kubeflow' })).status).toBe(200);
    } finally {
      await custom.stop();
    }
  });

  it('names the next call in MCP words for a caller that asks for them (X-PDS-Door: mcp, as pds mcp does)', async () => {
    const res = await fetch(`${pds.url}/api/v1/operations/rollback-service/execute`, {
      method: 'POST',
      headers: { authorization: `Bearer ${await pds.token('alice')}`, 'content-type': 'application/json', 'x-pds-door': 'mcp' },
      body: JSON.stringify({ ...svc('tena', 'nope'), target_tag: '0.1.0' }),
    });
    expect(res.status).toBe(404);
    expect(((await res.json()) as { error: string }).error).toBe('service not found: tena/nope; the tenant\'s services: platform_list_services {"team":"tena"}');
  });
});

describe('rollback to a tag the service ran (issue 11 item 4)', () => {
  it('refuses with 400 a tag never deployed to the service, listing the tags it ran; accepts one it ran', async () => {
    await executed('root', 'create-tenant', { team_name: 'rolls', admins: 'rita' });
    await registerRepository(pds, 'rita', 'rolls', 'rolls/web');
    expect((await executed('rita', 'deploy-service', onboard('rolls', 'web', 'rolls/web'))).audit.status).toBe('succeeded');
    const deploy = { action: 'deploy', team_name: 'rolls', component_name: 'web', dockerfile_repo: 'rolls/web' };
    expect((await executed('rita', 'deploy-service', { ...deploy, git_tag: '0.1.1' })).audit.status).toBe('succeeded');
    const before = await auditCount();
    const never = await execute('rita', 'rollback-service', { team_name: 'rolls', component_name: 'web', target_tag: '0.0.9' });
    expect(never.status).toBe(400);
    expect(never.body.error).toBe(
      'target_tag: 0.0.9 was never deployed to rolls/web; tags it ran, newest first: 0.1.1, 0.1.0. Its history: GET /api/v1/workflows?team=rolls&service=web',
    );
    expect(await auditCount()).toBe(before);
    expect((await executed('rita', 'rollback-service', { team_name: 'rolls', component_name: 'web', target_tag: '0.1.0' })).audit.status).toBe('succeeded');
  });
});

describe('quota headroom for onboarding and previews (issue 11 item 4)', () => {
  // quinn, not alice: the write limit (20/min per user) is alice's to spend in the other tests.
  it('refuses with 403 an onboarding or a preview the tenant\'s quota has no room for, naming what frees room, and audits nothing', async () => {
    // Two pods: the first service fits, its preview fits, then neither another service nor another preview does.
    await executed('root', 'create-tenant', { team_name: 'tiny', admins: 'quinn', pods: '2' });
    await registerRepository(pds, 'quinn', 'tiny', 'tiny/web');
    await registerRepository(pds, 'quinn', 'tiny', 'tiny/api');
    expect((await executed('quinn', 'deploy-service', onboard('tiny', 'web', 'tiny/web'))).audit.status).toBe('succeeded');
    const preview = { team_name: 'tiny', component_name: 'web', image_tag: '0.1.0', ttl_hours: '2' };
    expect((await executed('quinn', 'preview-deploy', preview)).audit.status).toBe('succeeded');
    const before = await auditCount();
    const second = await execute('quinn', 'deploy-service', onboard('tiny', 'api', 'tiny/api'));
    expect(second.status).toBe(403);
    expect(second.body.error).toMatch(/^tenant tiny has no quota headroom for a new service: pods 2 of 2 used, a new service needs 1 more\./);
    expect(second.body.error).toContain('GET /api/v1/services?team=tiny');
    expect(second.body.error).toContain('GET /api/v1/resources/tiny');
    const another = await execute('quinn', 'preview-deploy', { ...preview, image_tag: '0.2.0' });
    expect(another.status).toBe(403);
    expect(another.body.error).toMatch(/^tenant tiny has no quota headroom for a preview: pods 2 of 2 used/);
    expect(await auditCount()).toBe(before);
    // Removing the preview frees the pod: the onboarding passes.
    expect((await executed('quinn', 'preview-delete', { team_name: 'tiny', component_name: 'web', image_tag: '0.1.0' })).audit.status).toBe('succeeded');
    expect((await execute('quinn', 'deploy-service', onboard('tiny', 'api', 'tiny/api'))).status).toBe(200);
  });

  it('names every short dimension at once', async () => {
    await executed('root', 'create-tenant', { team_name: 'cramped', admins: 'quinn', cpu: '100m', memory: '64Mi', pods: '5' });
    await registerRepository(pds, 'quinn', 'cramped', 'cramped/web');
    const res = await execute('quinn', 'deploy-service', onboard('cramped', 'web', 'cramped/web'));
    expect(res.status).toBe(403);
    expect(res.body.error).toMatch(/memory 0 of 64Mi used, a new service needs 128Mi more/);
    expect(res.body.error).not.toMatch(/cpu|pods/);
  });
});

describe('every missing field at once (issue 11 item 4)', () => {
  it('reports the per-action fields together with the other problems, not one per call', async () => {
    const res = await execute('alice', 'deploy-service', { action: 'onboard' });
    expect(res.status).toBe(400);
    for (const field of ['team_name', 'component_name', 'git_tag', 'dockerfile_repo', 'port']) expect(res.body.error).toMatch(new RegExp(`${field}: is required`));
    const mixed = await execute('alice', 'deploy-service', { action: 'onboard', team_name: 'Tena', component_name: 'web', port: '0', env_vars: 'A=1' });
    expect(mixed.status).toBe(400);
    expect(mixed.body.error).toMatch(/team_name: must be a DNS label/);
    expect(mixed.body.error).toMatch(/port: must be a port number/);
    expect(mixed.body.error).toMatch(/git_tag: is required for action=onboard/);
    expect(mixed.body.error).toMatch(/dockerfile_repo: is required for action=onboard/);
    expect(mixed.body.error).toMatch(/env_vars: is not used by action=onboard/);
  });
});

describe('onboarding artifacts, when the code host can read the repository (issue 11 item 4)', () => {
  /**
   * What each repository holds on its default branch. The sandbox's code host cannot read trees (and must not block
   * onboarding, as every test above shows); this one reads these, standing in for a code host that can.
   */
  const REPOS: Record<string, Record<string, string>> = {
    'acme/nobuild': { 'README.md': '# no build file' },
    'acme/noci': { Dockerfile: 'FROM scratch' },
    'acme/nodeploy': { Dockerfile: 'FROM scratch', '.github/workflows/ci.yml': 'on: push\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps: []\n' },
    'acme/good': { Dockerfile: 'FROM scratch', '.github/workflows/ci.yml': 'on: push\njobs:\n  deploy:\n    runs-on: ubuntu-latest\n    steps: []\n' },
    'acme/nested': { 'docker/Dockerfile': 'FROM scratch', '.github/workflows/ci.yml': 'jobs:\n  deploy: {}\n' },
  };
  let artifacts: TestServer;
  const onboardRepo = (repo: string, extra: Record<string, string> = {}) =>
    artifacts.api('alice', 'POST', '/api/v1/operations/deploy-service/execute', {
      ...onboard('acme', repo.split('/')[1]!, repo),
      ...extra,
    });

  beforeAll(async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'pds-artifacts-'));
    const sandbox = await createSandboxPlatform({ dataDir, domain: 'apps.test', stepMs: 5, githubAppSlug: 'pds-test' });
    const codeHost: CodeHost = {
      ...sandbox.codeHost,
      async readTree(repo, options) {
        if (repo === 'acme/down') throw new Upstream('GitHub answered 502');
        const files = REPOS[repo];
        if (!files) throw new NotFound(`repository ${repo} not found`);
        const read = Object.fromEntries((options?.read ?? []).filter((p) => p in files).map((p) => [p, files[p]!]));
        return { paths: Object.keys(files), files: read };
      },
    };
    artifacts = await startTestServer({ PDS_DATA_DIR: dataDir }, { platform: { ...sandbox, kind: sandbox.kind, codeHost, ready: () => sandbox.ready(), close: () => sandbox.close() } });
    const created = await artifacts.api('root', 'POST', '/api/v1/operations/create-tenant/execute', { team_name: 'acme', admins: 'alice' });
    await waitForWorkflow(artifacts, 'root', created.body.workflowName);
    for (const repo of [...Object.keys(REPOS), 'acme/down']) await registerRepository(artifacts, 'alice', 'acme', repo);
  });
  afterAll(() => artifacts?.stop());

  it('refuses a repository without a build file at its root or dockerfile_path, naming the scaffolding call', async () => {
    const before = (await artifacts.api('root', 'GET', '/api/v1/audit')).body.count;
    const res = await onboardRepo('acme/nobuild');
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(/^dockerfile_repo: acme\/nobuild has no build file at its root \(Dockerfile\)/);
    expect(res.body.error).toContain('POST /api/v1/scaffold {"team_name":"acme","dockerfile_repo":"acme/nobuild"}');
    const wrongPath = await onboardRepo('acme/nested', { dockerfile_path: 'build/Dockerfile' });
    expect(wrongPath.status).toBe(400);
    expect(wrongPath.body.error).toMatch(/at dockerfile_path "build\/Dockerfile"/);
    expect((await artifacts.api('root', 'GET', '/api/v1/audit')).body.count).toBe(before);
  });

  it('accepts a repository without a CI deploy job, with a warning in the message; none when the job is there', async () => {
    const noci = await onboardRepo('acme/noci');
    expect(noci.status).toBe(200);
    expect(noci.body.message).toMatch(/Warning: acme\/noci has no \.github\/workflows\/ci\.yml, so pushes to main will not deploy/);
    const nodeploy = await onboardRepo('acme/nodeploy');
    expect(nodeploy.status).toBe(200);
    expect(nodeploy.body.message).toMatch(/Warning: \.github\/workflows\/ci\.yml of acme\/nodeploy has no job named "deploy"/);
    for (const [repo, extra] of [['acme/good', {}], ['acme/nested', { dockerfile_path: 'docker/Dockerfile' }]] as const) {
      const res = await onboardRepo(repo, extra);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.message).not.toMatch(/Warning/);
      expect((await waitForWorkflow(artifacts, 'alice', res.body.workflowName)).audit.status).toBe('succeeded');
    }
  });

  it('lets a code host that fails not block onboarding, and says the check could not be made', async () => {
    const res = await onboardRepo('acme/down');
    expect(res.status).toBe(200);
    expect(res.body.message).toMatch(/Warning: could not check acme\/down for its build file and CI deploy job \(GitHub answered 502\)/);
  });
});
