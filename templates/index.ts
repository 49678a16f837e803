/**
 * Repository scaffolding (SPEC.md "Scaffolding templates by repository content", "Deploy triggers", "CI deploy job",
 * "First-time onboarding sequence"): detect the template a repository needs, render its build file, .dockerignore
 * and CI workflow, and say what to pass at onboarding and what the team still has to do by hand.
 *
 * Used by the `platform_scaffold_repository` / `platform_list_templates` tools and by `pds scaffold`. Nothing here
 * touches a repository: it returns text; callers decide whether to write it.
 *
 * @example
 * const plan = scaffold({ repo: { paths: ['package.json', 'server.js'] }, team: 'acme', baseUrl: 'https://pds.example.com' });
 * plan.template;            // 'javascript'
 * plan.files.map((f) => f.path); // ['Dockerfile', '.dockerignore', '.github/workflows/ci.yml']
 * plan.onboarding.port;     // '8787'
 */
import type { z } from 'zod';
import { InvalidParams } from '../core/errors.js';
import { ServiceName, TeamName, RepoFullName, combinedNameProblem } from '../core/model.js';
import { PATTERNS, PATTERN_IDS, TEMPLATES, TEMPLATE_IDS, type PatternId, type TemplateId, type TemplateInfo } from './catalog.js';
import { detectTemplate, type Candidate } from './detect.js';
import { goSettings } from './inspect/go.js';
import { javascriptSettings } from './inspect/javascript.js';
import type { Note } from './inspect/note.js';
import { pythonEntryCandidates, pythonSettings } from './inspect/python.js';
import { staticSettings } from './inspect/static.js';
import { renderFile, renderWorkflow } from './render.js';
import { Repo, MANIFESTS, normalizePath, type RepoSnapshot } from './repo.js';

export { TEMPLATES, TEMPLATE_IDS, PATTERNS, PATTERN_IDS, MANIFESTS, detectTemplate, pythonEntryCandidates, normalizePath };
export type { TemplateId, PatternId, TemplateInfo, Candidate, RepoSnapshot };
export type { Detection } from './detect.js';

/** Path of the CI workflow every scaffold adds (SPEC.md "What the service does", rule 7). */
export const WORKFLOW_PATH = '.github/workflows/ci.yml';

/** What {@link scaffold} needs. */
export interface ScaffoldOptions {
  /** The repository's file list and the text of the manifests that were read. */
  repo: RepoSnapshot;
  /** Tenant the service deploys into, e.g. `acme`. */
  team: string;
  /** Service name; defaults to the package / project / module name, then the repository or directory name. */
  component?: string;
  /** `{base_url}` of pds, rendered into the deploy job, e.g. `https://pds.example.com`. */
  baseUrl: string;
  /** Deploy trigger pattern; `continuous` by default. */
  pattern?: PatternId;
  /** Explicit template; wins over detection (and resolves an ambiguous repository). */
  template?: TemplateId;
  /** Probe path when not the template's (`/healthz`, `/` for static); changes the image health check too (rule 7). */
  healthCheckPath?: string;
  /** JS entry script, Python `<module>:<app>`, Go package path or static output directory (see {@link TemplateInfo.entry}). */
  entry?: string;
  /** `<owner>/<repo>`, when known; goes into the onboarding parameters. */
  dockerfileRepo?: string;
  /** Service domain, for the verification URL `https://<team>-<service>.<domain>`. */
  domain?: string;
  /** Name of the local directory, the last fallback for the component name. */
  directoryName?: string;
}

/** One file to add. */
export interface ScaffoldFile {
  path: string;
  content: string;
  /** What the file is for, one line. */
  purpose: string;
  /** True when the repository already has a file at this path (adding it would replace it). */
  exists: boolean;
}

/** Parameters of `platform_deploy_service` with `action=onboard` (SPEC.md "First-time onboarding sequence", step 4). */
export interface OnboardingParameters {
  action: 'onboard';
  team_name: string;
  component_name: string;
  dockerfile_repo?: string;
  git_tag: string;
  port: string;
  service_template: string;
  health_check_path?: string;
}

/** One thing the team still does by hand; `id` is stable. */
export interface ChecklistItem {
  id: string;
  text: string;
}

/** Everything {@link scaffold} decides. */
export interface ScaffoldPlan {
  template: TemplateId;
  title: string;
  /** Why this template was chosen. */
  reason: string;
  /** Every template the repository content fits. */
  candidates: Candidate[];
  pattern: PatternId;
  /** Entry the image starts (script, `<module>:<app>`, package path or output directory). */
  entry: string;
  files: ScaffoldFile[];
  onboarding: OnboardingParameters;
  checklist: ChecklistItem[];
}

/** A template as {@link listTemplates} describes it. */
export interface TemplateSummary {
  id: TemplateId;
  title: string;
  detected_by: string[];
  port: string;
  port_from_env: boolean;
  health_check_path: string;
  entry: string;
  entry_default: string;
  files: string[];
}

/** The four templates and what selects each one. */
export function listTemplates(): TemplateSummary[] {
  return TEMPLATE_IDS.map((id) => {
    const t = TEMPLATES[id];
    return {
      id,
      title: t.title,
      detected_by: t.detectedBy,
      port: t.port,
      port_from_env: t.portFromEnv,
      health_check_path: t.healthPath,
      entry: t.entry.meaning,
      entry_default: t.entry.default,
      files: t.files,
    };
  });
}

/** The four deploy trigger patterns. */
export function listPatterns(): { id: PatternId; title: string; trigger: string; use: string }[] {
  return PATTERN_IDS.map((id) => PATTERNS[id]);
}

const HEALTH_PATH = /^\/[A-Za-z0-9._~/-]*$/;

/**
 * Decide the template and render every file to add.
 * @throws InvalidParams when no template fits or several do (pass `template`), or a name, URL, path or entry is unusable.
 */
export function scaffold(options: ScaffoldOptions): ScaffoldPlan {
  const repo = new Repo(options.repo);
  const team = check(TeamName, options.team, 'team_name');
  const baseUrl = checkBaseUrl(options.baseUrl);
  const pattern = options.pattern ?? 'continuous';
  if (!(PATTERN_IDS as readonly string[]).includes(pattern)) throw new InvalidParams(`pattern must be one of ${PATTERN_IDS.join(', ')}`);
  if (options.template && !(TEMPLATE_IDS as readonly string[]).includes(options.template)) {
    throw new InvalidParams(`template must be one of ${TEMPLATE_IDS.join(', ')}`);
  }
  const dockerfileRepo = options.dockerfileRepo === undefined ? undefined : check(RepoFullName, options.dockerfileRepo, 'dockerfile_repo');
  if (options.healthCheckPath !== undefined && !HEALTH_PATH.test(options.healthCheckPath)) {
    throw new InvalidParams(`health_check_path "${options.healthCheckPath}" must be an absolute path of letters, digits and ._~/- , e.g. "/health"`);
  }

  const detection = detectTemplate(repo, options.template);
  const info = TEMPLATES[detection.template];
  const component = options.component !== undefined ? check(ServiceName, options.component, 'component_name') : defaultComponent(repo, dockerfileRepo, options.directoryName);
  const combined = combinedNameProblem(team, component);
  if (combined) throw new InvalidParams(combined);
  const healthPath = options.healthCheckPath ?? info.healthPath;

  const { view, entry, notes } = settingsFor(detection.template, repo, options.entry);
  const common = { ...view, port: info.port, healthPath, team, component, baseUrlYaml: JSON.stringify(baseUrl) };

  const files: Omit<ScaffoldFile, 'exists'>[] = [
    { path: 'Dockerfile', purpose: `container build file (${info.title}) with the image health check on ${healthPath}`, content: renderFile(`dockerfiles/${detection.template}.Dockerfile.tmpl`, common) },
    { path: '.dockerignore', purpose: 'keeps VCS data, dependencies and secrets out of the build context', content: renderFile(`dockerignore/${detection.template}.dockerignore.tmpl`, common) },
  ];
  if (detection.template === 'static') {
    files.push({ path: 'nginx.conf', purpose: 'nginx site: serves the build output on 8080, unknown paths fall back to /index.html', content: renderFile('dockerfiles/static.nginx.conf.tmpl', common) });
  }
  // build, lint and test run on every trigger; the pull-request image job is never a dependency (CI deploy job, rule 2).
  const needs = 'build, lint, test';
  files.push({
    path: WORKFLOW_PATH,
    purpose: `CI: build, lint and test; image build on pull requests; the deploy job (${PATTERNS[pattern].title}: ${PATTERNS[pattern].trigger})`,
    content: renderWorkflow(`workflows/${pattern}.yml.tmpl`, { ...common, needs }, {
      checks: `workflows/jobs/${detection.template}.yml.tmpl`,
      'node-setup': 'workflows/jobs/node-setup.yml.tmpl',
      'python-setup': 'workflows/jobs/python-setup.yml.tmpl',
      image: 'workflows/jobs/image.yml.tmpl',
      env: 'workflows/steps/env.yml.tmpl',
      gate: 'workflows/steps/gate.yml.tmpl',
      'next-tag': 'workflows/steps/next-tag.yml.tmpl',
      'ref-tag': 'workflows/steps/ref-tag.yml.tmpl',
      deploy: 'workflows/steps/deploy.yml.tmpl',
    }),
  });

  const onboarding: OnboardingParameters = {
    action: 'onboard',
    team_name: team,
    component_name: component,
    ...(dockerfileRepo ? { dockerfile_repo: dockerfileRepo } : {}),
    git_tag: '0.1.0',
    port: info.port,
    service_template: 'default',
    ...(options.healthCheckPath !== undefined ? { health_check_path: options.healthCheckPath } : {}),
  };

  return {
    template: detection.template,
    title: info.title,
    reason: detection.reason,
    candidates: detection.candidates,
    pattern,
    entry,
    files: files.map((f) => ({ ...f, exists: repo.has(f.path) })),
    onboarding,
    checklist: checklist({ template: detection.template, info, pattern, team, component, dockerfileRepo, healthPath, onboarding, domain: options.domain, notes, existing: files.filter((f) => repo.has(f.path)).map((f) => f.path) }),
  };
}

function settingsFor(template: TemplateId, repo: Repo, entry?: string): { view: Record<string, unknown>; entry: string; notes: Note[] } {
  switch (template) {
    case 'javascript': {
      const s = javascriptSettings(repo, entry);
      return { view: { ...s }, entry: s.entry, notes: s.notes };
    }
    case 'python': {
      const s = pythonSettings(repo, entry);
      return { view: { ...s }, entry: s.app, notes: s.notes };
    }
    case 'go': {
      const s = goSettings(repo, entry);
      return { view: { ...s }, entry: s.package, notes: s.notes };
    }
    case 'static': {
      const s = staticSettings(repo, entry);
      return { view: { ...s }, entry: s.outputDir, notes: s.notes };
    }
  }
}

interface ChecklistInput {
  template: TemplateId;
  info: TemplateInfo;
  pattern: PatternId;
  team: string;
  component: string;
  dockerfileRepo?: string;
  healthPath: string;
  onboarding: OnboardingParameters;
  domain?: string;
  notes: Note[];
  existing: string[];
}

/** SPEC.md "First-time onboarding sequence" as concrete steps, then what the scaffold had to assume. */
function checklist(c: ChecklistInput): ChecklistItem[] {
  const repo = c.dockerfileRepo ?? '<owner>/<repo>';
  const files = c.info.files.join(', ');
  const items: ChecklistItem[] = [];
  if (c.existing.length) {
    items.push({ id: 'existing-files', text: `The repository already has ${c.existing.join(', ')}: compare before replacing; onboarding needs a Dockerfile at the root and a "deploy" job in ${WORKFLOW_PATH}.` });
  }
  items.push({
    id: 'commit',
    text: `Commit ${files} to main. Until the secret below exists the deploy job skips itself with a warning, so CI stays green.`,
  });
  items.push({
    id: 'secret',
    text: 'Create a classic personal access token with scope read:user (https://github.com/settings/tokens/new?scopes=read:user) and store it as the repository secret PLATFORM_GITHUB_TOKEN (Settings > Secrets and variables > Actions, or "gh secret set PLATFORM_GITHUB_TOKEN"). The deploy job authenticates to pds with it.',
  });
  if (c.template === 'static') {
    items.push({ id: 'health-endpoint', text: `The image health check requests GET ${c.healthPath} on 127.0.0.1:8080; nginx answers it from the build output without authentication.` });
  } else {
    items.push({
      id: 'health-endpoint',
      text: `The app must answer GET ${c.healthPath} with HTTP 200 and a JSON object {"ok": true}, and exempt it (and /readyz if it has one) from authentication middleware: the platform's liveness and readiness probes send no Authorization header, and a 401 makes the pod restart over and over.`,
    });
  }
  if (c.template === 'javascript' || c.template === 'go') {
    items.push({ id: 'listen-port', text: `The server must listen on 0.0.0.0 at the port in the PORT environment variable (the image sets ${c.info.port}).` });
  }
  items.push({
    id: 'repo-access',
    text: `If the platform cannot see ${repo}: call platform_grant_repo_access with team_name=${c.team} and repo=${repo}, open the URL it returns and install the app, then call platform_sync_repos with team=${c.team}.`,
  });
  items.push({ id: 'first-tag', text: 'Tag the commit to deploy first and push the tag: git tag -a 0.1.0 -m "Release 0.1.0" && git push origin 0.1.0' });
  items.push({
    id: 'onboard',
    text: `Call platform_deploy_service with ${JSON.stringify({ ...c.onboarding, dockerfile_repo: c.onboarding.dockerfile_repo ?? repo })}.`,
  });
  const host = `${c.team}-${c.component}.${c.domain ?? '<domain>'}`;
  items.push({ id: 'verify', text: `When the workflow reports Succeeded, GET https://${host}${c.healthPath} must return 200.` });
  const next: Record<PatternId, string> = {
    continuous: 'From then on every push to main tags the next patch version (0.1.1, 0.1.2, …) and deploys it, with no human step.',
    tag: 'From then on push a tag X.Y.Z (git tag -a 0.1.1 -m "Release 0.1.1" && git push origin 0.1.1) to deploy it.',
    manual: 'From then on run the CI workflow on main from the Actions tab ("Run workflow"); it tags the next patch version and deploys it.',
    hybrid: 'From then on pushes to main are validated only; push a tag X.Y.Z to deploy it.',
  };
  items.push({ id: 'next-deploys', text: next[c.pattern] });
  if (c.onboarding.health_check_path !== undefined) {
    items.push({ id: 'health-check-path', text: `health_check_path=${c.onboarding.health_check_path} is in the onboarding parameters and in the image HEALTHCHECK; keep both the same if the path changes.` });
  }
  return [...items, ...c.notes];
}

function check<T>(schema: z.ZodType<T>, value: unknown, field: string): T {
  const r = schema.safeParse(value);
  if (!r.success) throw new InvalidParams(`${field} "${String(value)}" ${r.error.issues[0]?.message ?? 'is not valid'}`);
  return r.data;
}

function checkBaseUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new InvalidParams(`base_url "${raw}" must be an absolute URL, e.g. "https://pds.example.com"`);
  }
  if ((url.protocol !== 'https:' && url.protocol !== 'http:') || url.search || url.hash || url.username || url.password) {
    throw new InvalidParams(`base_url "${raw}" must be an http(s) URL without query, fragment or credentials, e.g. "https://pds.example.com"`);
  }
  return url.href.replace(/\/+$/, '');
}

/** Lowercase DNS label from a package or directory name: `@acme/Web_App` → `web-app`. */
export function toServiceName(raw: string): string | undefined {
  const name = raw
    .replace(/^@[^/]+\//, '')
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/-{2,}/g, '-')
    .replace(/^[^a-z]+/, '')
    .slice(0, 40)
    .replace(/-+$/, '');
  return ServiceName.safeParse(name).success ? name : undefined;
}

function defaultComponent(repo: Repo, dockerfileRepo: string | undefined, directoryName: string | undefined): string {
  const py = repo.pyproject();
  const project = py?.project as { name?: unknown } | undefined;
  const poetry = (py?.tool as { poetry?: { name?: unknown } } | undefined)?.poetry;
  const module = repo.text('go.mod')?.match(/^module\s+(\S+)/m)?.[1]?.split('/').filter((s) => !/^v\d+$/.test(s)).pop();
  const sources = [
    repo.packageJson()?.name,
    typeof project?.name === 'string' ? project.name : undefined,
    typeof poetry?.name === 'string' ? poetry.name : undefined,
    module,
    dockerfileRepo?.split('/')[1],
    directoryName,
  ];
  for (const s of sources) {
    const name = s ? toServiceName(s) : undefined;
    if (name) return name;
  }
  throw new InvalidParams('component_name is needed: no usable name in package.json, pyproject.toml, go.mod or the repository name. Pass component_name, e.g. "web".');
}
