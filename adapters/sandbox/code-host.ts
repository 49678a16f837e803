/**
 * The sandbox's {@link CodeHost}: no GitHub. Asking for the grant-access URL stands in for the user installing the
 * GitHub App on that repository (`docs/api.md#first-time-onboarding-sequence`, step 3): the sandbox records an "installation"
 * for the team, and the next `syncRepositories` of that team registers the repository — only when the caller may push
 * to it (issue 17 item 2, the rule of the GitHub App code host in `adapters/github/app.ts`).
 *
 * Who may push, in the sandbox (a test or a demo drives it through tenants): a login pushes to its own account's
 * repositories (`<login>/<repo>`, `push-access:owner`), and to an organisation `<org>`'s repositories when the tenant
 * named `<org>` has the login as `admin` or `member` (`push-access:org-member`) — the sandbox's stand-in for the
 * organisation's members. Viewers, other tenants' members and platform admins as such may not.
 *
 * Ids: the sandbox has no repositories to number, so a repository's id and its owner's are derived from their names
 * ({@link sandboxRepositoryIds}): stable across restarts and tenants, as GitHub's are for one repository.
 */
import { createHash } from 'node:crypto';
import { InvalidParams, NotFound } from '../../core/errors.js';
import { RepoFullName, type Repository } from '../../core/model.js';
import type { CodeHost } from '../../core/ports.js';
import type { RecordStore, Records } from '../sql/index.js';

export interface CodeHostOptions {
  store: RecordStore;
  /** GitHub App slug for the install URL (`PDS_GITHUB_APP_SLUG`). */
  githubAppSlug: string;
  now: () => Date;
}

/**
 * How `login` may push to `repo` in the sandbox: `push-access:owner` (its own account), `push-access:org-member` (an
 * admin or member of the tenant named like the owner), or `undefined` (it may not). Logins compare case-insensitively,
 * as GitHub's do.
 */
async function pushAccess(store: Pick<Records, 'tenants'>, repo: string, login: string): Promise<string | undefined> {
  const owner = repo.split('/')[0]!.toLowerCase();
  const who = login.toLowerCase();
  if (owner === who) return 'push-access:owner';
  const org = await store.tenants.get(owner);
  const member = org?.members.find((m) => m.userId.toLowerCase() === who);
  return member && member.role !== 'viewer' ? 'push-access:org-member' : undefined;
}

/** A stable id for `name` (case-insensitive, as GitHub names are): decimal text of 48 bits of its SHA-256. */
function stableId(name: string): string {
  return String(createHash('sha256').update(name.toLowerCase()).digest().readUIntBE(0, 6));
}

/**
 * The ids the sandbox gives `repo` (`<owner>/<repo>`) and its owner, what GitHub's `repository_id` and
 * `repository_owner_id` are for a real one.
 * @example sandboxRepositoryIds('acme/web') // { id: '…', ownerId: '…' }, the same every time
 */
export function sandboxRepositoryIds(repo: string): { id: string; ownerId: string } {
  return { id: stableId(`repository:${repo}`), ownerId: stableId(`owner:${repo.split('/')[0]}`) };
}

/** Create the sandbox code host. */
export function sandboxCodeHost({ store, githubAppSlug, now }: CodeHostOptions): CodeHost {
  /** The live tenant's uid: registrations and installations belong to it, not to its name (issue 7 item 4). */
  async function tenantUid(team: string): Promise<string> {
    const tenant = await store.tenants.get(team);
    if (!tenant) throw new NotFound(`tenant not found: ${team}`);
    return tenant.uid;
  }

  return {
    /** @throws NotFound `tenant not found: <team>`. */
    async listRepositories(team) {
      return store.repositories.list(await tenantUid(team));
    },

    /**
     * Register every repository the team was granted (through `grantAccessUrl`) that `login` may push to (see the
     * module comment) and is not registered yet; the others are refused with why. The installation belongs to the
     * tenant that asked for it — the live tenant, so a tenant re-created under a deleted one's name inherits none.
     * @throws NotFound `tenant not found: <team>`.
     */
    async syncRepositories(team, login) {
      const uid = await tenantUid(team);
      const refused: Array<{ repo: string; reason: string }> = [];
      const added = await store.transaction(async (tx) => {
        const repositories: Repository[] = [];
        for (const installation of await tx.repositories.installations(uid)) {
          const via = await pushAccess(tx, installation.repo, login);
          if (!via) {
            refused.push({ repo: installation.repo, reason: `${login} may not push to ${installation.repo}` });
            continue;
          }
          repositories.push({
            fullName: installation.repo,
            defaultBranch: 'main',
            private: true,
            url: `https://github.com/${installation.repo}`,
            installationId: installation.id,
            ...sandboxRepositoryIds(installation.repo),
            registeredBy: login,
            registeredVia: via,
            registeredAt: now().toISOString(),
          });
        }
        return tx.repositories.register(uid, team, repositories);
      });
      return { repositories: await store.repositories.list(uid), added, refused };
    },

    /**
     * `https://github.com/apps/<slug>/installations/new?state=<team>:<owner>/<repo>`; also records the sandbox
     * installation (once per tenant and repository).
     * @throws InvalidParams when `repo` is not `<owner>/<repo>`; NotFound `tenant not found: <team>`.
     */
    async grantAccessUrl(team, repo) {
      const parsed = RepoFullName.safeParse(repo);
      if (!parsed.success) throw new InvalidParams(`repo: ${parsed.error.issues[0]?.message ?? 'must be "<owner>/<repo>"'}`);
      const uid = await tenantUid(team);
      await store.repositories.addInstallation({ tenantUid: uid, team, repo, createdAt: now().toISOString() });
      const state = encodeURIComponent(`${team}:${repo}`);
      return { url: `https://github.com/apps/${encodeURIComponent(githubAppSlug)}/installations/new?state=${state}` };
    },

    /** @throws NotFound always: the sandbox cannot read repositories. */
    async readTree(repo) {
      throw new NotFound(
        `the sandbox cannot read code-host repositories (${repo}); pass the repository's file list (and the files to inspect) instead`,
      );
    },
  };
}
