/**
 * Repository scaffolding (`docs/api.md#scaffolding-templates`, "CI deploy job", "First-time
 * onboarding sequence" step 1): say which template a repository needs and return the files to add, the onboarding
 * parameters and the checklist. The work is in `templates/`; this file is the capability's contract.
 */
import { z } from 'zod';
import { InvalidParams, NotFound } from '../core/errors.js';
import {
  MANIFESTS,
  PatternParam,
  ScaffoldParameters,
  TemplateParam,
  listPatterns,
  listTemplates as templateCatalogue,
  routeSourceCandidates,
  scaffold,
  type CiAuth,
  type RepoSnapshot,
} from '../templates/index.js';
import { requireTenantAccess } from './access.js';
import { defineTool, type ToolContext } from './define.js';

// The rules are the templates' (ScaffoldParameters, shared with `pds scaffold`); this file adds what agents read.
const field = ScaffoldParameters.shape;

const ScaffoldInput = z.object({
  team_name: field.team_name.describe('Tenant the service deploys into, rendered into the deploy job, e.g. "acme"'),
  component_name: field.component_name.describe(
    'Service name within the tenant, e.g. "web". Default: the name in package.json / pyproject.toml / go.mod, then the repository name',
  ),
  files: z
    .array(z.string().min(1).max(1000))
    .max(50_000)
    .optional()
    .describe('Every file path in the repository, relative to its root, e.g. ["package.json", "src/server.js", "dist/index.html"]. Give this or dockerfile_repo'),
  file_contents: z
    .record(z.string().max(1000), z.string().max(200_000))
    .optional()
    .describe(
      'Text of files to inspect, by path: package.json, pyproject.toml, go.mod, requirements.txt, and entry files (main.py, server.js, main.go), e.g. {"package.json": "{\\"name\\": \\"web\\", \\"scripts\\": {\\"start\\": \\"node server.js\\"}}"}',
    ),
  dockerfile_repo: field.dockerfile_repo.describe(
    'Repository "<owner>/<repo>", e.g. "acme/web". Without files, pds reads the file list and manifests through the code-host app (the repository must be registered for team_name). Always used in the onboarding parameters',
  ),
  template: field.template.describe('Template to use instead of detection, e.g. "static"; needed when several fit'),
  pattern: field.pattern.describe(
    'Deploy trigger: "continuous" (push to main deploys), "tag" (tag X.Y.Z deploys), "manual" (workflow_dispatch), "hybrid" (main validates, tags deploy), e.g. "tag"',
  ),
  health_check_path: field.health_check_path.describe('Probe path, e.g. "/health", also of the image health check. Default: the route the app declares'),
  entry: field.entry.describe(
    'What the image starts, when detection guessed wrong: JS entry script, Python "<module>:<app>", Go package or static output directory, e.g. "src/server.js", "app.main:app", "./cmd/api", "build"',
  ),
  base_url: field.base_url.describe('pds address the deploy job calls, e.g. "https://pds.example.com"; default: this server\'s base URL'),
});

const ScaffoldOutput = z.object({
  template: TemplateParam.describe('Template used'),
  title: z.string().describe('e.g. "JavaScript server"'),
  reason: z.string().describe('Why this template'),
  candidates: z
    .array(z.object({ template: TemplateParam, evidence: z.array(z.string()) }))
    .describe('Every template the repository content fits, with the files that matched'),
  pattern: PatternParam,
  entry: z.string().describe('What the image starts: script, <module>:<app>, package path or output directory'),
  files: z
    .array(
      z.object({
        path: z.string().describe('Path to create, relative to the repository root, e.g. "Dockerfile"'),
        content: z.string().describe('Full file text'),
        purpose: z.string(),
        exists: z.boolean().describe('The repository already has this path; adding the file replaces it'),
      }),
    )
    .describe('Every file to add: Dockerfile, .dockerignore, CI workflow, dependabot.yml (nginx.conf for static)'),
  onboarding: z
    .object({
      action: z.literal('onboard'),
      team_name: z.string(),
      component_name: z.string(),
      dockerfile_repo: z.string().optional(),
      git_tag: z.string().describe('First tag to create and deploy, "0.1.0"'),
      port: z.string().describe('Container port, as text, e.g. "8787"'),
      service_template: z.string().describe('"default"'),
      health_check_path: z.string().optional(),
    })
    .describe('Parameters for platform_deploy_service once the files are committed'),
  checklist: z
    .array(z.object({ id: z.string(), text: z.string() }))
    .describe('What the team still does by hand, in order: commit, secret, health endpoint, repository access, first tag, onboard, verify, then anything assumed'),
});

/** The file list and manifests of a repository, read through the code-host app. */
async function readRepository(repo: string, team: string, ctx: ToolContext): Promise<RepoSnapshot> {
  // The platform's app may see repositories of other tenants; scaffolding reads only what this team registered.
  await requireTenantAccess(ctx.platform.backend, ctx.identity, team, 'viewer');
  const registered = await ctx.platform.codeHost.listRepositories(team);
  if (!registered.some((r) => r.fullName.toLowerCase() === repo.toLowerCase())) {
    const grant = ctx.door.name({ tool: 'platform_grant_repo_access', arguments: { team_name: team, repo } });
    const sync = ctx.door.name({ tool: 'platform_sync_repos', arguments: { team } });
    throw new NotFound(`repository ${repo} is not registered for team ${team}: call ${grant} and then ${sync}, or pass files (and file_contents) instead`);
  }
  const tree = await ctx.platform.codeHost.readTree(repo, { read: [...MANIFESTS] });
  const contents: Record<string, string> = { ...tree.files };
  // The modules that may hold a Python app and the entry files that may declare the health route.
  const entries = routeSourceCandidates(tree.paths);
  if (entries.length) Object.assign(contents, (await ctx.platform.codeHost.readTree(repo, { read: entries })).files);
  return { paths: tree.paths, contents };
}

/**
 * How the deploy job will authenticate (issue 20 item 6): with the run's GitHub Actions OIDC ID token when the tenant's
 * policy enables `ci.githubOidc` and the caller may read that tenant; otherwise with the PAT secret of `docs/api.md#ci-deploy-job`.
 */
async function ciAuthOf(team: string, ctx: ToolContext): Promise<CiAuth> {
  try {
    await requireTenantAccess(ctx.platform.backend, ctx.identity, team, 'viewer');
  } catch {
    // Scaffolding is open to anyone signed in; a tenant the caller cannot read keeps the default job.
    return 'token';
  }
  const ref = await ctx.platform.backend.getTenantRef(team);
  return ref && (await ctx.platform.governance.policy(ref)).ci?.githubOidc ? 'oidc' : 'token';
}

/** `platform_scaffold_repository`, `POST /api/v1/scaffold`: the files, onboarding parameters and checklist for a repository. */
export const scaffoldRepository = defineTool({
  name: 'platform_scaffold_repository',
  title: 'Scaffold a repository for deployment',
  description:
    'Works out which build template a repository needs (JavaScript server, Python ASGI server, Go server or static ' +
    'single-page app, from files such as package.json, pyproject.toml, requirements.txt, go.mod or dist/index.html) ' +
    'and returns every file onboarding needs, with full content: Dockerfile (small non-root image, tini, health ' +
    'check), .dockerignore and .github/workflows/ci.yml with the "deploy" job for the chosen trigger pattern. Also ' +
    'returns the parameters for platform_deploy_service (action=onboard: port, service_template, health_check_path) ' +
    'and the checklist (PLATFORM_GITHUB_TOKEN secret, app access, unauthenticated health endpoint, first tag); if the ' +
    'tenant\'s policy has ci.githubOidc, the job uses the run\'s OIDC token instead (no secret). Use ' +
    'before onboarding a repository that has no Dockerfile or CI deploy job. Pass the file list (and manifest ' +
    'contents) or dockerfile_repo. Fails with the candidates when no template or several fit; pass template to ' +
    'choose. It does not commit, push or change anything: add the files to the repository yourself.',
  input: ScaffoldInput,
  output: ScaffoldOutput,
  rest: { method: 'POST', path: '/api/v1/scaffold' },
  access: 'authenticated',
  kind: 'read',
  toolset: 'scaffold',
  annotations: { idempotentHint: true, openWorldHint: true },
  handler: async (input, ctx) => {
    let snapshot: RepoSnapshot;
    if (input.files) snapshot = { paths: input.files, contents: input.file_contents };
    else if (input.dockerfile_repo) snapshot = await readRepository(input.dockerfile_repo, input.team_name, ctx);
    else if (input.file_contents) snapshot = { paths: Object.keys(input.file_contents), contents: input.file_contents };
    else throw new InvalidParams('pass files (the repository\'s file paths) or dockerfile_repo (read through the code-host app)');
    return scaffold({
      repo: snapshot,
      team: input.team_name,
      component: input.component_name,
      baseUrl: input.base_url ?? ctx.settings.baseUrl,
      pattern: input.pattern,
      template: input.template,
      healthCheckPath: input.health_check_path,
      entry: input.entry,
      dockerfileRepo: input.dockerfile_repo,
      domain: ctx.settings.domain,
      ciAuth: await ciAuthOf(input.team_name, ctx),
    });
  },
});

/** `platform_list_templates`, `GET /api/v1/templates`: the four templates and the four deploy trigger patterns. */
export const listTemplates = defineTool({
  name: 'platform_list_templates',
  title: 'List scaffolding templates and deploy patterns',
  description:
    'The four repository templates platform_scaffold_repository can render (what selects each, its container port, ' +
    'health check path and what "entry" adjusts) and the four deploy trigger patterns for the CI workflow. Use to ' +
    'choose template or pattern explicitly. Changes nothing.',
  input: z.object({}),
  output: z.object({
    items: z
      .array(
        z.object({
          id: TemplateParam.describe('Value for template, e.g. "javascript"'),
          title: z.string(),
          detected_by: z.array(z.string()).describe('Repository content that selects it'),
          port: z.string().describe('Container port, as text'),
          port_from_env: z.boolean().describe('The server follows the PORT environment variable'),
          health_check_path: z.string().describe('Default probe path'),
          entry: z.string().describe('What "entry" adjusts'),
          entry_default: z.string(),
          files: z.array(z.string()).describe('Files a scaffold adds'),
        }),
      )
      .describe('The templates'),
    count: z.number().int(),
    patterns: z
      .array(z.object({ id: PatternParam, title: z.string(), trigger: z.string(), use: z.string() }))
      .describe('Deploy trigger patterns, values for pattern'),
  }),
  rest: { method: 'GET', path: '/api/v1/templates' },
  access: 'authenticated',
  kind: 'read',
  toolset: 'scaffold',
  annotations: { idempotentHint: true, openWorldHint: false },
  handler: async () => {
    const items = templateCatalogue();
    return { items, count: items.length, patterns: listPatterns() };
  },
});

/** Both scaffolding tools, for the registry. */
export const scaffoldTools = [scaffoldRepository, listTemplates];
