/**
 * The cluster's {@link CodeHost}: a GitHub App (issue 10 "Repositories"), through `@octokit/auth-app` (app JWT →
 * installation access tokens, cached and renewed by the strategy) and `@octokit/rest`. Registrations are kept per
 * tenant identity in the record store (`adapters/sql/repositories.ts`).
 *
 * - `grantAccessUrl`: the app's installation page (`https://github.com/apps/<slug>/installations/new`, `state` =
 *   `<team>:<owner>/<repo>`), and a note that the team asked for that repository.
 * - `syncRepositories(team, login)`: the app's installations (`GET /app/installations`) on the account `login` or on
 *   an owner of a repository the team asked for; per installation, `GET /installation/repositories` with its token.
 *   Candidates are every repository of the login's own installations and the repositories the team asked for; each is
 *   registered only when GitHub says `login` may push to it (issue 17 item 2):
 *   `GET /repos/{owner}/{repo}/collaborators/{login}/permission` with the installation token, `user.permissions.push`
 *   (or the legacy `permission` `admin`/`write`), recorded as `push-access:<permission>`. Anything less is refused,
 *   so granting an organisation's repository to a tenant takes someone who can push to it, per tenant. The
 *   repository's `id` and `owner.id` are recorded with it (a CI token is matched on them, not on the name).
 * - `readTree`: the installation on the repository (`GET /repos/{owner}/{repo}/installation`), then its default
 *   branch, `GET /repos/{owner}/{repo}/git/trees/{ref}?recursive=1` and `GET …/contents/{path}` per file read.
 *
 * GitHub errors stop here: 404 → NotFound, 401/403 → Upstream naming the app's configuration, others Upstream.
 */
import { readFileSync } from 'node:fs';
import { createAppAuth } from '@octokit/auth-app';
import { Octokit } from '@octokit/rest';
import { InvalidParams, NotFound, Upstream } from '../../core/errors.js';
import { RepoFullName, type Repository } from '../../core/model.js';
import type { CodeHost, TenantRef } from '../../core/ports.js';
import type { RepositoryStore } from '../sql/repositories.js';

export interface GitHubAppOptions {
  /** `PDS_GITHUB_APP_ID`. */
  appId: string;
  /** The app's private key, PEM (`PDS_GITHUB_APP_PRIVATE_KEY`, or the file `PDS_GITHUB_APP_PRIVATE_KEY_FILE`). */
  privateKey: string;
  /** `PDS_GITHUB_APP_SLUG`: the app's URL name, for the installation page. */
  slug: string;
  /** `PDS_GITHUB_API_URL`. */
  baseUrl: string;
  /** Where the installation page is (default `https://github.com`). */
  webUrl?: string;
  /** A tenant's identity, or `undefined` when it does not exist. */
  tenantRef(team: string): Promise<TenantRef | undefined>;
  repositories: RepositoryStore;
  fetch?: typeof fetch;
  /** Milliseconds a GitHub call may take (default 10,000). */
  timeoutMs?: number;
}

/** The private key from `PDS_GITHUB_APP_PRIVATE_KEY` or the file `PDS_GITHUB_APP_PRIVATE_KEY_FILE`. @throws Error when the file cannot be read. */
export function readPrivateKey(value: string | undefined, file: string | undefined): string | undefined {
  if (value) return value.includes('\\n') ? value.replace(/\\n/g, '\n') : value;
  if (file) return readFileSync(file, 'utf8');
  return undefined;
}

interface GitHubRepo {
  id: number;
  owner: { id: number };
  full_name: string;
  default_branch?: string;
  private: boolean;
  html_url: string;
}

/** Create the GitHub App code host. */
export function githubAppCodeHost(options: GitHubAppOptions): CodeHost {
  const silent = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };
  const request = { ...(options.fetch ? { fetch: options.fetch } : {}), timeout: options.timeoutMs ?? 10_000 };
  const auth = { appId: options.appId, privateKey: options.privateKey };
  const app = new Octokit({ baseUrl: options.baseUrl, userAgent: 'pds', authStrategy: createAppAuth, auth, request, log: silent });
  const installationClients = new Map<number, Octokit>();
  const asInstallation = (installationId: number): Octokit => {
    let client = installationClients.get(installationId);
    if (!client) {
      client = new Octokit({ baseUrl: options.baseUrl, userAgent: 'pds', authStrategy: createAppAuth, auth: { ...auth, installationId }, request, log: silent });
      installationClients.set(installationId, client);
    }
    return client;
  };

  async function tenant(team: string): Promise<TenantRef> {
    const ref = await options.tenantRef(team);
    if (!ref) throw new NotFound(`tenant not found: ${team}`);
    return ref;
  }

  // GitHub's ids, recorded so a CI token of a repository re-created under the name is told apart (issue 20 item 6).
  const toRepository = (r: GitHubRepo, installationId: number): Repository => ({
    fullName: r.full_name,
    defaultBranch: r.default_branch ?? 'main',
    private: r.private,
    url: r.html_url,
    installationId,
    ...(typeof r.id === 'number' && typeof r.owner?.id === 'number' && { id: String(r.id), ownerId: String(r.owner.id) }),
  });

  async function installationOf(repo: string): Promise<number> {
    const [owner, name] = repo.split('/') as [string, string];
    try {
      const { data } = await app.rest.apps.getRepoInstallation({ owner, repo: name });
      return data.id;
    } catch (err) {
      throw translate(err, `the GitHub App is not installed on ${repo}; ask for access with platform_grant_repo_access`);
    }
  }

  return {
    async listRepositories(team) {
      const ref = await tenant(team);
      return options.repositories.list(ref.uid);
    },

    async syncRepositories(team, login) {
      const ref = await tenant(team);
      const asked = await options.repositories.installations(ref.uid);
      const askedOwners = new Set(asked.map((i) => i.repo.split('/')[0]!.toLowerCase()));
      const askedRepos = new Set(asked.map((i) => i.repo.toLowerCase()));
      let installations: Array<{ id: number; account?: { login?: string } | null }>;
      try {
        installations = await app.paginate(app.rest.apps.listInstallations, { per_page: 100 });
      } catch (err) {
        throw translate(err, 'the GitHub App cannot list its installations');
      }
      const found: Repository[] = [];
      const refused: Array<{ repo: string; reason: string }> = [];
      const seen = new Set<string>();
      for (const installation of installations) {
        const account = (installation.account?.login ?? '').toLowerCase();
        const own = account === login.toLowerCase();
        if (!own && !askedOwners.has(account)) continue;
        const client = asInstallation(installation.id);
        let repos: GitHubRepo[];
        try {
          repos = (await client.paginate(client.rest.apps.listReposAccessibleToInstallation, { per_page: 100 })) as unknown as GitHubRepo[];
        } catch (err) {
          throw translate(err, `the GitHub App cannot list the repositories of installation ${installation.id}`);
        }
        for (const r of repos) {
          if (!own && !askedRepos.has(r.full_name.toLowerCase())) continue;
          seen.add(r.full_name.toLowerCase());
          const permission = await pushPermission(client, r.full_name, login);
          if (!permission) {
            refused.push({ repo: r.full_name, reason: `GitHub says ${login} may not push to ${r.full_name}` });
            continue;
          }
          found.push({ ...toRepository(r, installation.id), registeredBy: login, registeredVia: `push-access:${permission}`, registeredAt: new Date().toISOString() });
        }
      }
      for (const { repo } of asked) {
        if (!seen.has(repo.toLowerCase())) refused.push({ repo, reason: `the GitHub App is not installed on ${repo} (yet)` });
      }
      const added = await options.repositories.register(ref.uid, team, found);
      return { repositories: await options.repositories.list(ref.uid), added, refused };
    },

    async grantAccessUrl(team, repo) {
      const parsed = RepoFullName.safeParse(repo);
      if (!parsed.success) throw new InvalidParams(`repo: ${parsed.error.issues[0]?.message ?? 'must be "<owner>/<repo>"'}`);
      const ref = await tenant(team);
      const asked = await options.repositories.installations(ref.uid);
      if (!asked.some((i) => i.repo === repo)) {
        await options.repositories.addInstallation({ tenantUid: ref.uid, team, repo, createdAt: new Date().toISOString() });
      }
      const state = encodeURIComponent(`${team}:${repo}`);
      return { url: `${options.webUrl ?? 'https://github.com'}/apps/${encodeURIComponent(options.slug)}/installations/new?state=${state}` };
    },

    async readTree(repo, readOptions = {}) {
      const [owner, name] = repo.split('/') as [string, string];
      const client = asInstallation(await installationOf(repo));
      try {
        const ref = readOptions.ref ?? (await client.rest.repos.get({ owner, repo: name })).data.default_branch;
        const { data: tree } = await client.rest.git.getTree({ owner, repo: name, tree_sha: ref, recursive: 'true' });
        const paths = tree.tree.filter((e) => e.type === 'blob' && e.path).map((e) => e.path!);
        const files: Record<string, string> = {};
        for (const path of readOptions.read ?? []) {
          if (!paths.includes(path)) continue;
          const { data } = await client.rest.repos.getContent({ owner, repo: name, path, ref });
          if (!Array.isArray(data) && data.type === 'file' && 'content' in data) files[path] = Buffer.from(data.content, 'base64').toString('utf8');
        }
        return { paths, files };
      } catch (err) {
        throw translate(err, `the platform cannot read ${repo}`);
      }
    },
  };
}

/**
 * The permission that lets `login` push to `repo` (`admin` or `write`), or `undefined` when it has none, is not a
 * collaborator (`none`, `read`) or is unknown to GitHub (404). GitHub's "Get repository permissions for a user"
 * (https://docs.github.com/rest/collaborators/collaborators#get-repository-permissions-for-a-user): `permission` is the
 * legacy role (`maintain` reads `write`, `triage` reads `read`), `user.permissions.push` the precise answer when sent.
 * @throws Upstream when GitHub refuses the app or cannot be reached.
 */
async function pushPermission(client: Octokit, repo: string, login: string): Promise<string | undefined> {
  const [owner, name] = repo.split('/') as [string, string];
  let data: { permission: string; user: { permissions?: { push?: boolean } } | null };
  try {
    ({ data } = await client.rest.repos.getCollaboratorPermissionLevel({ owner, repo: name, username: login }));
  } catch (err) {
    if ((err as { status?: number }).status === 404) return undefined;
    throw translate(err, `the GitHub App cannot read ${login}'s permission on ${repo}`);
  }
  const push = data.user?.permissions?.push ?? (data.permission === 'admin' || data.permission === 'write');
  return push ? (data.permission === 'admin' ? 'admin' : 'write') : undefined;
}

function translate(err: unknown, what: string): Error {
  const status = (err as { status?: number }).status;
  if (status === 404) return new NotFound(what);
  if (status === 401 || status === 403) return new Upstream(`${what}: GitHub refused the app (${status}); check PDS_GITHUB_APP_ID and its private key`, { cause: err });
  return new Upstream(`${what}: GitHub ${status ? `answered ${status}` : 'could not be reached'}`, { cause: err });
}
