/**
 * The health route an application already serves (`docs/api.md#scaffolding-templates`, rules 6
 * and 7): a scan of the source files that usually register routes, so the image HEALTHCHECK and the platform probes
 * (`health_check_path`) request a path the app answers instead of assuming `/healthz`.
 *
 * It is a line-by-line regular-expression scan, not a parser. It recognises a route whose path is a string literal
 * in the call that registers it:
 *
 * | framework | form |
 * |---|---|
 * | FastAPI, Starlette, Flask, Quart, Litestar, Sanic | `@app.get("/health")`, `@app.route("/health")`, `@app.api_route(…)` |
 * | Express, Fastify, Hono, Koa router | `app.get('/health', …)`, `app.all(…)`, `app.head(…)` |
 * | Go `net/http`, chi, gin, echo | `http.HandleFunc("/health", …)`, `mux.HandleFunc("GET /healthz", …)`, `r.Get(…)`, `r.GET(…)` |
 *
 * Limits, said here so they are not mistaken for guarantees: only the files it is given are read
 * ({@link routeSourceCandidates}); a router mounted under a prefix (FastAPI `APIRouter(prefix=…)`, Flask blueprints,
 * `app.use('/api', router)`, gin groups) is invisible, so routes on receivers named like a router or group are
 * skipped rather than guessed; paths built from constants or variables are not seen; commented-out code is read.
 * A path that does not fit {@link HEALTH_PATH} is never used (it is reported, not repaired).
 */
import type { Repo } from '../repo.js';
import { HEALTH_PATH } from './grammar.js';
import { pythonEntryCandidates } from './python.js';
import type { Note } from './note.js';

/** The last path segment of a health endpoint, most preferred first: `/healthz` wins when the app serves it. */
const HEALTH_NAMES = ['healthz', 'health', 'livez', 'healthcheck', 'health-check', 'health_check', '_health', 'ping', 'readyz', 'ready'];

/** `@<receiver>.<method>("<path>"` in Python; `<receiver>.<method>('<path>'` in JavaScript and TypeScript. */
const PY_ROUTE = /^\s*@\s*([A-Za-z_]\w*)\.(?:get|head|route|api_route)\(\s*(?:path\s*=\s*)?[rbu]?(["'])(\/[^"'\n]{0,300})\2/;
const JS_ROUTE = /\b([A-Za-z_$][\w$]*)\.(?:get|head|all)\(\s*(["'`])(\/[^"'`\n]{0,300})\2/g;
/** Go: `http.HandleFunc("GET /healthz"`, `mux.Handle(…`, chi `r.Get(…`, gin `r.GET(…`, echo `e.GET(…`. */
const GO_ROUTE = /\b([A-Za-z_]\w*)\.(?:HandleFunc|Handle|Get|GET|Head|HEAD|Any)\(\s*"((?:(?:GET|HEAD)\s+)?\/[^"\n]{0,300})"/g;
/** Receivers whose routes may sit under a prefix this scan cannot see. */
const PREFIXED_RECEIVER = /router|blueprint|^bp$|group|^v\d+$/i;

/** Where {@link detectHealthRoute} looked and what it found. */
export interface HealthRoute {
  /** The route chosen, e.g. `/health`; absent when none was found. */
  path?: string;
  /** `<file>:<line>` of the chosen route, e.g. `app/main.py:12`. */
  at?: string;
  /** Files scanned, in order. */
  scanned: string[];
  /** What to tell the team: the route used, or that none was found. */
  notes: Note[];
}

/**
 * Source files worth reading for scaffolding, at most 12, most likely first: the first 8 Python modules that may hold
 * the application (`pythonEntryCandidates`, which also finds the `<module>:<app>`), conventional JavaScript/TypeScript entry files at the root and under
 * `src/`, and Go files at the root and one command down (`cmd/<name>/*.go`) plus router-named files under
 * `internal/` and `pkg/`.
 * @param paths repository-relative file paths, e.g. `["app/main.py", "src/server.ts", "cmd/api/main.go"]`.
 */
export function routeSourceCandidates(paths: Iterable<string>): string[] {
  const all = [...paths];
  const python = pythonEntryCandidates(all).slice(0, 8);
  const has = new Set(all);
  const js: string[] = [];
  for (const dir of ['', 'src/']) {
    for (const base of ['server', 'index', 'app', 'main', 'routes', 'health']) {
      for (const ext of ['js', 'ts', 'mjs', 'cjs', 'mts']) if (has.has(`${dir}${base}.${ext}`)) js.push(`${dir}${base}.${ext}`);
    }
  }
  const go = all
    .filter((p) => p.endsWith('.go') && !p.endsWith('_test.go'))
    .filter((p) => !p.includes('/') || /^cmd\/[^/]+\/[^/]+\.go$/.test(p) || /^(internal|pkg)\/(?:[^/]+\/)?(routes?|router|server|handlers?|health|http)\.go$/.test(p))
    .sort((a, b) => a.split('/').length - b.split('/').length || a.localeCompare(b));
  return [...python, ...js, ...go].slice(0, 12);
}

/** One route registration found in a file. */
interface Found {
  path: string;
  file: string;
  line: number;
}

function routesIn(file: string, text: string): Found[] {
  const out: Found[] = [];
  const lines = text.split('\n');
  const language = file.endsWith('.py') ? 'py' : file.endsWith('.go') ? 'go' : 'js';
  lines.forEach((line, i) => {
    if (line.length > 2000) return; // minified or generated; nothing a person wrote a route in
    const add = (receiver: string, raw: string) => {
      if (PREFIXED_RECEIVER.test(receiver)) return;
      out.push({ path: raw, file, line: i + 1 });
    };
    if (language === 'py') {
      const m = line.match(PY_ROUTE);
      if (m) add(m[1]!, m[3]!);
    } else if (language === 'go') {
      // A Go 1.22 pattern may name a method: "GET /healthz".
      for (const m of line.matchAll(GO_ROUTE)) add(m[1]!, m[2]!.replace(/^(?:GET|HEAD)\s+/, ''));
    } else {
      for (const m of line.matchAll(JS_ROUTE)) add(m[1]!, m[3]!);
    }
  });
  return out;
}

const rank = (path: string) => HEALTH_NAMES.indexOf(path.replace(/\/+$/, '').split('/').pop()!.toLowerCase());

/**
 * The health route the application serves, among the read files of `files` (unread ones are skipped).
 * @param files the files to scan, e.g. from {@link routeSourceCandidates}; only those of the template's language count.
 * @param language which sources belong to the template: `py`, `js` (JavaScript and TypeScript) or `go`.
 * @returns the route (preferring `/healthz`, then `/health`, then the other {@link HEALTH_NAMES}, then the shorter
 * path), where it was found, and one note saying what was found or that nothing was.
 */
export function detectHealthRoute(repo: Repo, files: string[], language: 'py' | 'js' | 'go'): HealthRoute {
  const ext = { py: /\.py$/, js: /\.[cm]?[jt]s$/, go: /\.go$/ }[language];
  const scanned = files.filter((f) => ext.test(f) && repo.text(f) !== undefined);
  const found = scanned.flatMap((f) => routesIn(f, repo.text(f)!)).filter((r) => rank(r.path) >= 0);
  const usable = found.filter((r) => HEALTH_PATH.test(r.path));
  const refused = found.filter((r) => !HEALTH_PATH.test(r.path));
  const notes: Note[] = [];
  if (refused.length) {
    notes.push({
      id: 'health-route-refused',
      text: `Not used as the probe path: ${refused.map((r) => `${JSON.stringify(r.path)} (${r.file}:${r.line})`).join(', ')}; a probe path must be letters, digits and ._~/- starting with "/".`,
    });
  }
  const best = usable.sort((a, b) => rank(a.path) - rank(b.path) || a.path.length - b.path.length || a.file.localeCompare(b.file) || a.line - b.line)[0];
  if (!best) {
    notes.unshift({
      id: 'health-route',
      text: scanned.length
        ? `No health route found in ${scanned.join(', ')} (a scan for routes declared with a literal path, e.g. @app.get("/health"), app.get('/health'), http.HandleFunc("/health")): the image health check and the platform probes use the template's path.`
        : 'No source file was read to look for a health route: the image health check and the platform probes use the template\'s path.',
    });
    return { scanned, notes };
  }
  const at = `${best.file}:${best.line}`;
  const others = [...new Set(usable.map((r) => r.path).filter((p) => p !== best.path))];
  notes.unshift({
    id: 'health-route',
    text: `Found the health route ${best.path} at ${at}: the image HEALTHCHECK and health_check_path use it${others.length ? ` (also found: ${others.join(', ')})` : ''}. Pass health_check_path to choose another.`,
  });
  return { path: best.path, at, scanned, notes };
}
