/**
 * The scaffolding pipeline (`docs/api.md#scaffolding-templates`, "Deploy triggers", "CI deploy
 * job", "First-time onboarding sequence"): detect the template, let its inspector read the repository, render the
 * build file, .dockerignore and CI workflow, and say what to pass at onboarding and what the team still does by hand.
 *
 * The caller's values arrive valid ({@link ScaffoldParameters} is the door, for the tool and for `pds scaffold`);
 * what can only be judged against the repository is judged here.
 */
import { InvalidParams } from '../core/errors.js';
import { combinedNameProblem } from '../core/model.js';
import { DEPENDABOT_PATH, PATTERNS, TEMPLATES, WORKFLOW_PATH, type PatternId, type TemplateId, type TemplateInfo } from './catalog.js';
import { onboardingChecklist, type ChecklistItem, type OnboardingParameters } from './checklist.js';
import { impliedComponentName } from './component.js';
import { detectTemplate, type Candidate } from './detect.js';
import { goSettings } from './inspect/go.js';
import { javascriptSettings } from './inspect/javascript.js';
import type { Note } from './inspect/note.js';
import { pythonSettings } from './inspect/python.js';
import { detectHealthRoute, routeSourceCandidates, type HealthRoute } from './inspect/routes.js';
import { staticSettings } from './inspect/static.js';
import type { ScaffoldParameters } from './parameters.js';
import { renderDependabot, renderFile, renderWorkflow } from './render.js';
import { Repo, type RepoSnapshot } from './repo.js';

/**
 * What {@link scaffold} needs. Every value is as {@link ScaffoldParameters} accepts it (the field in brackets); they
 * are not checked again.
 */
export interface ScaffoldOptions {
  /** The repository's file list and the text of the manifests that were read. */
  repo: RepoSnapshot;
  /** Tenant the service deploys into, e.g. `acme` (`team_name`). */
  team: string;
  /** Service name (`component_name`); defaults to the package / project / module name, then the repository or directory name. */
  component?: string;
  /** `{base_url}` of pds, rendered into the deploy job, e.g. `https://pds.example.com` (`base_url`). */
  baseUrl: string;
  /** Deploy trigger pattern; `continuous` by default. */
  pattern?: PatternId;
  /** Explicit template; wins over detection (and resolves an ambiguous repository). */
  template?: TemplateId;
  /**
   * Probe path when not the template's (`/healthz`, `/` for static); changes the image health check too (rule 7).
   * Without it, a server template uses the health route the app's source declares, when one is found.
   */
  healthCheckPath?: string;
  /** JS entry script, Python `<module>:<app>`, Go package path or static output directory (see {@link TemplateInfo.entry}). */
  entry?: string;
  /** `<owner>/<repo>`, when known; goes into the onboarding parameters (`dockerfile_repo`). */
  dockerfileRepo?: string;
  /** Service domain, for the verification URL `https://<team>-<service>.<domain>`. */
  domain?: string;
  /** Name of the local directory, the last fallback for the component name. */
  directoryName?: string;
  /**
   * How the deploy job authenticates to pds (issue 20 item 6): `token` (default, `docs/api.md#ci-deploy-job`: a PAT in
   * the secret PLATFORM_GITHUB_TOKEN) or `oidc` (the run's GitHub Actions OIDC ID token, exchanged at pds for a 10-minute token;
   * no secret; for tenants whose policy has `ci.githubOidc`).
   */
  ciAuth?: CiAuth;
}

/** How a scaffolded deploy job authenticates: a PAT secret (`docs/api.md#ci-deploy-job`) or the run's OIDC ID token. */
export type CiAuth = 'token' | 'oidc';

/** One file to add. */
export interface ScaffoldFile {
  /** Path relative to the repository root, e.g. `Dockerfile`. */
  path: string;
  /** The full file text. */
  content: string;
  /** What the file is for, one line. */
  purpose: string;
  /** True when the repository already has a file at this path (adding it would replace it). */
  exists: boolean;
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
  /** Dockerfile, .dockerignore, nginx.conf for static, the CI workflow, then .github/dependabot.yml. */
  files: ScaffoldFile[];
  onboarding: OnboardingParameters;
  checklist: ChecklistItem[];
}

/** What one template's inspector found: the values its templates render, the entry it settled on, its assumptions. */
interface Inspection {
  view: object;
  entry: string;
  notes: Note[];
}

/** An inspector's settings as the pipeline uses them; `entryOf` names the field holding what the image starts. */
function inspector<S extends { notes: Note[] }>(settings: (repo: Repo, entry?: string) => S, entryOf: (s: S) => string) {
  return (repo: Repo, entry?: string): Inspection => {
    const s = settings(repo, entry);
    return { view: s, entry: entryOf(s), notes: s.notes };
  };
}

/** Which sources hold a server template's routes; the static template's probe is nginx's `/`, never scanned. */
const ROUTE_LANGUAGE: Record<TemplateId, 'py' | 'js' | 'go' | undefined> = { javascript: 'js', python: 'py', go: 'go', static: undefined };

/** One inspector per template; a new template without one does not compile. */
const INSPECTORS: Record<TemplateId, (repo: Repo, entry?: string) => Inspection> = {
  javascript: inspector(javascriptSettings, (s) => s.entry),
  python: inspector(pythonSettings, (s) => s.app),
  go: inspector(goSettings, (s) => s.package),
  static: inspector(staticSettings, (s) => s.outputDir),
};

/**
 * Decide the template and render every file to add. Nothing here touches a repository: it returns text.
 * @example
 * const plan = scaffold({ repo: { paths: ['package.json', 'server.js'] }, team: 'acme', baseUrl: 'https://pds.example.com' });
 * plan.template;                 // 'javascript'
 * plan.files.map((f) => f.path); // ['Dockerfile', '.dockerignore', '.github/workflows/ci.yml', '.github/dependabot.yml']
 * plan.onboarding.port;          // '8787'
 * @throws InvalidParams when no template fits or several do (pass `template`); when `entry` does not fit the
 * template; when no component name is given or implied, or `<team>-<component>` is longer than 63 characters; when
 * package.json or pyproject.toml cannot be parsed.
 */
export function scaffold(options: ScaffoldOptions): ScaffoldPlan {
  const repo = new Repo(options.repo);
  const { team, dockerfileRepo } = options;
  const pattern = options.pattern ?? 'continuous';
  // Callers pass the configured address or a typed one; either may end in "/", and the job appends paths.
  const baseUrl = options.baseUrl.replace(/\/+$/, '');

  const detection = detectTemplate(repo, options.template);
  const info = TEMPLATES[detection.template];
  const component = options.component ?? impliedComponentName(repo, dockerfileRepo, options.directoryName);
  // Checked here, not at the door: the component may have been implied by the repository just now.
  const combined = combinedNameProblem(team, component);
  if (combined) throw new InvalidParams(combined);
  const language = ROUTE_LANGUAGE[detection.template];
  // The caller's path wins; otherwise the route the app declares, so the image check and the probes (rule 7) agree.
  const route: HealthRoute | undefined =
    options.healthCheckPath === undefined && language ? detectHealthRoute(repo, routeSourceCandidates(repo.paths), language) : undefined;
  const healthPath = options.healthCheckPath ?? route?.path ?? info.healthPath;
  // The platform's probes default to the template's path; any other path must be passed at onboarding.
  const healthCheckPath = options.healthCheckPath ?? (healthPath !== info.healthPath ? healthPath : undefined);

  const inspection = INSPECTORS[detection.template](repo, options.entry);
  const { view, entry } = inspection;
  const notes = [...inspection.notes, ...(route?.notes ?? [])];
  const oidc = options.ciAuth === 'oidc';
  // tokenEnv is one of two names of ours, never caller text.
  const common = { ...view, port: info.port, healthPath, team, component, oidc, tokenEnv: oidc ? 'PDS_TOKEN' : 'PLATFORM_GITHUB_TOKEN' };
  // Values the workflow takes as YAML nodes (render.ts renderWorkflow), never as text.
  const inspected = view as { dependencies?: string[]; outputDir?: string };
  const workflowValues: Record<string, string> = {
    team,
    component,
    baseUrl,
    ...(inspected.dependencies ? { dependencies: inspected.dependencies.join('\n') } : {}),
    ...(inspected.outputDir ? { outputDir: inspected.outputDir } : {}),
  };

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
      env: oidc ? 'workflows/steps/env-oidc.yml.tmpl' : 'workflows/steps/env.yml.tmpl',
      gate: oidc ? 'workflows/steps/gate-oidc.yml.tmpl' : 'workflows/steps/gate.yml.tmpl',
      exchange: 'workflows/steps/exchange.sh.tmpl',
      'next-tag': 'workflows/steps/next-tag.yml.tmpl',
      'ref-tag': 'workflows/steps/ref-tag.yml.tmpl',
      deploy: 'workflows/steps/deploy.yml.tmpl',
    }, workflowValues),
  });
  files.push({ path: DEPENDABOT_PATH, purpose: 'Dependabot: weekly pull requests that bump the pinned GitHub Actions and the Dockerfile base images', content: renderDependabot() });

  const onboarding: OnboardingParameters = {
    action: 'onboard',
    team_name: team,
    component_name: component,
    ...(dockerfileRepo ? { dockerfile_repo: dockerfileRepo } : {}),
    git_tag: '0.1.0',
    port: info.port,
    service_template: 'default',
    ...(healthCheckPath !== undefined ? { health_check_path: healthCheckPath } : {}),
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
    checklist: onboardingChecklist({
      template: detection.template,
      pattern,
      team,
      component,
      dockerfileRepo,
      healthPath,
      onboarding,
      domain: options.domain,
      notes,
      existing: files.filter((f) => repo.has(f.path)).map((f) => f.path),
      oidc,
    }),
  };
}
