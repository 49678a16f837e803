/**
 * Issue 17 item 2, on the sandbox end to end over REST: a repository is registered to a tenant only when the caller's
 * code-host login may push to it (the sandbox's rule: the login's own account, or an organisation `<org>` whose
 * tenant of the same name has the login as admin or member). Reproduces the attack of the review — a member of
 * `alpha` granting, syncing and onboarding another organisation's repository, and redeploying a service from it —
 * and the shared-organisation monorepo the rule allows.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openRecordStore } from '../../adapters/sql/index.js';
import { executeAndWait, registerRepository, startTestServer, waitForWorkflow, type TestServer } from '../helpers/server.js';

let pds: TestServer;

const execute = (user: string, operation: string, params: Record<string, string>) =>
  pds.api(user, 'POST', `/api/v1/operations/${operation}/execute`, params);
const onboard = (team: string, app: string, repo: string) => ({
  action: 'onboard', team_name: team, component_name: app, dockerfile_repo: repo, git_tag: '0.1.0', port: '8080',
});
const deploy = (team: string, app: string, repo: string, tag: string, extra: Record<string, string> = {}) => ({
  action: 'deploy', team_name: team, component_name: app, dockerfile_repo: repo, git_tag: tag, ...extra,
});
const registered = async (user: string, team: string): Promise<string[]> =>
  (await pds.api(user, 'GET', `/api/v1/repos?team=${team}`)).body.items.map((r: { fullName: string }) => r.fullName);

beforeAll(async () => {
  pds = await startTestServer();
  await executeAndWait(pds, 'root', 'create-tenant', { team_name: 'alpha', admins: 'mallory' });
  await executeAndWait(pds, 'root', 'create-tenant', { team_name: 'bravo', admins: 'bruno' });
  await executeAndWait(pds, 'root', 'create-tenant', { team_name: 'acme', admins: 'alice' });
  await executeAndWait(pds, 'root', 'create-tenant', { team_name: 'acme-pay', admins: 'alice', members: 'pat,jane@example.com' });
  await registerRepository(pds, 'bruno', 'bravo', 'bravo/web');
  await registerRepository(pds, 'mallory', 'alpha', 'alpha/web');
});
afterAll(() => pds.stop());

describe('registration needs push access of the caller (issue 17 item 2)', () => {
  it('refuses a cross-organisation claim: grant-access and sync of another org\'s repository register nothing', async () => {
    expect((await pds.api('mallory', 'POST', '/api/v1/repos/grant-access', { team_name: 'alpha', repo: 'bravoorg/web' })).status).toBe(200);
    const sync = await pds.api('mallory', 'POST', '/api/v1/repos/sync', { team: 'alpha' });
    expect(sync.status).toBe(200);
    expect(sync.body.added).toEqual([]);
    expect(sync.body.refused).toEqual([expect.objectContaining({ repo: 'bravoorg/web' })]);
    expect(await registered('mallory', 'alpha')).not.toContain('bravoorg/web');
    const stolen = await execute('mallory', 'deploy-service', onboard('alpha', 'stolen', 'bravoorg/web'));
    expect(stolen.status).toBe(403);
  });

  it('refuses a cross-tenant claim: a repository of another tenant\'s organisation', async () => {
    await pds.api('mallory', 'POST', '/api/v1/repos/grant-access', { team_name: 'alpha', repo: 'bravo/web' });
    const sync = await pds.api('mallory', 'POST', '/api/v1/repos/sync', { team: 'alpha' });
    expect(sync.body.added).toEqual([]);
    expect(await registered('mallory', 'alpha')).not.toContain('bravo/web');
    expect((await execute('mallory', 'deploy-service', onboard('alpha', 'stolen', 'bravo/web'))).status).toBe(403);
  });

  it('answers 403 to a sync whose user is not the caller\'s own login, and to a caller with no code-host login', async () => {
    const other = await pds.api('mallory', 'POST', '/api/v1/repos/sync', { team: 'alpha', user: 'bravo' });
    expect(other.status).toBe(403);
    expect(other.body.error).toMatch(/"bravo".*mallory/);
    expect((await pds.api('mallory', 'POST', '/api/v1/repos/sync', { team: 'alpha', user: 'Mallory' })).status).toBe(200);
    const email = await pds.api('jane@example.com', 'POST', '/api/v1/repos/sync', { team: 'acme-pay' });
    expect(email.status).toBe(403);
    expect(email.body.error).toMatch(/code-host login/);
  });

  it('lets one organisation\'s monorepo serve two tenants, each registered by someone who may push to it', async () => {
    await registerRepository(pds, 'alice', 'acme', 'acme/mono');
    await registerRepository(pds, 'alice', 'acme-pay', 'acme/mono');
    // pat is a member of acme-pay but not of the organisation acme: the rule does not let pat register acme's code.
    await pds.api('pat', 'POST', '/api/v1/repos/grant-access', { team_name: 'acme-pay', repo: 'acme/other' });
    expect((await pds.api('pat', 'POST', '/api/v1/repos/sync', { team: 'acme-pay' })).body.added).toEqual([]);
    const items = (await pds.api('alice', 'GET', '/api/v1/repos?team=acme-pay')).body.items;
    expect(items).toEqual([expect.objectContaining({ fullName: 'acme/mono', registeredBy: 'alice', registeredVia: 'push-access:org-member' })]);
    expect((await executeAndWait(pds, 'alice', 'deploy-service', onboard('acme', 'web', 'acme/mono'))).audit.status).toBe('succeeded');
    expect((await executeAndWait(pds, 'alice', 'deploy-service', onboard('acme-pay', 'api', 'acme/mono'))).audit.status).toBe('succeeded');
  });
});

describe('registrations from before the rule (issue 17 item 2)', () => {
  it('build nothing until someone who may push syncs them again', async () => {
    // A row as migration 0004 leaves an older registration: no registrant (written through a second connection).
    const store = await openRecordStore({ dataDir: pds.dataDir });
    try {
      const acme = (await store.tenants.get('acme'))!;
      await store.repositories.register(acme.uid, 'acme', [{ fullName: 'bravo/legacy', defaultBranch: 'main', private: true, url: 'u' }]);
    } finally {
      await store.close();
    }
    const legacy = await execute('alice', 'deploy-service', onboard('acme', 'legacy', 'bravo/legacy'));
    expect(legacy.status).toBe(403);
    expect(legacy.body.error).toMatch(/before registrations needed push access/);
    // alice may not push to bravo's code, so her sync does not make it buildable either.
    await pds.api('alice', 'POST', '/api/v1/repos/grant-access', { team_name: 'acme', repo: 'bravo/legacy' });
    expect((await pds.api('alice', 'POST', '/api/v1/repos/sync', { team: 'acme' })).body.added).not.toContain('bravo/legacy');
    expect((await execute('alice', 'deploy-service', onboard('acme', 'legacy', 'bravo/legacy'))).status).toBe(403);
  });
});

describe('a service builds from the repository it was onboarded from (issue 17 item 2)', () => {
  it('refuses a deploy or rollback from another repository, naming both; a move is explicit and audited', async () => {
    await executeAndWait(pds, 'bruno', 'deploy-service', onboard('bravo', 'web', 'bravo/web'));
    await executeAndWait(pds, 'mallory', 'deploy-service', onboard('alpha', 'web', 'alpha/web'));
    await registerRepository(pds, 'bruno', 'bravo', 'bruno/fork');

    const other = await execute('bruno', 'deploy-service', deploy('bravo', 'web', 'bruno/fork', '0.2.0'));
    expect(other.status).toBe(400);
    expect(other.body.error).toContain('bravo/web');
    expect(other.body.error).toContain('bruno/fork');
    expect(other.body.error).toContain('move_from_repo');

    // The move names the repository it leaves; a wrong one is refused too.
    expect((await execute('bruno', 'deploy-service', deploy('bravo', 'web', 'bruno/fork', '0.2.0', { move_from_repo: 'alpha/web' }))).status).toBe(400);
    const moved = await execute('bruno', 'deploy-service', deploy('bravo', 'web', 'bruno/fork', '0.2.0', { move_from_repo: 'bravo/web' }));
    expect(moved.status, JSON.stringify(moved.body)).toBe(200);
    const done = await waitForWorkflow(pds, 'bruno', moved.body.workflowName);
    expect(done.audit).toMatchObject({ status: 'succeeded', parameters: { dockerfile_repo: 'bruno/fork', move_from_repo: 'bravo/web' } });

    // From now on the old repository is the other one, and its tags are not rolled back to.
    expect((await execute('bruno', 'deploy-service', deploy('bravo', 'web', 'bravo/web', '0.3.0'))).status).toBe(400);
    const rollback = await execute('bruno', 'rollback-service', { team_name: 'bravo', component_name: 'web', target_tag: '0.1.0' });
    expect(rollback.status).toBe(400);
    expect(rollback.body.error).toContain('bravo/web');
    expect(rollback.body.error).toContain('bruno/fork');
  });
});
