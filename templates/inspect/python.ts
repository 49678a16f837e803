/**
 * Inspector of the Python ASGI template (`docs/api.md#scaffolding-templates`, rule 5): Python
 * version, how dependencies are installed (requirements.txt, an installable project or `[project].dependencies`) and
 * the `<module>:<app>` uvicorn serves, found by reading the modules that commonly hold it.
 */
import { InvalidParams } from '../../core/errors.js';
import { TEMPLATES } from '../catalog.js';
import { execForm } from '../render.js';
import type { Repo } from '../repo.js';
import { fitting, PEP508_REQUIREMENT, PYTHON_APP } from './grammar.js';
import type { Note } from './note.js';

/** Python minor used when neither `requires-python` nor `.python-version` narrows it. */
const DEFAULT_PYTHON = '3.12';

/** What the Python Dockerfile renders. */
export interface PythonSettings {
  /** Python major.minor of the image, e.g. `3.12`. */
  pythonVersion: string;
  /** requirements.txt exists and is installed. */
  requirements: boolean;
  /** `[project].dependencies` (PEP 508 requirements), when the project itself is not installable. */
  dependencies?: string[];
  /** Their install step in exec form, JSON, e.g. `["pip", "install", "starlette>=0.37"]`. */
  pipInstall?: string;
  /** The project has a build system (or Poetry) and is installed with `pip install .`. */
  installProject: boolean;
  /** The file CI caches pip downloads by, when there is one. */
  dependencyFile?: string;
  /** `<module>:<app>`, e.g. `app.main:app`. */
  app: string;
  /** `src` for a src layout (uvicorn `--app-dir`). */
  appDir?: string;
  /** Extra uvicorn arguments, e.g. `["--app-dir", "src", "--interface", "wsgi"]`. */
  uvicornArgs: string[];
  /**
   * CMD in exec form, JSON: `sh -c` only to read `${PORT:-8000}`, with the application and the uvicorn arguments as
   * its positional arguments (`$0`, `$@`), never inside its text.
   */
  command: string;
  /** Assumptions for the checklist: the application object, WSGI, Django settings, unread pyproject.toml. */
  notes: Note[];
}

const ASGI_APP = PYTHON_APP;
const PORT = TEMPLATES.python.port;
const APP_ASSIGNMENT =
  /^([A-Za-z_]\w*)\s*(?::\s*[\w.[\], ]+)?=\s*(?:[\w.]+\.)?(FastAPI|Starlette|Quart|Litestar|Sanic|Flask|BlackSheep|Application|get_asgi_application|Robyn)\s*\(/m;


/**
 * Python files that commonly hold the application object, most likely first: `main.py`, `app.py`, `asgi.py`,
 * `server.py`, `api.py`, `application.py` at the root or one package down (also under `src/`), and a package's
 * `__init__.py`; never under tests, docs, scripts, examples or migrations. Callers read the first few (the tool and
 * the CLI read 8) so {@link pythonSettings} can find the app.
 * @param paths repository-relative file paths, e.g. `["app/main.py", "tests/test_main.py"]`.
 * @returns the candidate paths, e.g. `["app/main.py"]`.
 */
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

/**
 * Settings of the Python ASGI template.
 * @param entryOverride the caller's `entry`: `<module>:<app>`, e.g. `service.asgi:application`.
 * @throws InvalidParams for an `entryOverride` that is not `<module>:<app>`; when pyproject.toml is not valid TOML.
 */
export function pythonSettings(repo: Repo, entryOverride?: string): PythonSettings {
  const notes: Note[] = [];
  const py = repo.pyproject();
  const project = (py?.project ?? undefined) as { dependencies?: unknown; 'requires-python'?: unknown } | undefined;
  const buildSystem = Boolean(py?.['build-system']);
  const poetry = Boolean((py?.tool as Record<string, unknown> | undefined)?.poetry);
  const requirements = repo.has('requirements.txt');
  let installProject = false;
  let dependencies: string[] | undefined;
  if (repo.has('pyproject.toml')) {
    if (!py) {
      installProject = !requirements;
      if (installProject) notes.push({ id: 'pyproject-unread', text: 'pyproject.toml was not read: the image runs "pip install ." Pass its contents for a better fit.' });
    } else if ((project || poetry) && buildSystem) {
      installProject = true;
    } else if (project && Array.isArray(project.dependencies) && !requirements) {
      const list = project.dependencies
        .filter((d): d is string => typeof d === 'string')
        .map((d) => fitting('pyproject.toml', 'dependency', d.trim(), PEP508_REQUIREMENT, 'a PEP 508 requirement: printable ASCII starting with a letter or digit, without $ ` \\ { } |', 'fix it, or list the dependencies in requirements.txt'));
      dependencies = list.length ? list : undefined;
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
      app = fitting(found.path, 'application', `${module}:${found.m![1]}`, ASGI_APP, 'a Python module path <module>:<app> of ASCII identifiers');
      appDir = dir;
      framework = found.m![2];
    } else if (candidates.length) {
      const { module, appDir: dir } = moduleOf(candidates[0]!);
      app = fitting(candidates[0]!, 'application', `${module}:app`, ASGI_APP, 'a Python module path <module>:<app> of ASCII identifiers');
      appDir = dir;
      notes.push({ id: 'python-app', text: `Assumed the ASGI application is "${app}" (from ${candidates[0]}); if not, pass entry=<module>:<app> or edit the Dockerfile CMD.` });
    } else {
      app = 'main:app';
      notes.push({ id: 'python-app', text: 'The start command keeps the placeholder "main:app" (<module>:<app>): no application module was found. Pass entry=<module>:<app> or edit the Dockerfile CMD.' });
    }
  }
  const uvicornArgs = appDir ? ['--app-dir', appDir] : [];
  if (framework === 'Flask') {
    uvicornArgs.push('--interface', 'wsgi');
    notes.push({ id: 'wsgi', text: 'The app is Flask (WSGI): uvicorn serves it with --interface wsgi. An ASGI framework (or an a2wsgi wrapper) is the better long-term fit.' });
  }
  if (framework === 'get_asgi_application') {
    notes.push({ id: 'django', text: 'Django: set DJANGO_SETTINGS_MODULE and ALLOWED_HOSTS for the platform host, and serve /healthz without authentication.' });
  }
  return {
    pythonVersion: pythonVersion(project?.['requires-python'], repo.text('.python-version')),
    requirements,
    dependencies,
    pipInstall: dependencies ? execForm(['pip', 'install', ...dependencies]) : undefined,
    installProject,
    dependencyFile: requirements ? 'requirements.txt' : repo.has('pyproject.toml') ? 'pyproject.toml' : undefined,
    app,
    appDir,
    uvicornArgs,
    command: execForm(['sh', '-c', `exec uvicorn "$0" --host 0.0.0.0 --port "\${PORT:-${PORT}}" "$@"`, app, ...uvicornArgs]),
    notes,
  };
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
