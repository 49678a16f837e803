/**
 * `pds scaffold [dir] --team T …`: the scaffolding of `platform_scaffold_repository` for a local checkout. Shows the
 * files it would add; `--write` writes them, never replacing an existing file without `--force`, and never through a
 * symbolic link or outside the checkout (bin/write-inside.ts).
 *
 * Options are checked once, here, with the rules of `platform_scaffold_repository` (`ScaffoldParameters`): a value
 * they refuse is a usage error. What only the repository can decide (which template, whether `--entry` fits it, the
 * implied service name) is reported by scaffolding.
 *
 * Exit codes: 0 done (or dry run shown), 1 no template fits / several fit / the repository and a value do not fit
 * together / a file would be written through a symbolic link, 2 usage error (including an option value the rules refuse).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { isPlatformError } from '../../core/errors.js';
import { describeIssues } from '../../tools/validation.js';
import { checkInside, OutsideWrite, writeInside } from '../write-inside.js';
import { MANIFESTS, PATTERN_IDS, ScaffoldParameters, TEMPLATE_IDS, routeSourceCandidates, scaffold, type ScaffoldPlan } from '../../templates/index.js';

/** One line for `pds --help`. */
export const summary = 'add the Dockerfile and CI deploy job to a repo';

const USAGE = `usage: pds scaffold [dir] --team T [options]

Detects the template for the repository in dir (default: the current directory) and shows the files onboarding
needs: Dockerfile, .dockerignore and .github/workflows/ci.yml (and nginx.conf for static sites).

options:
  --team T                 tenant the service deploys into (required)
  --component C            service name (default: package / project / module name, then the directory name)
  --base-url URL           pds address the deploy job calls (default: $PDS_BASE_URL)
  --pattern P              deploy trigger: ${PATTERN_IDS.join(' | ')} (default: continuous)
  --template T             use this template instead of detecting: ${TEMPLATE_IDS.join(' | ')}
  --health-check-path P    probe path when the app does not serve /healthz (also the image health check)
  --entry E                JS entry script, Python <module>:<app>, Go package path or static output directory
  --repo OWNER/REPO        repository for the onboarding parameters (default: the GitHub origin remote)
  --write                  write the files (existing files are kept)
  --force                  with --write, replace existing files
  --json                   print the plan as JSON
  -h, --help               this help`;

/** Directories never listed: dependencies, VCS data and caches, not repository content. */
const SKIP_DIRS = new Set(['.git', 'node_modules', '.venv', 'venv', '__pycache__', '.pytest_cache', '.mypy_cache', '.ruff_cache', '.next', '.cache', '.turbo']);
const MAX_FILES = 50_000;

/** The option (or environment variable) each parameter comes from, for messages. */
const OPTION: Record<keyof typeof ScaffoldParameters.shape, string> = {
  team_name: '--team',
  component_name: '--component',
  dockerfile_repo: '--repo (or the origin remote)',
  template: '--template',
  pattern: '--pattern',
  health_check_path: '--health-check-path',
  entry: '--entry',
  base_url: '--base-url (or PDS_BASE_URL)',
};

/** Show (or with --write, write) the files; returns 0 done, 1 no/several templates or a value the repository does not fit, 2 usage error. */
export async function run(argv: string[]): Promise<number> {
  let args: ReturnType<typeof parse>;
  try {
    args = parse(argv);
  } catch (err) {
    console.error(`pds scaffold: ${(err as Error).message}\n\n${USAGE}`);
    return 2;
  }
  const { values, positionals } = args;
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const usage = (message: string) => {
    console.error(`pds scaffold: ${message}\n\n${USAGE}`);
    return 2;
  };
  if (positionals.length > 1) return usage(`one directory at most, got ${positionals.join(' ')}`);
  const dir = path.resolve(positionals[0] ?? '.');
  if (!existsSync(dir) || !statSync(dir).isDirectory()) return usage(`${dir} is not a directory`);
  if (!values.team) return usage('--team is required (the tenant the service deploys into, e.g. --team acme)');
  const baseUrl = values['base-url'] ?? process.env.PDS_BASE_URL;
  if (!baseUrl) return usage('the pds address is needed for the deploy job: pass --base-url https://pds.example.com or set PDS_BASE_URL');
  if (values.force && !values.write) return usage('--force only applies with --write');
  // Presence of --team and the address is checked above, with CLI wording; their values are checked here.
  const parsed = ScaffoldParameters.required({ base_url: true }).safeParse({
    team_name: values.team,
    component_name: values.component,
    dockerfile_repo: values.repo ?? originRepo(dir),
    template: values.template,
    pattern: values.pattern,
    health_check_path: values['health-check-path'],
    entry: values.entry,
    base_url: baseUrl,
  });
  if (!parsed.success) {
    return usage(describeIssues(parsed.error.issues.map((i) => ({ ...i, path: [OPTION[i.path[0] as keyof typeof OPTION] ?? String(i.path[0])] }))));
  }
  const p = parsed.data;

  let plan: ScaffoldPlan;
  try {
    const paths = listFiles(dir);
    plan = scaffold({
      repo: { paths, contents: readInspected(dir, paths) },
      team: p.team_name,
      component: p.component_name,
      baseUrl: p.base_url,
      pattern: p.pattern,
      template: p.template,
      healthCheckPath: p.health_check_path,
      entry: p.entry,
      dockerfileRepo: p.dockerfile_repo,
      domain: process.env.PDS_DOMAIN,
      directoryName: path.basename(dir),
    });
  } catch (err) {
    if (isPlatformError(err)) {
      console.error(`pds scaffold: ${err.message}${/template=/.test(err.message) ? '\n(on the command line: --template <id>)' : ''}`);
      return 1;
    }
    throw err;
  }

  if (values.json) {
    console.log(JSON.stringify(plan, null, 2));
    if (!values.write) return 0;
  }
  const out: string[] = [];
  out.push(`Template:  ${plan.title} (${plan.template}): ${plan.reason}`);
  out.push(`Pattern:   ${plan.pattern}`);
  out.push(`Starts:    ${plan.entry}`);
  out.push('');

  const written: string[] = [];
  const skipped: string[] = [];
  if (values.write) {
    try {
      // Every path is checked before anything is written, so a refusal leaves the checkout as it was.
      const state = new Map(plan.files.map((f) => [f.path, checkInside(dir, f.path)]));
      for (const file of plan.files) {
        if (state.get(file.path) === 'exists' && !values.force) {
          skipped.push(file.path);
          continue;
        }
        writeInside(dir, file.path, file.content);
        written.push(file.path);
      }
    } catch (err) {
      if (!(err instanceof OutsideWrite)) throw err;
      for (const p of written) console.error(`  wrote    ${p}`);
      console.error(`pds scaffold: ${err.message}`);
      return 1;
    }
  }
  if (values.write) {
    for (const p of written) out.push(`  wrote    ${p}`);
    for (const p of skipped) out.push(`  skipped  ${p} (exists; --force replaces it)`);
  } else {
    out.push('Files to add:');
    for (const f of plan.files) out.push(`  ${existsSync(path.join(dir, f.path)) ? 'exists  ' : 'new     '} ${f.path.padEnd(26)} ${f.purpose}`);
    for (const f of plan.files) out.push('', `----- ${f.path}`, f.content.trimEnd());
  }
  out.push('', 'Onboarding parameters (platform_deploy_service, once the files are on main):', `  ${JSON.stringify(plan.onboarding)}`);
  out.push('', 'Checklist:');
  plan.checklist.forEach((item, i) => out.push(`  ${String(i + 1).padStart(2)}. ${item.text}`));
  out.push('');
  if (!values.write) out.push('Dry run: nothing written. Run again with --write to add the files.');
  else if (skipped.length) out.push(`Kept ${skipped.length} existing file(s); run with --force to replace them.`);
  if (!values.json) console.log(out.join('\n'));
  else if (values.write) console.error(out.filter((l) => /^\s+(wrote|skipped)/.test(l)).join('\n'));
  return 0;
}

function parse(argv: string[]) {
  return parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      team: { type: 'string' },
      component: { type: 'string' },
      'base-url': { type: 'string' },
      pattern: { type: 'string' },
      template: { type: 'string' },
      'health-check-path': { type: 'string' },
      entry: { type: 'string' },
      repo: { type: 'string' },
      write: { type: 'boolean', default: false },
      force: { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
}

/** Repository-relative paths of every file under `root`, without dependency, VCS and cache directories. */
function listFiles(root: string): string[] {
  const out: string[] = [];
  const walk = (rel: string) => {
    for (const entry of readdirSync(path.join(root, rel), { withFileTypes: true })) {
      if (out.length >= MAX_FILES) return;
      const p = rel ? `${rel}/${entry.name}` : entry.name;
      if (entry.isDirectory()) {
        if (!SKIP_DIRS.has(entry.name)) walk(p);
      } else if (entry.isFile()) out.push(p);
    }
  };
  walk('');
  return out.sort();
}

/** Text of the manifests, the Python modules that may hold the application and the entry files that may declare the health route. */
function readInspected(root: string, paths: string[]): Record<string, string> {
  const wanted = [...MANIFESTS, '.nvmrc', ...routeSourceCandidates(paths)];
  const present = new Set(paths);
  const contents: Record<string, string> = {};
  for (const p of wanted) {
    if (!present.has(p)) continue;
    const full = path.join(root, p);
    if (statSync(full).size <= 1_000_000) contents[p] = readFileSync(full, 'utf8');
  }
  return contents;
}

/** `<owner>/<repo>` of a GitHub `origin` remote, if there is one. */
function originRepo(dir: string): string | undefined {
  try {
    const url = execFileSync('git', ['-C', dir, 'remote', 'get-url', 'origin'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    return url.match(/github\.com[:/]([A-Za-z0-9-]+\/[A-Za-z0-9._-]+?)(?:\.git)?\/?$/)?.[1];
  } catch {
    return undefined;
  }
}
