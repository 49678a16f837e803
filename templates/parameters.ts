/**
 * The rules for what a caller asks of scaffolding, one per field with one message, checked once at the door: the
 * `platform_scaffold_repository` tool builds its input schema from these fields (adding only descriptions), and
 * `pds scaffold` parses its options with {@link ScaffoldParameters}. `scaffold()` receives what they produce and
 * checks none of it again.
 *
 * What depends on the repository is decided later, by scaffolding itself: which template fits, what `entry` must look
 * like for that template (a script, `<module>:<app>`, a Go package, a directory), the service name when none is
 * given, and the `<team>-<service>` length once that name is known.
 */
import { z } from 'zod';
import { RepoFullName, ServiceName, TeamName } from '../core/model.js';
import { PATTERN_IDS, TEMPLATE_IDS } from './catalog.js';

/** A template id, e.g. `static`. */
export const TemplateParam = z.enum(TEMPLATE_IDS, { error: `must be one of ${TEMPLATE_IDS.join(', ')}` });

/** A deploy trigger pattern id (`docs/api.md#deploy-triggers`), e.g. `tag`. */
export const PatternParam = z.enum(PATTERN_IDS, { error: `must be one of ${PATTERN_IDS.join(', ')}` });

/**
 * The probe path, at most 200 characters. Narrower than the onboarding operation's `health_check_path`: it is written
 * into the image's HEALTHCHECK shell command, so shell metacharacters (`;`, `&`, `$`, quotes) are refused.
 */
export const ScaffoldHealthCheckPath = z
  .string()
  .regex(/^\/[A-Za-z0-9._~/-]*$/, 'must be an absolute path of letters, digits and ._~/- , e.g. "/health"') // HEALTH_PATH in inspect/grammar.ts, for detected routes
  .max(200, 'must be at most 200 characters');

/**
 * What the image starts, 1–200 characters. Its form depends on the template (checked by that template's inspector in
 * `inspect/`, once the template is known).
 */
export const EntryParam = z.string().min(1, 'must not be empty').max(200, 'must be at most 200 characters');

const BASE_URL_RULE = 'must be an http(s) URL without query, fragment or credentials, e.g. "https://pds.example.com"';

/** The pds address the deploy job calls: an absolute http(s) URL with no query, fragment or credentials. */
export const BaseUrlParam = z.url({ error: 'must be an absolute URL, e.g. "https://pds.example.com"' }).refine((raw) => {
  // zod runs this after a failed URL check too; that failure is already reported.
  if (!URL.canParse(raw)) return true;
  const url = new URL(raw);
  // Credentials would be written into a committed workflow file; a query or fragment would break the paths appended.
  return (url.protocol === 'https:' || url.protocol === 'http:') && !url.search && !url.hash && !url.username && !url.password;
}, BASE_URL_RULE);

/**
 * Everything a caller may ask of scaffolding besides the repository itself, as the tool names it (snake_case).
 * Output: the values with `pattern` defaulted to `continuous`.
 * @example
 * ScaffoldParameters.parse({ team_name: 'acme', pattern: 'tag', base_url: 'https://pds.example.com' });
 * // { team_name: 'acme', pattern: 'tag', base_url: 'https://pds.example.com' }
 */
export const ScaffoldParameters = z.object({
  team_name: TeamName,
  component_name: ServiceName.optional(),
  dockerfile_repo: RepoFullName.optional(),
  template: TemplateParam.optional(),
  pattern: PatternParam.default('continuous'),
  health_check_path: ScaffoldHealthCheckPath.optional(),
  entry: EntryParam.optional(),
  base_url: BaseUrlParam.optional(),
});

/** {@link ScaffoldParameters} after parsing: valid, with `pattern` defaulted. */
export type ScaffoldParameters = z.output<typeof ScaffoldParameters>;
