/**
 * Local git stand-ins for the template-steps test: a bare GitOps repository (what PDS_GITOPS_REPO names) and bare
 * "GitHub" repositories with tags, which the workflows clone through `url.<dir>.insteadOf=https://github.com/`.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const GIT_ENV = {
  ...process.env,
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_AUTHOR_NAME: 'test',
  GIT_AUTHOR_EMAIL: 'test@example.com',
  GIT_COMMITTER_NAME: 'test',
  GIT_COMMITTER_EMAIL: 'test@example.com',
};

export function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, env: GIT_ENV, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/** A bare repository at `dir` whose branch `main` holds `files` (path → content), tagged with each of `tags`. */
export function bareRepository(dir: string, commits: { files: Record<string, string>; tag?: string }[]): string {
  mkdirSync(dir, { recursive: true });
  git(dir, 'init', '--quiet', '--bare', '--initial-branch=main');
  const work = mkdtempSync(`${dir}-work-`);
  git(work, 'init', '--quiet', '--initial-branch=main');
  for (const commit of commits) {
    for (const [file, content] of Object.entries(commit.files)) {
      mkdirSync(path.dirname(path.join(work, file)), { recursive: true });
      writeFileSync(path.join(work, file), content);
    }
    git(work, 'add', '-A');
    git(work, 'commit', '--quiet', '-m', commit.tag ? `release ${commit.tag}` : 'initial');
    if (commit.tag) git(work, 'tag', '-a', commit.tag, '-m', commit.tag);
  }
  git(work, 'push', '--quiet', '--follow-tags', dir, 'main');
  return dir;
}

/** The content of `file` on `main` of a bare repository, or undefined when it is not there. */
export function fileAt(repo: string, file: string): string | undefined {
  try {
    return git(repo, 'show', `main:${file}`);
  } catch {
    return undefined;
  }
}

/** Paths under `dir` on `main` of a bare repository. */
export function filesUnder(repo: string, dir: string): string[] {
  return git(repo, 'ls-tree', '-r', '--name-only', 'main', '--', dir).split('\n').filter(Boolean);
}

/** A work tree of `main` (what Argo CD would render), in a new temp directory under `parent`. */
export function checkout(repo: string, parent: string): string {
  const dir = mkdtempSync(path.join(parent, 'checkout-'));
  git(parent, 'clone', '--quiet', repo, dir);
  return dir;
}
