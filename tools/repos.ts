/**
 * Repository discovery (`docs/api.md#repositories`; "First-time onboarding sequence" step 3): list a team's repositories,
 * sync them from the code-host app's installations, and get the URL that grants the app access to one.
 */
import { z } from 'zod';
import { Repository, RepoFullName, TeamName } from '../core/model.js';
import { defineTool } from './define.js';
import { Forbidden } from '../core/errors.js';
import { isGitHubLogin } from '../core/identity.js';
import type { Identity } from '../auth/identity.js';

const RepoList = z.object({
  team: z.string(),
  items: z.array(Repository),
  count: z.number().int(),
});

export const listRepos = defineTool({
  name: 'platform_list_repos',
  title: 'List a team\'s repositories',
  description:
    'Repositories the platform can build for a tenant (registered through the code-host app). If the one you want is ' +
    'missing, use platform_grant_repo_access and then platform_sync_repos. Changes nothing.',
  input: z.object({ team: TeamName.describe('Tenant name, e.g. "acme"') }),
  output: RepoList,
  rest: { method: 'GET', path: '/api/v1/repos' },
  access: { tenant: (i) => i.team, role: 'viewer' },
  kind: 'read',
  toolset: 'repos',
  annotations: { idempotentHint: true, openWorldHint: true },
  handler: async ({ team }, { platform }) => {
    const items = await platform.codeHost.listRepositories(team);
    return { team, items, count: items.length };
  },
});

/**
 * The caller's code-host login: the user id when it is a GitHub login (a PAT, GitHub sign-in, or a pds token standing
 * for one), else none — an e-mail or `oidc:` identity has no code-host account pds knows of.
 */
function codeHostLogin(identity: Identity): string | undefined {
  return isGitHubLogin(identity.userId) ? identity.userId : undefined;
}

export const syncRepos = defineTool({
  name: 'platform_sync_repos',
  title: 'Sync repositories from the code-host app',
  description:
    'Registers for the tenant the code-host app\'s repositories the caller can push to: their own, and those asked for ' +
    'with platform_grant_repo_access (call after installing the app). Returns the registered, added and refused ' +
    'repositories. Counts against the write limit (20 per minute).',
  input: z.object({
    team: TeamName.describe('Tenant name, e.g. "acme"'),
    user: z
      .string()
      .min(1)
      .max(100)
      .optional()
      .describe('The caller\'s own code-host login (default), e.g. "octocat"'),
  }),
  output: RepoList.extend({
    added: z.array(z.string()).describe('Repositories newly registered, "<owner>/<repo>"'),
    refused: z.array(z.object({ repo: z.string(), reason: z.string() })).describe('Not registered, with why'),
  }),
  rest: { method: 'POST', path: '/api/v1/repos/sync' },
  access: { tenant: (i) => i.team, role: 'member' },
  kind: 'write',
  toolset: 'repos',
  annotations: { destructiveHint: false, idempotentHint: true, openWorldHint: true },
  handler: async ({ team, user }, { platform, identity }) => {
    const login = codeHostLogin(identity);
    if (!login) {
      throw new Forbidden(
        `sync registers the repositories the caller can push to on the code host, and "${identity.userId}" is no code-host ` +
          'login; sync with a GitHub personal access token or after signing in with GitHub',
      );
    }
    // GitHub logins are case-insensitive; anyone else's login would register what they, not the caller, may push to.
    if (user !== undefined && user.toLowerCase() !== login.toLowerCase()) {
      throw new Forbidden(`user: "${user}" is not the caller; sync runs only as the caller's own code-host login (${login}), or leave user out`);
    }
    const { repositories, added, refused } = await platform.codeHost.syncRepositories(team, login);
    return { team, items: repositories, count: repositories.length, added, refused };
  },
});

export const grantRepoAccess = defineTool({
  name: 'platform_grant_repo_access',
  title: 'Get the link that grants the platform access to a repository',
  description:
    'Returns the URL where a person installs the platform\'s code-host app (GitHub App) on a repository, so the ' +
    'platform can read and build it. Use when platform_list_repos does not show the repository. Open the URL, install ' +
    'the app, then call platform_sync_repos. It cannot install the app itself. Counts against the write limit.',
  input: z.object({
    team_name: TeamName.describe('Tenant name, e.g. "acme"'),
    repo: RepoFullName.describe('Repository, "<owner>/<repo>", e.g. "acme/web"'),
  }),
  output: z.object({
    team: z.string(),
    repo: z.string(),
    url: z.string().describe('Open in a browser to install the code-host app'),
    next: z.string().describe('What to do after opening the URL'),
  }),
  rest: { method: 'POST', path: '/api/v1/repos/grant-access' },
  access: { tenant: (i) => i.team_name, role: 'member' },
  kind: 'write',
  toolset: 'repos',
  annotations: { destructiveHint: false, idempotentHint: true, openWorldHint: true },
  handler: async ({ team_name, repo }, { platform, door }) => {
    const { url } = await platform.codeHost.grantAccessUrl(team_name, repo);
    const sync = door.name({ tool: 'platform_sync_repos', arguments: { team: team_name } });
    return { team: team_name, repo, url, next: `Open the URL and install the app on ${repo}, then call ${sync}.` };
  },
});

export const repoTools = [listRepos, syncRepos, grantRepoAccess] as const;
