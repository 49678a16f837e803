/**
 * What the team does after scaffolding (`docs/api.md#first-time-onboarding-sequence`): the parameters of the onboard
 * call, and the checklist of steps by hand, in order, then what the scaffold had to assume. Prose for people and
 * agents; the item `id`s are stable.
 */
import { serviceHost } from '../core/names.js';
import { TEMPLATES, WORKFLOW_PATH, type PatternId, type TemplateId } from './catalog.js';
import type { Note } from './inspect/note.js';

/** Parameters of `platform_deploy_service` with `action=onboard` (`docs/api.md#first-time-onboarding-sequence`, step 4). */
export interface OnboardingParameters {
  action: 'onboard';
  team_name: string;
  component_name: string;
  /** `<owner>/<repo>`, when known. */
  dockerfile_repo?: string;
  /** The first tag to create and deploy, always `0.1.0`. */
  git_tag: string;
  /** The template's container port, as text, e.g. `8787`. */
  port: string;
  service_template: string;
  /** Only when the caller chose a probe path other than the template's. */
  health_check_path?: string;
}

/** One thing the team still does by hand; `id` is stable, e.g. `secret`, `first-tag`, `onboard`. */
export interface ChecklistItem {
  id: string;
  text: string;
}

/** What {@link onboardingChecklist} writes about. */
export interface ChecklistInput {
  template: TemplateId;
  pattern: PatternId;
  team: string;
  component: string;
  /** `<owner>/<repo>`; `<owner>/<repo>` is written as a placeholder when unknown. */
  dockerfileRepo?: string;
  /** The probe path in use (the caller's or the template's). */
  healthPath: string;
  onboarding: OnboardingParameters;
  /** Service domain (`PDS_DOMAIN`); `<domain>` is written as a placeholder when unknown. */
  domain?: string;
  /** What the template's inspector assumed; each becomes one item at the end. */
  notes: Note[];
  /** Paths of scaffolded files the repository already has. */
  existing: string[];
  /** The deploy job authenticates with the run's GitHub Actions OIDC ID token instead of a PAT secret. */
  oidc?: boolean;
}

/**
 * The `pds deploy` command line of the onboard call (bin/commands/deploy.ts), e.g.
 * `pds deploy acme/web --onboard --port 8787 --tag 0.1.0 --repo acme/web`. Every value fits a grammar with no shell
 * metacharacter (team and service names, `<owner>/<repo>`, a port, a tag, a probe path of `[A-Za-z0-9._~/-]`), so the
 * line is pasted as is; only the `<owner>/<repo>` placeholder, when the repository is unknown, must be replaced.
 */
export function onboardCommand(o: OnboardingParameters, repo: string): string {
  const args = ['pds', 'deploy', `${o.team_name}/${o.component_name}`, '--onboard', '--port', o.port, '--tag', o.git_tag, '--repo', o.dockerfile_repo ?? repo];
  if (o.service_template !== 'default') args.push('--template', o.service_template);
  if (o.health_check_path !== undefined) args.push('--health-check-path', o.health_check_path);
  return args.join(' ');
}

/**
 * `docs/api.md#first-time-onboarding-sequence` as concrete steps (`existing-files` when some, `commit`, `secret`,
 * `health-endpoint`, `listen-port` for servers that read PORT, `repo-access`, `first-tag`, `onboard`, `verify`,
 * `next-deploys`, `health-check-path` when the caller chose one), then one item per {@link Note}.
 */
export function onboardingChecklist(c: ChecklistInput): ChecklistItem[] {
  const info = TEMPLATES[c.template];
  const repo = c.dockerfileRepo ?? '<owner>/<repo>';
  const files = info.files.join(', ');
  const items: ChecklistItem[] = [];
  if (c.existing.length) {
    items.push({ id: 'existing-files', text: `The repository already has ${c.existing.join(', ')}: compare before replacing; onboarding needs a Dockerfile at the root and a "deploy" job in ${WORKFLOW_PATH}.` });
  }
  if (c.oidc) {
    items.push({ id: 'commit', text: `Commit ${files} to main.` });
    items.push({
      id: 'ci-oidc',
      text: `No secret: the deploy job exchanges its GitHub Actions OIDC ID token for a 10-minute pds token (permissions: id-token: write). Tenant ${c.team}'s policy accepts it ("ci": {"githubOidc": true}) for the refs it lists; the job may only deploy services built from ${repo}.`,
    });
  } else {
  items.push({
    id: 'commit',
    text: `Commit ${files} to main. Until the secret below exists the deploy job skips itself with a warning, so CI stays green.`,
  });
  items.push({
    id: 'secret',
    text: 'Create a classic personal access token with scope read:user (https://github.com/settings/tokens/new?scopes=read:user) and store it as the repository secret PLATFORM_GITHUB_TOKEN (Settings > Secrets and variables > Actions, or "gh secret set PLATFORM_GITHUB_TOKEN"). The deploy job authenticates to pds with it.',
  });
  }
  if (c.template === 'static') {
    items.push({ id: 'health-endpoint', text: `The image health check requests GET ${c.healthPath} on 127.0.0.1:8080; nginx answers it from the build output without authentication.` });
  } else {
    items.push({
      id: 'health-endpoint',
      text: `The app must answer GET ${c.healthPath} with HTTP 200 and a JSON object {"ok": true}, and exempt it (and /readyz if it has one) from authentication middleware: the platform's liveness and readiness probes send no Authorization header, and a 401 makes the pod restart over and over.`,
    });
  }
  if (c.template === 'javascript' || c.template === 'go') {
    items.push({ id: 'listen-port', text: `The server must listen on 0.0.0.0 at the port in the PORT environment variable (the image sets ${info.port}).` });
  }
  items.push({
    id: 'repo-access',
    text: `If the platform cannot see ${repo}: call platform_grant_repo_access with team_name=${c.team} and repo=${repo}, open the URL it returns and install the app, then call platform_sync_repos with team=${c.team}.`,
  });
  items.push({ id: 'first-tag', text: 'Tag the commit to deploy first and push the tag: git tag -a 0.1.0 -m "Release 0.1.0" && git push origin 0.1.0' });
  items.push({
    id: 'onboard',
    text: `Onboard the service: ${onboardCommand(c.onboarding, repo)} (the pds CLI), or call platform_deploy_service with ${JSON.stringify({ ...c.onboarding, dockerfile_repo: c.onboarding.dockerfile_repo ?? repo })} (MCP).`,
  });
  const host = serviceHost(c.team, c.component, c.domain ?? '<domain>');
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
