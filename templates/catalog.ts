/**
 * The scaffolding catalogue: the four repository templates and the four deploy trigger patterns of `docs/api.md`
 * ("Scaffolding templates by repository content", "Deploy triggers"). Pure data; rendering is in `render.ts`.
 */

/** Template ids, as callers pass them in `template`. */
export const TEMPLATE_IDS = ['javascript', 'python', 'go', 'static'] as const;
/** One of {@link TEMPLATE_IDS}. */
export type TemplateId = (typeof TEMPLATE_IDS)[number];

/** Deploy trigger pattern ids, as callers pass them in `pattern`. */
export const PATTERN_IDS = ['continuous', 'tag', 'manual', 'hybrid'] as const;
/** One of {@link PATTERN_IDS}. */
export type PatternId = (typeof PATTERN_IDS)[number];

/** Path of the CI workflow every scaffold adds (`docs/api.md#what-the-service-does`, rule 7). */
export const WORKFLOW_PATH = '.github/workflows/ci.yml';

/** Path of the Dependabot configuration every scaffold adds, so pinned actions and base images stay current. */
export const DEPENDABOT_PATH = '.github/dependabot.yml';

/** What a template is and what the platform needs to know about it at onboarding. */
export interface TemplateInfo {
  id: TemplateId;
  title: string;
  /** The repository content that selects it (`docs/api.md#scaffolding-templates`). */
  detectedBy: string[];
  /** Container port the server listens on, as text (it is sent as the `port` operation parameter). */
  port: string;
  /** Whether the port follows the `PORT` environment variable. */
  portFromEnv: boolean;
  /** Path of the image health check and of the platform probes unless `health_check_path` overrides it. */
  healthPath: string;
  /** What `entry` adjusts for this template, with the default. */
  entry: { meaning: string; default: string };
  /** Files every scaffold of this template adds. */
  files: string[];
}

/** The four templates (`docs/api.md#scaffolding-templates` and its port table). */
export const TEMPLATES: Record<TemplateId, TemplateInfo> = {
  javascript: {
    id: 'javascript',
    title: 'JavaScript server',
    detectedBy: ['package.json', 'server.js', 'index.js'],
    port: '8787',
    portFromEnv: true,
    healthPath: '/healthz',
    entry: { meaning: 'entry script run with node (from package.json "scripts.start" or "main" when found)', default: 'server.js' },
    files: ['Dockerfile', '.dockerignore', WORKFLOW_PATH, DEPENDABOT_PATH],
  },
  python: {
    id: 'python',
    title: 'Python ASGI server',
    detectedBy: ['pyproject.toml', 'requirements.txt'],
    port: '8000',
    portFromEnv: true,
    healthPath: '/healthz',
    entry: { meaning: 'ASGI application as <module>:<app>, served by uvicorn on 0.0.0.0', default: 'main:app' },
    files: ['Dockerfile', '.dockerignore', WORKFLOW_PATH, DEPENDABOT_PATH],
  },
  go: {
    id: 'go',
    title: 'Go server',
    detectedBy: ['go.mod'],
    port: '8080',
    portFromEnv: true,
    healthPath: '/healthz',
    entry: { meaning: 'Go package path of the server built into a static binary', default: './cmd/server' },
    files: ['Dockerfile', '.dockerignore', WORKFLOW_PATH, DEPENDABOT_PATH],
  },
  static: {
    id: 'static',
    title: 'Static single-page app (nginx)',
    detectedBy: ['dist/index.html', 'package.json building a single-page app into dist/'],
    port: '8080',
    portFromEnv: false,
    healthPath: '/',
    entry: { meaning: 'build output directory served by nginx, with /index.html for unknown paths', default: 'dist' },
    files: ['Dockerfile', '.dockerignore', 'nginx.conf', WORKFLOW_PATH, DEPENDABOT_PATH],
  },
};

/** The deploy trigger patterns (`docs/api.md#deploy-triggers`). */
export const PATTERNS: Record<PatternId, { id: PatternId; title: string; trigger: string; use: string }> = {
  continuous: {
    id: 'continuous',
    title: 'Continuous deployment',
    trigger: 'push to main: the deploy job tags the next patch version and deploys it',
    use: 'every merge deploys (recommended for single-environment services)',
  },
  tag: {
    id: 'tag',
    title: 'Tag-based',
    trigger: 'push of a tag matching *.*.*: that tag is deployed, nothing is bumped',
    use: 'the team decides what a release is',
  },
  manual: {
    id: 'manual',
    title: 'Manual',
    trigger: 'workflow_dispatch on main: tags the next patch version and deploys it',
    use: 'full human control',
  },
  hybrid: {
    id: 'hybrid',
    title: 'Hybrid',
    trigger: 'push to main validates only; push of a tag matching *.*.* deploys that tag',
    use: 'multiple environments',
  },
};

/** A template as {@link listTemplates} describes it to callers (the `platform_list_templates` items). */
export interface TemplateSummary {
  id: TemplateId;
  title: string;
  /** The repository content that selects it. */
  detected_by: string[];
  /** Container port, as text, e.g. `8787`. */
  port: string;
  /** The server follows the `PORT` environment variable. */
  port_from_env: boolean;
  /** Default probe path, e.g. `/healthz`. */
  health_check_path: string;
  /** What `entry` adjusts for this template. */
  entry: string;
  entry_default: string;
  /** Files a scaffold of this template adds. */
  files: string[];
}

/** The four templates and what selects each one, in {@link TEMPLATE_IDS} order. */
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

/** The four deploy trigger patterns, in {@link PATTERN_IDS} order. */
export function listPatterns(): { id: PatternId; title: string; trigger: string; use: string }[] {
  return PATTERN_IDS.map((id) => PATTERNS[id]);
}
