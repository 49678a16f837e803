/**
 * Repositories a tenant builds from (docs/api.md#repositories): `pds repos --team T` lists them, `pds repos grant TEAM
 * OWNER/REPO` prints the URL where a person installs the code-host app on the repository (and offers to open it on a
 * terminal), `pds repos sync TEAM` registers what the app was installed on. The CLI says TEAM everywhere; the REST
 * bodies keep the contract's names (`team_name` for grant-access, `team` for sync).
 */
import { createInterface } from 'node:readline/promises';
import type { Command } from 'commander';
import open from 'open';
import { Forbidden } from '../../core/errors.js';
import { grantRepoAccess, listRepos, syncRepos } from '../../tools/repos.js';
import { listTenants } from '../../tools/tenants.js';
import { clientOf } from '../client/api.js';
import { apiCommand, contextOf } from '../client/command.js';
import { usageError } from '../client/errors.js';
import { forPeople, print } from '../client/output.js';

interface Repository {
  fullName: string;
  defaultBranch: string;
  private: boolean;
  url: string;
}

const table = (team: string) => (l: { items: (Repository & { team?: string })[] }) => ({
  head: ['team', 'repository', 'branch', 'visibility', 'url'],
  rows: l.items.map((r) => [r.team ?? team, r.fullName, r.defaultBranch, r.private ? 'private' : 'public', r.url]),
  empty: `no repositories registered for ${team} — register one: pds repos grant ${team} OWNER/REPO, then pds repos sync ${team}`,
});

/** Ask a yes/no question on a terminal (default yes); anywhere else the answer is no. */
async function askYes(question: string): Promise<boolean> {
  if (!process.stdin.isTTY || !process.stderr.isTTY) return false;
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return /^(y(es)?)?$/i.test((await rl.question(question)).trim());
  } finally {
    rl.close();
  }
}

export function reposCommand() {
  const repos = apiCommand('repos', 'list, grant access to and sync repositories of a tenant')
    .option('--team <team>', 'only this tenant, e.g. acme (needed unless you are a platform admin)')
    .action(async (o: { team?: string }, command: Command) => {
      const { session, format } = await contextOf(command);
      const client = clientOf(session);
      const list = (team: string) => client.call(listRepos, { team });
      if (o.team) return print(format, await list(o.team), table(o.team));
      // The API lists one tenant's repositories; every tenant's needs the tenant list, which only admins may read.
      let tenants: { items: { name: string }[] };
      try {
        tenants = await client.call(listTenants, {});
      } catch (err) {
        if (err instanceof Forbidden) throw usageError('pds repos needs --team for a tenant of yours, e.g. pds repos --team acme');
        throw err;
      }
      const items = (await Promise.all(tenants.items.map(async (t) => (await list(t.name)).items.map((r) => ({ team: t.name, ...r }))))).flat();
      print(format, { items, count: items.length }, table('TEAM'));
    });
  repos.addCommand(
    apiCommand('grant', 'print the URL that grants pds access to a repository (and offer to open it)')
      .argument('<team>', 'the tenant, e.g. acme')
      .argument('<owner/repo>', 'the repository, e.g. acme/web')
      .option('--no-browser', 'only print the URL')
      .action(async (team: string, repo: string, o: { browser: boolean }, command: Command) => {
        const { session, format } = await contextOf(command);
        const grant = await clientOf(session).call(grantRepoAccess, { team_name: team, repo });
        if (!forPeople(format)) print(format, grant, () => ({ head: [], rows: [] }));
        process.stderr.write(`Install the code-host app on ${repo} at:\n  ${grant.url}\nthen: pds repos sync ${team}\n`);
        if (o.browser && forPeople(format) && (await askYes('Open it in the browser? [Y/n] '))) {
          await open(grant.url).catch(() => process.stderr.write('(could not open a browser: open the address above)\n'));
        }
      }),
  );
  repos.addCommand(
    apiCommand('sync', 'register the repositories the code-host app was installed on')
      .argument('<team>', 'the tenant, e.g. acme')
      .option('--user <login>', 'code-host user whose app installations to search (default: you)')
      .action(async (team: string, o: { user?: string }, command: Command) => {
        const { session, format } = await contextOf(command);
        const synced = await clientOf(session).call(syncRepos, { team, user: o.user });
        print(format, synced, table(team));
      }),
  );
  return repos;
}
