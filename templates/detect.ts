/**
 * Which template fits a repository, by its content (`docs/api.md#scaffolding-templates`):
 *
 * | at the repository root | template |
 * |---|---|
 * | `package.json`, `server.js` or `index.js` | `javascript` |
 * | `pyproject.toml` or `requirements.txt` | `python` |
 * | `go.mod` | `go` |
 * | SPA build output `dist/index.html`, or a package.json that builds a single-page app (vite, react-scripts, …) | `static` |
 *
 * One candidate: that template. None: {@link InvalidParams}. Several: {@link InvalidParams} naming them, so the
 * caller passes `template`, with one exception decided here: a JavaScript repository that is also a single-page app
 * (package.json plus `dist/index.html` or an SPA build tool) is `static` unless it shows a server (a server framework
 * dependency, `server.js`, or a `start` script that runs `node`), in which case it is `javascript`. A dist/ that only
 * holds compiled server code (no index.html) is not SPA output.
 */
import { InvalidParams } from '../core/errors.js';
import { TEMPLATES, TEMPLATE_IDS, type TemplateId } from './catalog.js';
import { Repo, type PackageJson, type RepoSnapshot } from './repo.js';

/** A template that fits, with the repository content that made it fit. */
export interface Candidate {
  template: TemplateId;
  evidence: string[];
}

/** The outcome of detection. */
export interface Detection {
  template: TemplateId;
  /** One sentence: why this template. */
  reason: string;
  /** Every template that fit (may be empty when the caller chose). */
  candidates: Candidate[];
}

/** Build tools whose output is a static single-page app. */
const SPA_BUILDERS = [
  'vite',
  'react-scripts',
  '@angular/cli',
  '@angular/build',
  '@angular-devkit/build-angular',
  '@vue/cli-service',
  'parcel',
  'astro',
  '@rsbuild/core',
];

/** Dependencies that mean the package runs a server of its own. */
const SERVER_DEPS = [
  'express',
  'fastify',
  'koa',
  '@hapi/hapi',
  'hono',
  '@hono/node-server',
  '@nestjs/core',
  'restify',
  'polka',
  'h3',
  'next',
  'nuxt',
  '@remix-run/node',
  '@remix-run/serve',
  '@sveltejs/kit',
  '@react-router/serve',
  'socket.io',
  'ws',
];

function deps(pkg: PackageJson): Record<string, string> {
  return { ...pkg.dependencies, ...pkg.devDependencies };
}

/** The SPA build tool package.json uses, when it builds a single-page app and does not run a server. */
export function spaBuilder(pkg: PackageJson | null): string | undefined {
  if (!pkg || !pkg.scripts.build) return undefined;
  const all = deps(pkg);
  if (SERVER_DEPS.some((d) => d in pkg.dependencies)) return undefined;
  return SPA_BUILDERS.find((d) => d in all);
}

/** Evidence that the JavaScript repository runs its own server (decides javascript over static). */
export function serverSignals(repo: Repo): string[] {
  const out: string[] = [];
  if (repo.has('server.js')) out.push('server.js');
  const pkg = repo.packageJson();
  if (pkg) {
    const server = SERVER_DEPS.filter((d) => d in pkg.dependencies);
    if (server.length) out.push(`package.json depends on ${server.join(', ')}`);
    if (/^\s*node\s/.test(pkg.scripts.start ?? '')) out.push(`package.json "start" runs "${pkg.scripts.start}"`);
  }
  return out;
}

/** Every template whose signal (`docs/api.md#scaffolding-templates`) is present at the repository root. */
export function findCandidates(repo: Repo): Candidate[] {
  const found: Candidate[] = [];
  const at = (names: string[]) => names.filter((n) => repo.has(n));
  const js = at(['package.json', 'server.js', 'index.js']);
  if (js.length) found.push({ template: 'javascript', evidence: js });
  const py = at(['pyproject.toml', 'requirements.txt']);
  if (py.length) found.push({ template: 'python', evidence: py });
  const go = at(['go.mod']);
  if (go.length) found.push({ template: 'go', evidence: go });
  const spa: string[] = [];
  if (repo.has('dist/index.html')) spa.push('dist/index.html');
  const builder = spaBuilder(repo.packageJson());
  if (builder) spa.push(`package.json builds a single-page app with ${builder}`);
  if (spa.length) found.push({ template: 'static', evidence: spa });
  return found;
}

const SIGNALS = TEMPLATE_IDS.map((id) => `${TEMPLATES[id].detectedBy.join(' or ')} (${id})`).join('; ');

/**
 * Pick the template for a repository.
 * @param choice the caller's explicit template; wins over detection (and is how an ambiguity is resolved).
 * @throws InvalidParams when no template fits, or several do and no `choice` was given.
 */
export function detectTemplate(snapshot: RepoSnapshot | Repo, choice?: TemplateId): Detection {
  const repo = snapshot instanceof Repo ? snapshot : new Repo(snapshot);
  const candidates = findCandidates(repo);
  const describe = (c: Candidate) => `${c.template} (${c.evidence.join(', ')})`;
  if (choice) {
    const own = candidates.find((c) => c.template === choice);
    return {
      template: choice,
      reason: own
        ? `chosen by the caller; the repository fits it: ${own.evidence.join(', ')}`
        : `chosen by the caller; the repository shows none of its signals (${TEMPLATES[choice].detectedBy.join(', ')})`,
      candidates,
    };
  }
  if (candidates.length === 0) {
    throw new InvalidParams(
      `No template fits this repository: none of its root files selects one. Signals: ${SIGNALS}. ` +
        `Pass template=<${TEMPLATE_IDS.join('|')}> to choose one anyway.`,
    );
  }
  if (candidates.length === 1) {
    const [only] = candidates as [Candidate];
    return { template: only.template, reason: `found ${only.evidence.join(', ')}`, candidates };
  }
  const ids = candidates.map((c) => c.template).sort().join(',');
  if (ids === 'javascript,static') {
    const js = candidates.find((c) => c.template === 'javascript')!;
    const spa = candidates.find((c) => c.template === 'static')!;
    const server = serverSignals(repo);
    return server.length
      ? {
          template: 'javascript',
          reason: `found ${js.evidence.join(', ')} and ${spa.evidence.join(', ')}, but it runs a server (${server.join('; ')}); pass template=static to serve the build output instead`,
          candidates,
        }
      : {
          template: 'static',
          reason: `found ${spa.evidence.join(', ')} and no server of its own; pass template=javascript if it is a server`,
          candidates,
        };
  }
  throw new InvalidParams(
    `Several templates fit this repository: ${candidates.map(describe).join('; ')}. ` +
      `Pass template=<${candidates.map((c) => c.template).join('|')}> to choose one.`,
  );
}
