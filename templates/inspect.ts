/**
 * Per-template settings inferred from a repository: runtime versions, package manager, the entry (JS script,
 * Python `<module>:<app>`, Go package, static output directory) and what had to be assumed. Each `notes` entry
 * becomes a checklist item, so nothing assumed is silent.
 */
import { InvalidParams } from '../core/errors.js';
import { spaBuilder } from './detect.js';
import type { Repo } from './repo.js';

/** Something assumed that the team should check, keyed for the checklist. */
export interface Note {
  id: string;
  text: string;
}

const DEFAULT_NODE = '22';
const DEFAULT_PYTHON = '3.12';
const DEFAULT_GO = '1.24';

// ---------------------------------------------------------------------------------------------------------------
// Node (javascript, and static sites built with node)

export interface NodeSettings {
  nodeVersion: string;
  packageManager: 'npm' | 'pnpm' | 'yarn';
  /** Files copied before installing: package.json and the lockfile(s) present. */
  manifests: string;
  installAll: string;
  installProd: string;
  prune?: string;
  corepack: boolean;
  /** actions/setup-node cache (needs a lockfile). */
  cache?: string;
  runBuild: string;
  buildScript: boolean;
  testPlaceholder: boolean;
  notes: Note[];
}

/**
 * What the JavaScript template needs from `package.json`: Node version (from `engines`/`.nvmrc`), entry script (from
 * `scripts.start` or `main`), install command (lockfile or not), and notes for anything assumed.
 */
export function nodeSettings(repo: Repo): NodeSettings {
  const pkg = repo.packageJson();
  const notes: Note[] = [];
  const lockfiles = ['package-lock.json', 'npm-shrinkwrap.json', 'pnpm-lock.yaml', 'yarn.lock'].filter((f) => repo.has(f));
  const declared = pkg?.packageManager?.split('@')[0];
  const packageManager: NodeSettings['packageManager'] =
    declared === 'pnpm' || repo.has('pnpm-lock.yaml') ? 'pnpm' : declared === 'yarn' || repo.has('yarn.lock') ? 'yarn' : 'npm';
  const locked = lockfiles.length > 0;
  const berry = packageManager === 'yarn' && (repo.has('.yarnrc.yml') || /^yarn@[2-9]/.test(pkg?.packageManager ?? ''));
  const manifests = ['package.json', ...lockfiles, ...['.npmrc', '.yarnrc.yml'].filter((f) => repo.has(f))].join(' ');
  let installAll: string;
  let installProd: string;
  let prune: string | undefined;
  if (packageManager === 'pnpm') {
    installAll = locked ? 'pnpm install --frozen-lockfile' : 'pnpm install';
    installProd = `${installAll} --prod`;
    prune = 'pnpm prune --prod';
  } else if (packageManager === 'yarn') {
    installAll = berry ? 'yarn install --immutable' : locked ? 'yarn install --frozen-lockfile' : 'yarn install';
    installProd = berry ? installAll : `${installAll} --production`;
    if (berry) notes.push({ id: 'yarn-dev-dependencies', text: 'Yarn 2+ has no production-only install: the image keeps devDependencies. Prune them in the Dockerfile if the image gets large.' });
  } else {
    installAll = locked ? 'npm ci' : 'npm install';
    installProd = `${installAll} --omit=dev`;
    prune = 'npm prune --omit=dev';
    if (!locked && repo.has('package.json')) {
      notes.push({ id: 'lockfile', text: 'No package-lock.json: builds use "npm install" and may resolve different versions each time. Commit a lockfile (run "npm install") for repeatable images.' });
    }
  }
  const test = pkg?.scripts.test ?? '';
  const testPlaceholder = /no test specified/.test(test);
  if (testPlaceholder) {
    notes.push({ id: 'tests', text: 'package.json "test" is npm\'s placeholder that always fails; the CI test job prints "No tests yet" instead. Replace that step with "npm test" once tests exist.' });
  }
  if (repo.has('package.json') && !pkg) {
    notes.push({ id: 'package-json-unread', text: 'package.json was not read: no build step was assumed and the entry script was guessed from file names. Pass its contents for a better fit.' });
  }
  return {
    nodeVersion: nodeVersion(pkg?.engines.node, repo.text('.nvmrc')),
    packageManager,
    manifests,
    installAll,
    installProd,
    prune,
    corepack: packageManager !== 'npm',
    cache: locked ? packageManager : undefined,
    runBuild: `${packageManager === 'npm' ? 'npm' : packageManager} run build`,
    buildScript: Boolean(pkg?.scripts.build),
    testPlaceholder,
    notes,
  };
}

/** Node major for the image: an exact major from `engines.node` (`20.x`, `^20`, `~20.1`) or .nvmrc, else 22. */
function nodeVersion(engines: string | undefined, nvmrc: string | undefined): string {
  const nvm = nvmrc?.trim().match(/^v?(\d+)/);
  if (nvm && Number(nvm[1]) >= 18) return nvm[1]!;
  if (!engines) return DEFAULT_NODE;
  const exact = engines.trim().match(/^(?:[\^~=v]\s*)?(\d+)(?:\.[\dx*]+)*$/);
  if (exact && Number(exact[1]) >= 18) return exact[1]!;
  const atLeast = engines.trim().match(/^>=?\s*v?(\d+)/);
  if (atLeast && Number(atLeast[1]) > Number(DEFAULT_NODE)) return atLeast[1]!;
  return DEFAULT_NODE;
}

export interface JavaScriptSettings extends NodeSettings {
  install: boolean;
  entry: string;
  /** CMD in exec form, JSON. */
  command: string;
}

const ENTRY_FILE = /^[A-Za-z0-9._@/-]+$/;

/** Settings of the JavaScript server template. @throws InvalidParams for an unusable `entry`. */
export function javascriptSettings(repo: Repo, entryOverride?: string): JavaScriptSettings {
  const node = nodeSettings(repo);
  const pkg = repo.packageJson();
  let entry: string | undefined;
  let command: string[] | undefined;
  if (entryOverride) {
    const e = entryOverride.replace(/^\.\//, '');
    if (!ENTRY_FILE.test(e) || e.split('/').includes('..')) {
      throw new InvalidParams(`entry "${entryOverride}" must be the path of a script inside the repository, e.g. "src/server.js"`);
    }
    entry = e;
  } else {
    const start = pkg?.scripts.start?.match(/^\s*node\s+(?:--?[\w-]+(?:=\S+)?\s+)*([\w./@-]+\.[cm]?js)(\s|$)/);
    const main = pkg?.main?.replace(/^\.\//, '');
    if (start) entry = start[1]!.replace(/^\.\//, '');
    else if (main && ENTRY_FILE.test(main) && (repo.has(main) || node.buildScript)) entry = main;
    else entry = ['server.js', 'index.js', 'src/server.js', 'src/index.js', 'app.js', 'main.js'].find((f) => repo.has(f));
    if (!entry && pkg?.scripts.start) {
      command = ['npm', 'start'];
      node.notes.push({ id: 'js-entry', text: `The image starts with "npm start" ("${pkg.scripts.start}"); pass entry=<script> to run node on a script directly.` });
    } else if (!entry) {
      entry = 'server.js';
      node.notes.push({ id: 'js-entry', text: 'No entry script found (package.json "scripts.start" / "main", server.js, index.js): the image runs "node server.js". Pass entry=<script> or edit the Dockerfile CMD.' });
    }
  }
  command ??= ['node', entry!];
  return { ...node, install: repo.has('package.json'), entry: entry ?? 'npm start', command: JSON.stringify(command).replace(/","/g, '", "') };
}

// ---------------------------------------------------------------------------------------------------------------
// Python

export interface PythonSettings {
  pythonVersion: string;
  requirements: boolean;
  /** Shell-quoted `[project].dependencies`, when the project itself is not installable. */
  dependencies?: string;
  installProject: boolean;
  dependencyFile?: string;
  /** `<module>:<app>` */
  app: string;
  appDir?: string;
  uvicornArgs: string;
  notes: Note[];
}

const ASGI_APP = /^[A-Za-z_][\w.]*:[A-Za-z_]\w*$/;
const APP_ASSIGNMENT =
  /^([A-Za-z_]\w*)\s*(?::\s*[\w.[\], ]+)?=\s*(?:[\w.]+\.)?(FastAPI|Starlette|Quart|Litestar|Sanic|Flask|BlackSheep|Application|get_asgi_application|Robyn)\s*\(/m;

/** Python files that commonly hold the application object, most likely first. */
export function pythonEntryCandidates(paths: Iterable<string>): string[] {
  const names = new Set(['main.py', 'app.py', 'asgi.py', 'server.py', 'api.py', 'application.py', '__init__.py']);
  const out: string[] = [];
  for (const p of paths) {
    if (!p.endsWith('.py')) continue;
    const parts = p.split('/');
    const depth = parts[0] === 'src' ? parts.length - 1 : parts.length;
    if (depth > 2 || !names.has(parts[parts.length - 1]!)) continue;
    if (parts[parts.length - 1] === '__init__.py' && depth !== 2) continue;
    if (/^(tests?|docs|scripts|examples|migrations)$/.test(parts[0] === 'src' ? parts[1]! : parts[0]!)) continue;
    out.push(p);
  }
  const rank = (p: string) => {
    const file = p.split('/').pop()!;
    return (p.split('/').length - (p.startsWith('src/') ? 1 : 0)) * 10 + ['main.py', 'app.py', 'asgi.py', 'server.py', 'api.py', 'application.py', '__init__.py'].indexOf(file);
  };
  return out.sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
}

function moduleOf(path: string): { module: string; appDir?: string } {
  const src = path.startsWith('src/');
  const rel = src ? path.slice(4) : path;
  const module = rel.replace(/\.py$/, '').replace(/\/__init__$/, '').replace(/\//g, '.');
  return { module, appDir: src ? 'src' : undefined };
}

/** Settings of the Python ASGI template. @throws InvalidParams for an unusable `entry`. */
export function pythonSettings(repo: Repo, entryOverride?: string): PythonSettings {
  const notes: Note[] = [];
  const py = repo.pyproject();
  const project = (py?.project ?? undefined) as { dependencies?: unknown; 'requires-python'?: unknown } | undefined;
  const buildSystem = Boolean(py?.['build-system']);
  const poetry = Boolean((py?.tool as Record<string, unknown> | undefined)?.poetry);
  const requirements = repo.has('requirements.txt');
  let installProject = false;
  let dependencies: string | undefined;
  if (repo.has('pyproject.toml')) {
    if (!py) {
      installProject = !requirements;
      if (installProject) notes.push({ id: 'pyproject-unread', text: 'pyproject.toml was not read: the image runs "pip install ." Pass its contents for a better fit.' });
    } else if ((project || poetry) && buildSystem) {
      installProject = true;
    } else if (project && Array.isArray(project.dependencies) && !requirements) {
      const list = project.dependencies.filter((d): d is string => typeof d === 'string');
      dependencies = list.length ? list.map(shellQuote).join(' ') : undefined;
    }
  }

  let app: string;
  let appDir: string | undefined;
  let framework: string | undefined;
  if (entryOverride) {
    if (!ASGI_APP.test(entryOverride)) throw new InvalidParams(`entry "${entryOverride}" must be "<module>:<app>", e.g. "main:app" or "app.main:app"`);
    app = entryOverride;
  } else {
    const candidates = pythonEntryCandidates(repo.paths);
    const found = candidates
      .map((path) => ({ path, m: repo.text(path)?.match(APP_ASSIGNMENT) }))
      .find((c) => c.m);
    if (found) {
      const { module, appDir: dir } = moduleOf(found.path);
      app = `${module}:${found.m![1]}`;
      appDir = dir;
      framework = found.m![2];
    } else if (candidates.length) {
      const { module, appDir: dir } = moduleOf(candidates[0]!);
      app = `${module}:app`;
      appDir = dir;
      notes.push({ id: 'python-app', text: `Assumed the ASGI application is "${app}" (from ${candidates[0]}); if not, pass entry=<module>:<app> or edit the Dockerfile CMD.` });
    } else {
      app = 'main:app';
      notes.push({ id: 'python-app', text: 'The start command keeps the placeholder "main:app" (<module>:<app>): no application module was found. Pass entry=<module>:<app> or edit the Dockerfile CMD.' });
    }
  }
  let uvicornArgs = appDir ? ` --app-dir ${appDir}` : '';
  if (framework === 'Flask') {
    uvicornArgs += ' --interface wsgi';
    notes.push({ id: 'wsgi', text: 'The app is Flask (WSGI): uvicorn serves it with --interface wsgi. An ASGI framework (or an a2wsgi wrapper) is the better long-term fit.' });
  }
  if (framework === 'get_asgi_application') {
    notes.push({ id: 'django', text: 'Django: set DJANGO_SETTINGS_MODULE and ALLOWED_HOSTS for the platform host, and serve /healthz without authentication.' });
  }
  return {
    pythonVersion: pythonVersion(project?.['requires-python'], repo.text('.python-version')),
    requirements,
    dependencies,
    installProject,
    dependencyFile: requirements ? 'requirements.txt' : repo.has('pyproject.toml') ? 'pyproject.toml' : undefined,
    app,
    appDir,
    uvicornArgs,
    notes,
  };
}

function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** The newest of 3.9–3.13 allowed by `requires-python` (or .python-version), preferring 3.12. */
function pythonVersion(requires: unknown, pinned: string | undefined): string {
  const pin = pinned?.trim().match(/^(3\.\d+)/);
  if (pin) return pin[1]!;
  if (typeof requires !== 'string') return DEFAULT_PYTHON;
  const clauses = requires.split(',').map((c) => c.trim().match(/^(>=|<=|==|~=|!=|>|<)\s*(\d+)(?:\.(\d+|\*))?/)).filter(Boolean);
  const ok = (minor: number) =>
    clauses.every((c) => {
      const [, op, maj, min] = c!;
      const v = Number(maj) * 100 + (min === undefined || min === '*' ? 0 : Number(min));
      const x = 300 + minor;
      switch (op) {
        case '>=': case '~=': return x >= v;
        case '>': return x > v || (min === undefined && x >= v); // ">3.10" still allows 3.10.1
        case '<': return x < v;
        case '<=': return x <= v;
        case '==': return min === undefined || min === '*' ? Math.floor(x / 100) === Number(maj) : x === v;
        case '!=': return x !== v;
        default: return true;
      }
    });
  const pick = [12, 13, 11, 10, 9].find(ok);
  return pick === undefined ? DEFAULT_PYTHON : `3.${pick}`;
}

// ---------------------------------------------------------------------------------------------------------------
// Go

export interface GoSettings {
  goVersion: string;
  modFiles: string;
  package: string;
  notes: Note[];
}

const GO_PACKAGE = /^\.(\/[\w.-]+)*$/;

/** Settings of the Go server template. @throws InvalidParams for an unusable `entry`. */
export function goSettings(repo: Repo, entryOverride?: string): GoSettings {
  const notes: Note[] = [];
  let pkg: string;
  if (entryOverride) {
    const p = entryOverride === '.' || entryOverride.startsWith('./') ? entryOverride : `./${entryOverride}`;
    if (!GO_PACKAGE.test(p) || p.split('/').includes('..')) throw new InvalidParams(`entry "${entryOverride}" must be a Go package path inside the repository, e.g. "./cmd/server"`);
    pkg = p.replace(/\/$/, '');
  } else {
    const goIn = (dir: string) => [...repo.paths].some((p) => p.startsWith(`${dir}/`) && p.endsWith('.go') && !p.endsWith('_test.go') && p.split('/').length === dir.split('/').length + 1);
    const cmdDirs = [...new Set([...repo.paths].map((p) => p.match(/^cmd\/([^/]+)\/[^/]+\.go$/)?.[1]).filter((d): d is string => Boolean(d)))];
    if (goIn('cmd/server')) pkg = './cmd/server';
    else if (repo.has('main.go')) pkg = '.';
    else if (cmdDirs.length === 1) pkg = `./cmd/${cmdDirs[0]}`;
    else {
      pkg = './cmd/server';
      notes.push({
        id: 'go-package',
        text: cmdDirs.length
          ? `Several commands under cmd/ (${cmdDirs.join(', ')}): the image builds ./cmd/server. Pass entry=./cmd/<name> for the server.`
          : 'No ./cmd/server and no main.go at the root: the image builds ./cmd/server. Pass entry=<package path> or edit the Dockerfile.',
      });
    }
  }
  return {
    goVersion: goVersion(repo.text('go.mod')),
    modFiles: repo.has('go.sum') ? 'go.mod go.sum' : 'go.mod',
    package: pkg,
    notes,
  };
}

/** Go major.minor from go.mod: the higher of `go` and `toolchain`, else 1.24. */
function goVersion(goMod: string | undefined): string {
  if (!goMod) return DEFAULT_GO;
  const versions = [goMod.match(/^go\s+(\d+\.\d+)/m)?.[1], goMod.match(/^toolchain\s+go(\d+\.\d+)/m)?.[1]].filter((v): v is string => Boolean(v));
  if (!versions.length) return DEFAULT_GO;
  const minor = (v: string) => Number(v.split('.')[1]);
  const best = versions.sort((a, b) => minor(b) - minor(a))[0]!;
  // Images exist from 1.21 on with the toolchain model; older go directives build fine on the default.
  return minor(best) < 21 ? DEFAULT_GO : best;
}

// ---------------------------------------------------------------------------------------------------------------
// Static

export interface StaticSettings extends NodeSettings {
  build: boolean;
  outputDir: string;
}

const OUTPUT_DIR = /^[\w.-]+(\/[\w.-]+)*$/;

/** Settings of the static site template. @throws InvalidParams for an unusable `entry`. */
export function staticSettings(repo: Repo, entryOverride?: string): StaticSettings {
  const node = nodeSettings(repo);
  const pkg = repo.packageJson();
  const build = Boolean(pkg?.scripts.build);
  let outputDir = 'dist';
  if (entryOverride) {
    const d = entryOverride.replace(/^\.\//, '').replace(/\/$/, '');
    if (!OUTPUT_DIR.test(d) || d.split('/').includes('..')) throw new InvalidParams(`entry "${entryOverride}" must be the build output directory, e.g. "dist"`);
    outputDir = d;
  } else if (spaBuilder(pkg) === 'react-scripts') {
    outputDir = 'build';
  } else if (pkg && /^@angular/.test(spaBuilder(pkg) ?? '')) {
    node.notes.push({ id: 'static-output', text: 'Angular writes its build to dist/<project>/browser: pass entry=dist/<project>/browser (see "outputPath" in angular.json).' });
  }
  if (!build && !repo.has(`${outputDir}/index.html`)) {
    node.notes.push({ id: 'static-output', text: `${outputDir}/index.html is not in the repository and nothing builds it: commit the build output or add a "build" script.` });
  }
  return { ...node, build, outputDir };
}
