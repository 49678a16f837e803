/**
 * The CLI speaks `pds` commands, not REST: the server's messages name the next call as a REST request (e.g.
 * `POST /api/v1/repos/grant-access {"team_name":"acme","repo":"acme/web"}`, `tools/door.ts`). {@link cliWords}
 * rewrites the requests this table knows into the `pds` command that makes them; anything else is left as it is.
 */

/** Body of a REST request as the server writes it (a flat JSON object), or `{}`. */
const body = (json: string | undefined): Record<string, string> => {
  try {
    return json ? (JSON.parse(json) as Record<string, string>) : {};
  } catch {
    return {};
  }
};

/** `team/app` of a body's `team_name` and `component_name`. */
const target = (b: Record<string, string>) => `${b.team_name ?? 'TEAM'}/${b.component_name ?? 'APP'}`;

/** An operation's execute request → the `pds` command that submits it. */
const OPERATIONS: Record<string, (b: Record<string, string>) => string> = {
  'create-tenant': (b) => `pds tenants create ${b.team_name ?? 'TEAM'}`,
  'deploy-service': (b) =>
    `pds deploy ${target(b)}${b.action === 'onboard' ? ' --onboard' : ''}${b.git_tag ? ` --tag ${b.git_tag}` : ' --tag X.Y.Z'}${b.dockerfile_repo ? ` --repo ${b.dockerfile_repo}` : ''}${b.port ? ` --port ${b.port}` : ''}`,
  'rollback-service': (b) => `pds rollback ${target(b)} --to ${b.target_tag ?? 'X.Y.Z'}`,
  'preview-deploy': (b) => `pds previews create ${target(b)} --tag ${b.image_tag ?? 'X.Y.Z'}`,
  'preview-delete': (b) => `pds previews delete ${target(b)} --tag ${b.image_tag ?? 'X.Y.Z'}`,
  'retire-service': (b) => `pds retire ${target(b)}`,
};

const JSON_BODY = String.raw`(?: (\{[^{}]*\}))?`;
const SEGMENT = String.raw`([^/\s?"]+)`;
const QUERY = String.raw`(?:\?[^\s,;)]*)?`;

/** REST request (as the server names it) → the `pds` command; the one table of these translations. */
const REST_TO_CLI: [RegExp, (...groups: string[]) => string][] = [
  [new RegExp(String.raw`POST /api/v1/repos/grant-access${JSON_BODY}`, 'g'), (json) => { const b = body(json); return `pds repos grant ${b.team_name ?? 'TEAM'} ${b.repo ?? 'OWNER/REPO'}`; }],
  [new RegExp(String.raw`POST /api/v1/repos/sync${JSON_BODY}`, 'g'), (json) => `pds repos sync ${body(json).team ?? 'TEAM'}`],
  [new RegExp(String.raw`POST /api/v1/operations/${SEGMENT}/execute${JSON_BODY}`, 'g'), (op, json) => OPERATIONS[op!]?.(body(json)) ?? `POST /api/v1/operations/${op}/execute${json ? ` ${json}` : ''}`],
  [new RegExp(String.raw`GET /api/v1/workflows/${SEGMENT}${QUERY}`, 'g'), (name) => `pds wait ${name}`],
  [new RegExp(String.raw`GET /api/v1/workflows${QUERY}`, 'g'), () => 'pds workflows'],
  [new RegExp(String.raw`GET /api/v1/repos\?team=${SEGMENT}`, 'g'), (team) => `pds repos --team ${team}`],
  [new RegExp(String.raw`GET /api/v1/status/${SEGMENT}/${SEGMENT}`, 'g'), (team, app) => `pds status ${team}/${app}`],
  [new RegExp(String.raw`GET /api/v1/logs/${SEGMENT}/${SEGMENT}${QUERY}`, 'g'), (team, app) => `pds logs ${team}/${app}`],
  [new RegExp(String.raw`GET /api/v1/services\?team=${SEGMENT}`, 'g'), (team) => `pds services --team ${team}`],
  [new RegExp(String.raw`GET /api/v1/services/${SEGMENT}/${SEGMENT}`, 'g'), (team) => `pds services --team ${team}`],
  [new RegExp(String.raw`GET /api/v1/tenants(?![/\w])`, 'g'), () => 'pds tenants'],
];

/**
 * `message` with every REST request it names that has a `pds` command rewritten as that command.
 * @example cliWords('Register it: POST /api/v1/repos/grant-access {"team_name":"acme","repo":"acme/web"}, …')
 *   // 'Register it: pds repos grant acme acme/web, …'
 */
export function cliWords(message: string): string {
  return REST_TO_CLI.reduce((text, [pattern, cli]) => text.replace(pattern, (_m, ...groups) => cli(...(groups.slice(0, -2) as string[]))), message);
}

/**
 * `message` with the operation parameters it names (`git_tag: must be …`) rewritten as the command's flags (`--tag:
 * must be …`).
 * @param flags parameter → flag, e.g. `{ git_tag: '--tag' }` (see `flagsOf` in `bin/client/command.ts`).
 */
export function flagWords(message: string, flags: Record<string, string>): string {
  return Object.entries(flags).reduce((text, [param, flag]) => text.replace(new RegExp(String.raw`(?<![\w-])${param}(?![\w-])`, 'g'), flag), message);
}
