/**
 * `pds deploy TEAM/APP --from TEAM/APP` as a real process against a real pds (issue 20 item 4): refused with the
 * promotion rule's words until the staging image ran healthy 30 minutes (the platform's clock is moved, not waited
 * for), then it deploys exactly that digest through deploy-service, audited with image_digest and promoted_from.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandboxPlatform } from '../../adapters/sandbox/index.js';
import { runCli } from '../helpers/cli-process.js';
import { executeAndWait, registerRepository, startTestServer, type TestServer } from '../helpers/server.js';
import { until } from '../helpers/until.js';

let pds: TestServer;
let home: string;
let offset = 0;

const run = (args: string[], user: string) => runCli(pds, home, args, { user });

beforeAll(async () => {
  home = await mkdtemp(path.join(tmpdir(), 'pds-cli-promote-'));
  const dataDir = await mkdtemp(path.join(tmpdir(), 'pds-test-'));
  const platform = await createSandboxPlatform({ dataDir, domain: 'apps.test', stepMs: 5, githubAppSlug: 'pds-platform', now: () => new Date(Date.now() + offset) });
  pds = await startTestServer({ PDS_DATA_DIR: dataDir }, { platform });
  for (const team of ['acme', 'acme-staging']) {
    await executeAndWait(pds, 'root', 'create-tenant', { team_name: team, admins: 'alice' });
    await registerRepository(pds, 'alice', team, 'acme/web');
    const onboarded = await executeAndWait(pds, 'alice', 'deploy-service', {
      action: 'onboard', team_name: team, component_name: 'web', dockerfile_repo: 'acme/web', git_tag: '0.1.0', port: '8080',
    });
    expect(onboarded.audit.status).toBe('succeeded');
  }
  expect((await pds.api('alice', 'PUT', '/api/v1/tenants/acme/policy', { promotion: { from: 'acme-staging', minHealthy: '30m' } })).status).toBe(200);
  const staged = await executeAndWait(pds, 'alice', 'deploy-service', { action: 'deploy', team_name: 'acme-staging', component_name: 'web', dockerfile_repo: 'acme/web', git_tag: '0.2.0' });
  expect(staged.audit.status).toBe('succeeded');
}, 60_000);

afterAll(async () => {
  await pds?.stop();
  await rm(home, { recursive: true, force: true });
});

describe('pds deploy --from', () => {
  it('is refused with what is missing, then deploys the staging digest once it ran healthy 30 minutes', async () => {
    const staging = (await pds.platform.backend.getTenantRef('acme-staging'))!;
    const running = await until('acme-staging/web observed running 0.2.0', async () => {
      const current = await pds.platform.images.current(staging, 'web');
      return current?.image.endsWith(':0.2.0') ? current : undefined;
    }, 20);

    const refused = await run(['deploy', 'acme/web', '--from', 'acme-staging/web'], 'alice');
    expect(refused.code, refused.stderr).toBe(1);
    expect(refused.stderr).toMatch(new RegExp(`ran healthy in acme-staging/web for \\d+[sm] of the 30m required \\(${running.digest}\\)`));

    offset += 31 * 60_000;
    const promoted = await run(['deploy', 'acme/web', '--from', 'acme-staging/web', '--wait', '-o', 'json'], 'alice');
    expect(promoted.code, promoted.stderr).toBe(0);
    const workflow = JSON.parse(promoted.stdout);
    expect(workflow).toMatchObject({ phase: 'succeeded' });
    const detail = await pds.api('alice', 'GET', `/api/v1/workflows/${workflow.workflow}`);
    expect(detail.body.audit).toMatchObject({
      operation: 'deploy-service',
      parameters: { action: 'deploy', git_tag: '0.2.0', dockerfile_repo: 'acme/web', image_digest: running.digest, promoted_from: 'acme-staging/web' },
    });
    expect(JSON.stringify(detail.body.steps)).toContain('exists, build skipped');
    expect((await pds.api('alice', 'GET', '/api/v1/services/acme/web')).body.imageTag).toBe('0.2.0');
  });

  it('takes --from alone', async () => {
    const both = await run(['deploy', 'acme/web', '--from', 'acme-staging/web', '--tag', '0.2.0'], 'alice');
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('--from deploys what the other service runs');
    const neither = await run(['deploy', 'acme/web'], 'alice');
    expect(neither.code).toBe(2);
    expect(neither.stderr).toContain("'--tag <tag>'");
  });
});
