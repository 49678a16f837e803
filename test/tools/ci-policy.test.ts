/** The CI and sync-window parts of a tenant policy (issue 20 items 1 and 6), as pure functions. */
import { describe, expect, it } from 'vitest';
import { CiPolicy, ciPolicyRefusal, refMatches, type GitHubActionsRun } from '../../core/governance/ci.js';
import { TenantPolicy } from '../../core/governance/policy.js';
import { argoSyncWindows, goDuration } from '../../core/governance/sync-windows.js';
import { githubActionsUserId, isGitHubActionsId, parseMemberReference, parseUserId } from '../../core/identity.js';

const run: GitHubActionsRun = {
  repository: 'acme/web',
  repository_id: '1',
  repository_owner: 'acme',
  repository_owner_id: '2',
  ref: 'refs/heads/main',
  event_name: 'push',
  run_id: '3',
  run_url: 'https://github.com/acme/web/actions/runs/3',
};

describe('the CI policy', () => {
  it('matches refs as GitHub filter patterns read * and **, nothing else', () => {
    expect(refMatches('refs/tags/*', 'refs/tags/0.1.2')).toBe(true);
    expect(refMatches('refs/heads/*', 'refs/heads/feature/x')).toBe(false);
    expect(refMatches('refs/heads/**', 'refs/heads/feature/x')).toBe(true);
    expect(refMatches('refs/heads/main', 'refs/heads/mainline')).toBe(false);
    expect(refMatches('refs/tags/v1.?', 'refs/tags/v1.2')).toBe(false);
  });

  it('is off unless opted in, and an opt-in names its refs', () => {
    expect(ciPolicyRefusal(undefined, run, 'acme')).toMatch(/does not accept GitHub Actions OIDC tokens/);
    expect(ciPolicyRefusal({ githubOidc: false, refs: ['refs/heads/main'] }, run, 'acme')).toMatch(/does not accept/);
    expect(ciPolicyRefusal({ githubOidc: true, refs: ['refs/heads/main'] }, run, 'acme')).toBeUndefined();
    expect(ciPolicyRefusal({ githubOidc: true, refs: ['refs/tags/*'] }, run, 'acme')).toMatch(/ref refs\/heads\/main of acme\/web is not one/);
    expect(ciPolicyRefusal({ githubOidc: true, refs: ['refs/heads/main'] }, { ...run, event_name: 'pull_request' }, 'acme')).toMatch(/only push and workflow_dispatch/);
    expect(CiPolicy.safeParse({ githubOidc: true }).success).toBe(false);
    expect(CiPolicy.safeParse({ githubOidc: true, refs: ['main'] }).success).toBe(false);
    expect(TenantPolicy.parse({ ci: { githubOidc: true, refs: ['refs/heads/main'] } })).toEqual({ ci: { githubOidc: true, refs: ['refs/heads/main'] } });
  });

  it('gives a run the caller id github-actions:<owner>/<repo>, which no person, member or approver can have', () => {
    expect(githubActionsUserId('acme/web')).toBe('github-actions:acme/web');
    expect(githubActionsUserId('acme')).toBeUndefined();
    expect(isGitHubActionsId('github-actions:acme/web')).toBe(true);
    expect(parseUserId('github-actions:acme/web')).toBeUndefined();
    expect(parseMemberReference('github-actions:acme/web')).toEqual({ kind: 'github-actions', name: 'acme/web' });
  });
});

describe('freeze windows as Argo CD sync windows', () => {
  const window = { name: 'weekend', schedule: '0 18 * * 5', duration: '2d', timeZone: 'Europe/Berlin', operations: ['*'], reason: 'no one on call' };

  it('writes a window covering every syncing operation as a deny window with manualSync, in Go duration form', () => {
    expect(argoSyncWindows(TenantPolicy.parse({ freezeWindows: [window] }))).toEqual([
      { kind: 'deny', schedule: '0 18 * * 5', duration: '48h', timeZone: 'Europe/Berlin', applications: ['*'], manualSync: true, description: 'pds freeze window "weekend": no one on call' },
    ]);
    const every = ['deploy-service', 'rollback-service', 'retire-service', 'provision-database', 'preview-deploy', 'preview-delete'];
    expect(argoSyncWindows(TenantPolicy.parse({ freezeWindows: [{ ...window, operations: every }] }))).toHaveLength(1);
  });

  it('leaves to pds a window that covers only some syncing operations, or whose schedule has seconds', () => {
    expect(argoSyncWindows(TenantPolicy.parse({ freezeWindows: [{ ...window, operations: ['deploy-service', 'rollback-service'] }] }))).toEqual([]);
    expect(argoSyncWindows(TenantPolicy.parse({ freezeWindows: [{ ...window, schedule: '0 0 18 * * 5' }] }))).toEqual([]);
    expect(argoSyncWindows({})).toEqual([]);
  });

  it('spells durations as time.ParseDuration reads them', () => {
    expect(goDuration(5_400_000)).toBe('1h30m');
    expect(goDuration(63 * 3_600_000)).toBe('63h');
    expect(goDuration(45_000)).toBe('45s');
    expect(goDuration(90_061_000)).toBe('25h1m1s');
  });
});
