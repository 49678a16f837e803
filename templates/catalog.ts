/**
 * The scaffolding catalogue: the four repository templates and the four deploy trigger patterns of SPEC.md
 * ("Scaffolding templates by repository content", "Deploy triggers"). Pure data; rendering is in `render.ts`.
 */

/** Template ids, as callers pass them in `template`. */
export const TEMPLATE_IDS = ['javascript', 'python', 'go', 'static'] as const;
export type TemplateId = (typeof TEMPLATE_IDS)[number];

/** Deploy trigger pattern ids, as callers pass them in `pattern`. */
export const PATTERN_IDS = ['continuous', 'tag', 'manual', 'hybrid'] as const;
export type PatternId = (typeof PATTERN_IDS)[number];

/** What a template is and what the platform needs to know about it at onboarding. */
export interface TemplateInfo {
  id: TemplateId;
  title: string;
  /** The repository content that selects it (SPEC table). */
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

/** The four templates (SPEC.md "Scaffolding templates by repository content" and its port table). */
export const TEMPLATES: Record<TemplateId, TemplateInfo> = {
  javascript: {
    id: 'javascript',
    title: 'JavaScript server',
    detectedBy: ['package.json', 'server.js', 'index.js'],
    port: '8787',
    portFromEnv: true,
    healthPath: '/healthz',
    entry: { meaning: 'entry script run with node (from package.json "scripts.start" or "main" when found)', default: 'server.js' },
    files: ['Dockerfile', '.dockerignore', '.github/workflows/ci.yml'],
  },
  python: {
    id: 'python',
    title: 'Python ASGI server',
    detectedBy: ['pyproject.toml', 'requirements.txt'],
    port: '8000',
    portFromEnv: true,
    healthPath: '/healthz',
    entry: { meaning: 'ASGI application as <module>:<app>, served by uvicorn on 0.0.0.0', default: 'main:app' },
    files: ['Dockerfile', '.dockerignore', '.github/workflows/ci.yml'],
  },
  go: {
    id: 'go',
    title: 'Go server',
    detectedBy: ['go.mod'],
    port: '8080',
    portFromEnv: true,
    healthPath: '/healthz',
    entry: { meaning: 'Go package path of the server built into a static binary', default: './cmd/server' },
    files: ['Dockerfile', '.dockerignore', '.github/workflows/ci.yml'],
  },
  static: {
    id: 'static',
    title: 'Static single-page app (nginx)',
    detectedBy: ['dist/index.html', 'package.json building a single-page app into dist/'],
    port: '8080',
    portFromEnv: false,
    healthPath: '/',
    entry: { meaning: 'build output directory served by nginx, with /index.html for unknown paths', default: 'dist' },
    files: ['Dockerfile', '.dockerignore', 'nginx.conf', '.github/workflows/ci.yml'],
  },
};

/** The deploy trigger patterns (SPEC.md "Deploy triggers"). */
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
