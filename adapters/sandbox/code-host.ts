/**
 * The sandbox's {@link CodeHost}: no GitHub. Asking for the grant-access URL stands in for the user installing the
 * GitHub App on that repository (`docs/api.md#first-time-onboarding-sequence`, step 3): the sandbox records an "installation"
 * for the team, and the next `syncRepositories` of that team registers the repository.
 */
import { InvalidParams, NotFound } from '../../core/errors.js';
import { RepoFullName, type Repository } from '../../core/model.js';
import type { CodeHost } from '../../core/ports.js';
import type { RecordStore } from '../sql/index.js';

export interface CodeHostOptions {
  store: RecordStore;
  /** GitHub App slug for the install URL (`PDS_GITHUB_APP_SLUG`). */
  githubAppSlug: string;
  now: () => Date;
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
     * Register every repository the team was granted (through `grantAccessUrl`) and is not registered yet. `user` is
     * not consulted: the sandbox has no GitHub users, the installation belongs to the tenant that asked for it — the
     * live tenant, so a tenant re-created under a deleted one's name inherits none of its installations.
     * @throws NotFound `tenant not found: <team>`.
     */
    async syncRepositories(team, _user) {
      const uid = await tenantUid(team);
      const added = await store.transaction(async (tx) => {
        const repositories: Repository[] = (await tx.repositories.installations(uid)).map((installation) => ({
          fullName: installation.repo,
          defaultBranch: 'main',
          private: true,
          url: `https://github.com/${installation.repo}`,
          installationId: installation.id,
        }));
        return tx.repositories.register(uid, team, repositories);
      });
      return { repositories: await store.repositories.list(uid), added };
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
