/**
 * Repository scaffolding (`docs/api.md#scaffolding-templates`, "Deploy triggers", "CI deploy job",
 * "First-time onboarding sequence"), as the `platform_scaffold_repository` / `platform_list_templates` tools and
 * `pds scaffold` use it. Nothing here touches a repository: it returns text; callers decide whether to write it.
 *
 * | file | concept |
 * |---|---|
 * | `parameters.ts` | the caller's values, validated once at the door |
 * | `catalog.ts` | the four templates and four deploy patterns |
 * | `repo.ts`, `detect.ts` | the repository as scaffolding sees it; which template fits |
 * | `inspect/<language>.ts` | what each template reads from the repository |
 * | `inspect/routes.ts` | the health route the app's source declares |
 * | `scaffold.ts` | the pipeline: detect, inspect, render |
 * | `checklist.ts` | onboarding parameters and the steps left to the team |
 */
export { DEPENDABOT_PATH, PATTERNS, PATTERN_IDS, TEMPLATES, TEMPLATE_IDS, WORKFLOW_PATH, listPatterns, listTemplates } from './catalog.js';
export type { PatternId, TemplateId, TemplateInfo, TemplateSummary } from './catalog.js';
export type { ChecklistItem, OnboardingParameters } from './checklist.js';
export { toServiceName } from './component.js';
export { detectTemplate } from './detect.js';
export type { Candidate, Detection } from './detect.js';
export { pythonEntryCandidates } from './inspect/python.js';
export { routeSourceCandidates } from './inspect/routes.js';
export { BaseUrlParam, EntryParam, PatternParam, ScaffoldHealthCheckPath, ScaffoldParameters, TemplateParam } from './parameters.js';
export { MANIFESTS, normalizePath } from './repo.js';
export type { RepoSnapshot } from './repo.js';
export { scaffold } from './scaffold.js';
export type { CiAuth, ScaffoldFile, ScaffoldOptions, ScaffoldPlan } from './scaffold.js';
