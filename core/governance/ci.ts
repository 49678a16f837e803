/**
 * CI without a personal token (issue 20 item 6): what a tenant's policy says about GitHub Actions workflows that
 * deploy with a token exchanged for their OIDC ID token, and the verified run such a token carries.
 *
 * The run's claims are GitHub's own names (https://docs.github.com/actions/reference/security/oidc#oidc-token-claims):
 * pds keeps them, as verified, in the token it issues, and the door (`tools/ci.ts`) checks them against the tenant's
 * policy and the repository registrations on every call.
 */
import { z } from 'zod';

/** The events whose runs may deploy: a push (of a branch or tag) and a manual dispatch. */
export const CI_EVENTS = ['push', 'workflow_dispatch'] as const;

/**
 * A GitHub Actions run as its verified ID token describes it, kept in the pds token issued for it. Ids are decimal
 * text, as GitHub writes them in the token.
 */
export const GitHubActionsRun = z.object({
  repository: z.string().describe('"<owner>/<repo>", e.g. "acme/web"'),
  repository_id: z.string().regex(/^[0-9]{1,20}$/).describe('GitHub\'s id of the repository, e.g. "892543218"'),
  repository_owner: z.string().describe('Owner login, e.g. "acme"'),
  repository_owner_id: z.string().regex(/^[0-9]{1,20}$/).describe('GitHub\'s id of the owner, e.g. "1342004"'),
  ref: z.string().describe('The ref the run is for, e.g. "refs/heads/main" or "refs/tags/0.1.2"'),
  event_name: z.string().describe('The event that started the run, e.g. "push"'),
  run_id: z.string().regex(/^[0-9]{1,20}$/).describe('The run\'s id, e.g. "7104331"'),
  run_url: z.string().describe('The run\'s page, https://github.com/<owner>/<repo>/actions/runs/<run_id>'),
});
export type GitHubActionsRun = z.infer<typeof GitHubActionsRun>;

/** A ref or a ref pattern: `refs/…`, with `*` (within one path segment) and `**` (across segments). */
const RefPattern = z
  .string()
  .max(200)
  .regex(/^refs\/[A-Za-z0-9._/*+-]+$/, 'must be a ref or a ref pattern, e.g. "refs/heads/main" or "refs/tags/*"')
  .describe('A ref, or a pattern where * matches within one segment and ** across segments, e.g. "refs/tags/*"');

/** Whether GitHub Actions workflows may deploy with an exchanged OIDC token, and from which refs. */
export const CiPolicy = z
  .strictObject({
    githubOidc: z
      .boolean()
      .default(false)
      .describe('Accept tokens exchanged for GitHub Actions OIDC ID tokens of repositories registered to this tenant, e.g. true'),
    refs: z
      .array(RefPattern)
      .max(20)
      .default([])
      .describe('Refs whose push or workflow_dispatch runs may deploy, e.g. ["refs/heads/main", "refs/tags/*"]'),
  })
  .superRefine((ci, ctx) => {
    if (ci.githubOidc && ci.refs.length === 0) {
      ctx.addIssue({ code: 'custom', path: ['refs'], message: 'must name at least one ref when githubOidc is true, e.g. ["refs/heads/main"]' });
    }
  })
  .describe('CI without a personal token: GitHub Actions workflows deploy with their OIDC ID token (off unless githubOidc is true)');
export type CiPolicy = z.output<typeof CiPolicy>;

/**
 * Whether `ref` matches `pattern`, as GitHub's workflow filter patterns read `*` and `**`: `*` matches any characters
 * but `/`, `**` any characters. Nothing else is special. (Two wildcards, matched by a regular expression built from
 * escaped text; no glob library in pds's dependencies reads them this way without also reading `?`, `[…]` and `{…}`.)
 * @example refMatches('refs/tags/*', 'refs/tags/0.1.2') // true
 * @example refMatches('refs/heads/*', 'refs/heads/feature/x') // false
 */
export function refMatches(pattern: string, ref: string): boolean {
  const source = pattern
    .split('**')
    .map((part) => part.split('*').map((text) => text.replace(/[.+^${}()|[\]\\?]/g, '\\$&')).join('[^/]*'))
    .join('.*');
  return new RegExp(`^${source}$`).test(ref);
}

/**
 * Why the tenant's CI policy refuses `run`, or `undefined` when it allows it: the tenant must have opted in, the
 * event must be a push or a manual dispatch, and the ref one the policy lists.
 * @example ciPolicyRefusal({ githubOidc: true, refs: ['refs/heads/main'] }, run, 'acme')
 *   // 'ref refs/heads/dev of acme/web is not one tenant acme lets CI deploy from (refs/heads/main)'
 */
export function ciPolicyRefusal(ci: CiPolicy | undefined, run: GitHubActionsRun, team: string): string | undefined {
  if (!ci?.githubOidc) {
    return (
      `tenant ${team} does not accept GitHub Actions OIDC tokens: a tenant admin enables them with ` +
      '"ci": {"githubOidc": true, "refs": ["refs/heads/main"]} in the tenant policy (platform_set_tenant_policy)'
    );
  }
  if (!(CI_EVENTS as readonly string[]).includes(run.event_name)) {
    return `the run of ${run.repository} was started by a ${run.event_name} event; only ${CI_EVENTS.join(' and ')} runs may deploy`;
  }
  if (!ci.refs.some((pattern) => refMatches(pattern, run.ref))) {
    return `ref ${run.ref} of ${run.repository} is not one tenant ${team} lets CI deploy from (${ci.refs.join(', ')})`;
  }
  return undefined;
}
