/**
 * `POST /api/v1/promotions` (`platform_promote_image`) and the promotion rule's edges over REST (issue 20 item 4): a
 * promotion is a deploy-service, so the repository rule of issue 17 holds (the target tenant must have the
 * repository registered); reading what the source runs needs access to the source tenant; a rule naming a tenant
 * that does not exist refuses every deploy; nothing refused is recorded.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandboxPlatform } from '../../adapters/sandbox/index.js';
import { executeAndWait, registerRepository, startTestServer, type TestServer } from '../helpers/server.js';

let pds: TestServer;

beforeAll(async () => {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'pds-test-'));
  const platform = await createSandboxPlatform({ dataDir, domain: 'apps.test', stepMs: 5, githubAppSlug: 'pds-platform' });
  pds = await startTestServer({ PDS_DATA_DIR: dataDir }, { platform });
  await executeAndWait(pds, 'root', 'create-tenant', { team_name: 'acme-staging', admins: 'alice' });
  await executeAndWait(pds, 'root', 'create-tenant', { team_name: 'acme', admins: 'alice', members: 'bob' });
  await executeAndWait(pds, 'root', 'create-tenant', { team_name: 'beta', admins: 'bob' });
  await registerRepository(pds, 'alice', 'acme-staging', 'acme/web');
  await registerRepository(pds, 'alice', 'acme', 'acme/web');
  const staged = await executeAndWait(pds, 'alice', 'deploy-service', {
    action: 'onboard', team_name: 'acme-staging', component_name: 'web', dockerfile_repo: 'acme/web', git_tag: '0.1.0', port: '8080',
  });
  expect(staged.audit.status).toBe('succeeded');
  const staging = (await pds.platform.backend.getTenantRef('acme-staging'))!;
  for (let i = 0; !(await pds.platform.images.current(staging, 'web')); i++) {
    if (i > 200) throw new Error('acme-staging/web was not observed running');
    await new Promise((r) => setTimeout(r, 50));
  }
}, 60_000);

afterAll(async () => {
  await pds?.stop();
});

const promote = (user: string, body: Record<string, string>) => pds.api(user, 'POST', '/api/v1/promotions', body);

describe('POST /api/v1/promotions', () => {
  it('refuses a tenant that has not the repository registered (the repository rule), recording nothing', async () => {
    const before = (await pds.api('root', 'GET', '/api/v1/audit')).body.count;
    const r = await promote('bob', { team_name: 'beta', component_name: 'web', from: 'acme-staging/web' });
    expect(r.status).toBe(403); // bob may not read acme-staging
    const admin = await promote('root', { team_name: 'beta', component_name: 'web', from: 'acme-staging/web' });
    expect(admin.status, JSON.stringify(admin.body)).toBe(403);
    expect(admin.body.error).toMatch(/acme\/web.*not registered|registered.*acme\/web/);
    expect((await pds.api('root', 'GET', '/api/v1/audit')).body.count).toBe(before);
  });

  it('needs read access to the source tenant, and a source that runs healthy now', async () => {
    const stranger = await promote('bob', { team_name: 'acme', component_name: 'web', from: 'acme-staging/web' });
    expect(stranger.status).toBe(403);
    expect(stranger.body.error).toContain('access denied to this tenant: acme-staging');
    const idle = await promote('alice', { team_name: 'acme', component_name: 'web', from: 'acme-staging/api' });
    expect(idle.status).toBe(409);
    expect((await promote('alice', { team_name: 'acme', component_name: 'web', from: 'not a service' })).status).toBe(400);
  });

  it('refuses every deploy while the rule names a tenant that does not exist', async () => {
    expect((await pds.api('alice', 'PUT', '/api/v1/tenants/acme/policy', { promotion: { from: 'acme-qa', minHealthy: '10m' } })).status).toBe(200);
    const r = await pds.api('alice', 'POST', '/api/v1/operations/deploy-service/execute', {
      action: 'onboard', team_name: 'acme', component_name: 'web', dockerfile_repo: 'acme/web', git_tag: '0.1.0', port: '8080',
    });
    expect(r.status).toBe(403);
    expect(r.body.error).toContain('but tenant acme-qa does not exist');
  });
});
