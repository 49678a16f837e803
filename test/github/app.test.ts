/**
 * The GitHub App code host (adapters/github/app.ts) against the wire-format GitHub fixture: app JWT → installation
 * token → installation repositories, registrations in the record store per tenant identity.
 */
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { githubAppCodeHost, readPrivateKey } from '../../adapters/github/app.js';
import { openRecordStore, type RecordStore } from '../../adapters/sql/index.js';
import type { CodeHost } from '../../core/ports.js';
import { startGitHubFixture, type GitHubFixture } from '../fixtures/github-api.js';

const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const PRIVATE_PEM = privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();
const PUBLIC_PEM = publicKey.export({ type: 'spki', format: 'pem' }).toString();

let github: GitHubFixture;
let dir: string;
let store: RecordStore;
let tenants: Record<string, string>;
let host: CodeHost;

const make = (key = PRIVATE_PEM, appId = '4242') =>
  githubAppCodeHost({
    appId,
    privateKey: key,
    slug: 'pds-platform',
    baseUrl: github.url,
    tenantRef: async (team) => (tenants[team] ? { name: team, uid: tenants[team]! } : undefined),
    repositories: store.repositories,
  });

beforeAll(async () => {
  github = await startGitHubFixture();
  github.setApp('4242', PUBLIC_PEM);
  github.addInstallation(7, 'alice', [{ fullName: 'alice/tools', private: false }]);
  github.addInstallation(8, 'acme', [
    { fullName: 'acme/web', files: { Dockerfile: 'FROM node:20\n', 'package.json': '{"name":"web"}', 'src/index.js': '' } },
    { fullName: 'acme/secret-plans' },
  ]);
  github.addInstallation(9, 'bravoorg', [{ fullName: 'bravoorg/web' }, { fullName: 'bravoorg/api' }]);
  github.setPermission('alice/tools', 'alice', 'admin');
  github.setPermission('acme/web', 'alice', 'maintain');
  github.setPermission('acme/secret-plans', 'alice', 'triage');
  github.setPermission('bravoorg/web', 'bruno', 'write');
  github.addToken('ghp_mallory', 'mallory', ['read:user']);
  dir = mkdtempSync(path.join(tmpdir(), 'pds-github-app-'));
  store = await openRecordStore({ dataDir: dir });
});
afterAll(async () => {
  await store.close();
  await github.close();
  rmSync(dir, { recursive: true, force: true });
});
beforeEach(() => {
  tenants = { acme: crypto.randomUUID(), alpha: crypto.randomUUID(), bravo: crypto.randomUUID() };
  host = make();
});

describe('the GitHub App code host', () => {
  it('grants access by the app installation page and records what the team asked for', async () => {
    const { url } = await host.grantAccessUrl('acme', 'acme/web');
    expect(url).toBe('https://github.com/apps/pds-platform/installations/new?state=acme%3Aacme%2Fweb');
    await expect(host.grantAccessUrl('acme', 'not a repo')).rejects.toMatchObject({ code: 'INVALID_PARAMS' });
    await expect(host.grantAccessUrl('ghost', 'acme/web')).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });

  it('syncs through the app JWT and installation tokens: the user\'s own installation whole, an organization only for what was asked', async () => {
    github.appRequests.length = 0;
    await host.grantAccessUrl('acme', 'acme/web');
    const { repositories, added } = await host.syncRepositories('acme', 'alice');
    expect(added).toEqual(['acme/web', 'alice/tools']);
    expect(repositories.map((r) => [r.fullName, r.installationId, r.private])).toEqual([
      ['acme/web', 8, true],
      ['alice/tools', 7, false],
    ]);
    expect(github.appRequests).toEqual(
      expect.arrayContaining([
        'GET /app/installations', 'POST /app/installations/7/access_tokens', 'POST /app/installations/8/access_tokens', 'GET /installation/repositories',
        'GET /repos/acme/web/collaborators/alice/permission', 'GET /repos/alice/tools/collaborators/alice/permission',
      ]),
    );
    // Who registered them and how (issue 17 item 2).
    expect((await host.listRepositories('acme')).map((r) => [r.fullName, r.registeredBy, r.registeredVia])).toEqual([
      ['acme/web', 'alice', 'push-access:write'],
      ['alice/tools', 'alice', 'push-access:admin'],
    ]);
    // GitHub's ids of each repository and its owner, which CI tokens are matched on (issue 20 item 6).
    expect((await host.listRepositories('acme')).map((r) => [r.fullName, r.id, r.ownerId])).toEqual([
      ['acme/web', String(100_000 + 'acme/web'.length), String(200_000 + 'acme'.length)],
      ['alice/tools', String(100_000 + 'alice/tools'.length), String(200_000 + 'alice'.length)],
    ]);
    // Idempotent, and per tenant identity: a tenant re-created under the name starts empty.
    expect((await host.syncRepositories('acme', 'alice')).added).toEqual([]);
    expect(await host.listRepositories('acme')).toHaveLength(2);
    tenants.acme = crypto.randomUUID();
    expect(await host.listRepositories('acme')).toEqual([]);
  });

  it('registers only what the caller may push to: another organisation\'s repository is refused, even when asked for (issue 17 item 2)', async () => {
    github.appRequests.length = 0;
    await host.grantAccessUrl('alpha', 'bravoorg/web');
    const mallory = await host.syncRepositories('alpha', 'mallory');
    expect(mallory.added).toEqual([]);
    expect(mallory.refused).toEqual([expect.objectContaining({ repo: 'bravoorg/web' })]);
    expect(await host.listRepositories('alpha')).toEqual([]);
    expect(github.appRequests).toContain('GET /repos/bravoorg/web/collaborators/mallory/permission');
    // Read access is not push access.
    await host.grantAccessUrl('acme', 'acme/secret-plans');
    const alice = await host.syncRepositories('acme', 'alice');
    expect(alice.added).not.toContain('acme/secret-plans');
    expect(alice.refused.map((r) => r.repo)).toContain('acme/secret-plans');
    // The same repository serves a second tenant when someone who may push to it registers it there.
    await host.grantAccessUrl('bravo', 'bravoorg/web');
    expect((await host.syncRepositories('bravo', 'bruno')).added).toEqual(['bravoorg/web']);
    await host.grantAccessUrl('alpha', 'bravoorg/web');
    expect((await host.syncRepositories('alpha', 'bruno')).added).toEqual(['bravoorg/web']);
    // An organisation's installation is never registered whole: bravoorg/api was not asked for.
    expect((await host.listRepositories('bravo')).map((r) => r.fullName)).toEqual(['bravoorg/web']);
  });

  it('reads a repository tree and the files asked for through its installation', async () => {
    const tree = await host.readTree('acme/web', { read: ['Dockerfile', 'missing.txt'] });
    expect(tree.paths.sort()).toEqual(['Dockerfile', 'package.json', 'src/index.js']);
    expect(tree.files).toEqual({ Dockerfile: 'FROM node:20\n' });
    await expect(host.readTree('acme/unknown')).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });

  it('is refused by GitHub with another key or app id, and says so as an upstream error', async () => {
    const other = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();
    await expect(make(other).syncRepositories('acme', 'alice')).rejects.toMatchObject({ code: 'UPSTREAM' });
    await expect(make(PRIVATE_PEM, '999').syncRepositories('acme', 'alice')).rejects.toMatchObject({ code: 'UPSTREAM' });
  });

  it('reads the private key from PDS_GITHUB_APP_PRIVATE_KEY (\\n escaped) or from the file', () => {
    expect(readPrivateKey(PRIVATE_PEM.replace(/\n/g, '\\n'), undefined)).toBe(PRIVATE_PEM);
    const file = path.join(dir, 'key.pem');
    writeFileSync(file, PRIVATE_PEM);
    expect(readPrivateKey(undefined, file)).toBe(PRIVATE_PEM);
    expect(readPrivateKey(undefined, undefined)).toBeUndefined();
  });
});
