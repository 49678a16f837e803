/**
 * The sandbox's {@link CodeHost}: no GitHub. Asking for the grant-access URL stands in for the user installing the
 * GitHub App on that repository (SPEC "First-time onboarding sequence", step 3): the sandbox records an "installation"
 * for the team, and the next `syncRepositories` of that team registers the repository.
 */
import { InvalidParams, NotFound } from '../../core/errors.js';
import { RepoFullName, type Repository } from '../../core/model.js';
import type { CodeHost } from '../../core/ports.js';
import { own } from './state.js';
import type { StateStore } from './store.js';

export interface CodeHostOptions {
  store: StateStore;
  /** GitHub App slug for the install URL (`PDS_GITHUB_APP_SLUG`). */
  githubAppSlug: string;
  now: () => Date;
}

/** First installation id handed out; ids only need to be unique within one data directory. */
const FIRST_INSTALLATION_ID = 1000;

/** Create the sandbox code host. */
export function sandboxCodeHost({ store, githubAppSlug, now }: CodeHostOptions): CodeHost {
  function requireTenant(team: string): void {
    if (!own(store.state.tenants, team)) throw new NotFound(`tenant not found: ${team}`);
  }

  const registered = (team: string): Repository[] =>
    (own(store.state.repositories, team) ?? []).map((r) => ({ ...r })).sort((a, b) => (a.fullName < b.fullName ? -1 : 1));

  return {
    /** @throws NotFound `tenant not found: <team>`. */
    async listRepositories(team) {
      requireTenant(team);
      return registered(team);
    },

    /**
     * Register every repository the team was granted (through `grantAccessUrl`) and is not registered yet. `user` is
     * not consulted: the sandbox has no GitHub users, the installation belongs to the team that asked for it.
     * @throws NotFound `tenant not found: <team>`.
     */
    async syncRepositories(team, _user) {
      requireTenant(team);
      const added = await store.mutate((draft) => {
        const list = own(draft.repositories, team) ?? (draft.repositories[team] = []);
        const names: string[] = [];
        for (const installation of draft.installations) {
          if (installation.team !== team || list.some((r) => r.fullName === installation.repo)) continue;
          list.push({
            fullName: installation.repo,
            defaultBranch: 'main',
            private: true,
            url: `https://github.com/${installation.repo}`,
            installationId: installation.id,
          });
          names.push(installation.repo);
        }
        return names.sort();
      });
      return { repositories: registered(team), added };
    },

    /**
     * `https://github.com/apps/<slug>/installations/new?state=<team>:<owner>/<repo>`; also records the sandbox
     * installation (once per team and repository).
     * @throws InvalidParams when `repo` is not `<owner>/<repo>`; NotFound `tenant not found: <team>`.
     */
    async grantAccessUrl(team, repo) {
      const parsed = RepoFullName.safeParse(repo);
      if (!parsed.success) throw new InvalidParams(`repo: ${parsed.error.issues[0]?.message ?? 'must be "<owner>/<repo>"'}`);
      requireTenant(team);
      await store.mutate((draft) => {
        if (draft.installations.some((i) => i.team === team && i.repo === repo)) return;
        const id = Math.max(FIRST_INSTALLATION_ID - 1, ...draft.installations.map((i) => i.id)) + 1;
        draft.installations.push({ id, team, repo, createdAt: now().toISOString() });
      });
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
