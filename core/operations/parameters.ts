/**
 * Validators for operation parameters (`docs/api.md#operation-parameters`): every value is sent as a
 * string, and each rejection names what is allowed, with an example. They are the door: backends receive what these
 * produce and never check or parse a parameter again.
 */
import { parseMemberReference, USER_ID_FORMS } from '../identity.js';
import { z } from 'zod';
import { combinedNameProblem, RepoFullName, SemVerTag, ServiceName, TeamName } from '../model.js';

// Short: they are listed in every operation tool's schema, whose pattern already says "DNS label" (issue 11 byte budget).
export const TeamNameParam = TeamName.describe('Target tenant, e.g. "acme"');
export const ComponentNameParam = ServiceName.describe('Service in the tenant, e.g. "web"');
export const GitTagParam = SemVerTag.describe('Git tag to build and deploy, SemVer X.Y.Z, e.g. "0.1.1"');
export const RepoParam = RepoFullName.describe('Repository holding the build file, "<owner>/<repo>", e.g. "acme/web"');

/**
 * A parameter the contract carries as text that agents often send as a JSON number (`"port": 8080`, as the MCP Inspector
 * does): a finite number is taken as its decimal text and then checked like the text, so the value is recorded as
 * the contract's string (`"8080"`) and the messages stay those of `text`. The published schema is `text`'s.
 */
export function numberAsText<T extends z.ZodType<string, string>>(text: T) {
  return z.preprocess((value) => (typeof value === 'number' && Number.isFinite(value) ? String(value) : value), text);
}

/** Container port as text, 1–65535 (a number is accepted). */
export const PortParam = numberAsText(
  z
    .string()
    .regex(/^[1-9]\d{0,4}$/, 'must be a port number 1-65535, e.g. "8080"')
    .refine((p) => Number(p) <= 65535, 'must be a port number 1-65535, e.g. "8080"'),
).describe('Container port the service listens on, e.g. "8787"');

/** Longest preview lifetime: 30 days. */
export const MAX_TTL_HOURS = 720;

/** Preview lifetime as a whole number of hours, 1–720, as text (a number is accepted). */
export const TtlHoursParam = numberAsText(
  z
    .string()
    .regex(/^[1-9]\d*$/, `must be a whole number of hours 1-${MAX_TTL_HOURS}, e.g. "24"`)
    .refine((h) => Number(h) <= MAX_TTL_HOURS, `must be at most ${MAX_TTL_HOURS} hours (30 days)`),
).describe(`Preview lifetime in whole hours, 1-${MAX_TTL_HOURS}, e.g. "24"`);

/** An absolute URL path for probes, e.g. `/healthz`. */
export const HealthCheckPathParam = z
  .string()
  .max(200, 'must be at most 200 characters')
  .regex(/^\/[A-Za-z0-9._~!$&'()*+,;=:@/-]*$/, 'must be an absolute URL path starting with "/", e.g. "/healthz"')
  .describe('Liveness and readiness probe path when it is not /healthz, e.g. "/api/health"');

/** A repository-relative file path without `..`. */
export const RelativePathParam = z
  .string()
  .max(300, 'must be at most 300 characters')
  .regex(/^(?!\/)(?!.*(^|\/)\.\.(\/|$))[A-Za-z0-9._/-]+$/, 'must be a path inside the repository, e.g. "docker/Dockerfile"')
  .describe('Build file location when not at the repository root, e.g. "docker/Dockerfile"');

const ENV_KEY = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** Most entries accepted in one `env_vars`. */
export const MAX_ENV_VARS = 200;

/** One environment variable of a service. `value` is a secret: it is never audited, logged or echoed. */
export interface EnvVar {
  key: string;
  value: string;
}

/**
 * `KEY=VALUE` entries separated by newlines; blank lines and `#` comment lines are ignored (a `.env` file can be
 * pasted as it is). Keys are shell variable names; values may contain `=` and are taken as written, after the first
 * `=`; a key may appear once. Validated text becomes the list of {@link EnvVar}s, in the order given: the only place
 * `env_vars` is ever parsed. Line numbers in messages count every line of the text, from 1.
 */
export const EnvVarsParam = z
  .string()
  .max(65536, 'must be at most 64 KiB')
  .superRefine((text, ctx) => {
    const seen = new Set<string>();
    const entries = envEntries(text);
    if (entries.length === 0) ctx.addIssue({ code: 'custom', message: 'must hold at least one KEY=VALUE line' });
    if (entries.length > MAX_ENV_VARS) ctx.addIssue({ code: 'custom', message: `must hold at most ${MAX_ENV_VARS} entries` });
    for (const { line, number } of entries) {
      const eq = line.indexOf('=');
      const key = eq < 0 ? line : line.slice(0, eq);
      if (eq < 0 || !ENV_KEY.test(key)) {
        ctx.addIssue({
          code: 'custom',
          message: `line ${number} must be KEY=VALUE with KEY a variable name (letters, digits, "_", not starting with a digit), e.g. "LOG_LEVEL=info"`,
        });
      } else if (seen.has(key)) {
        ctx.addIssue({ code: 'custom', message: `line ${number} repeats the key "${key}"` });
      } else {
        seen.add(key);
      }
    }
  })
  .transform((text): EnvVar[] =>
    envEntries(text).map(({ line }) => {
      const eq = line.indexOf('=');
      return { key: line.slice(0, eq), value: line.slice(eq + 1) };
    }),
  )
  .describe('Environment of the service: KEY=VALUE entries separated by newlines, e.g. "LOG_LEVEL=info\\nFEATURE_X=on"');

/** The entry lines of `env_vars` text with their 1-based line numbers: blank and `#` lines skipped, `\r` dropped. */
function envEntries(text: string): { line: string; number: number }[] {
  return text
    .split(/\r?\n/)
    .map((line, i) => ({ line, number: i + 1 }))
    .filter(({ line }) => line.trim() !== '' && !line.trimStart().startsWith('#'));
}

/**
 * The form in which `env_vars` is recorded (audit, workflow records, logs): keys kept, values replaced by `***`.
 * @example redactEnvVars([{ key: 'API_KEY', value: 's3cret' }]) // 'API_KEY=***'
 */
export function redactEnvVars(vars: readonly EnvVar[]): string {
  return vars.map((v) => `${v.key}=***`).join('\n');
}

/**
 * An operation's parameters as strings: how the audit trail, workflow records and Argo Workflow arguments carry them.
 * Absent values are left out; a parameter named in `secretNames` becomes what `secret` makes of it, or is left out
 * when `secret` is not given.
 * @example parameterStrings({ team_name: 'acme', port: 8080, env_vars: [{ key: 'K', value: 'v' }] }, ['env_vars'])
 * // { team_name: 'acme', port: '8080' }
 */
export function parameterStrings(
  params: object,
  secretNames: readonly string[] = [],
  secret?: (value: unknown) => string,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(params)) {
    if (value === undefined) continue;
    if (!secretNames.includes(name)) out[name] = String(value);
    else if (secret) out[name] = secret(value);
  }
  return out;
}

/** Kubernetes quantity as text, e.g. `500m`, `4`, `8Gi` (a number is accepted: `4`, `0.5`). */
export const QuantityParam = (example: string) =>
  numberAsText(z.string().regex(/^\d+(\.\d+)?(m|k|M|G|T|Ki|Mi|Gi|Ti)?$/, `must be a Kubernetes quantity, e.g. "${example}"`));

/** A count as text, e.g. a pod quota `20` (a number is accepted). */
export const CountParam = numberAsText(z.string().regex(/^[1-9]\d{0,4}$/, 'must be a whole number 1-99999, e.g. "20"'));

/**
 * A comma-separated list of user ids; becomes the ids in order, each once. Each is read by the identity grammar
 * (`core/identity.ts`): a prefixed reference (`group:…`) is named as not accepted here, any other text that is no user
 * id is refused.
 */
export const UserListParam = z
  .string()
  .regex(/^[^,\s]+(\s*,\s*[^,\s]+)*$/, 'must be user ids separated by commas, e.g. "alice,bob@example.com"')
  .transform((text) => [...new Set(text.split(',').map((id) => id.trim()))])
  .superRefine((ids, ctx) => {
    for (const id of ids) {
      const reference = parseMemberReference(id);
      if (reference?.kind === 'user') continue;
      ctx.addIssue({
        code: 'custom',
        message: reference
          ? `"${id}" is a ${reference.kind} reference; tenant members are people: ${USER_ID_FORMS}`
          : `"${id}" is not a user id: each must be ${USER_ID_FORMS}`,
      });
    }
  });

/**
 * A `when` for object refinements (zod 4 runs a refinement only on an input without issues by default): run it when
 * none of `fields` has an issue, so its findings are reported together with every other field's instead of on the
 * next call ("report every missing field at once").
 * @example z.strictObject({…}).superRefine(check, whenValid('action'))
 */
export function whenValid(...fields: string[]): { when: (payload: { issues: readonly { path?: readonly PropertyKey[] }[] }) => boolean } {
  return { when: (payload) => !payload.issues.some((issue) => fields.includes(String(issue.path?.[0] ?? ''))) };
}

/**
 * A refinement for parameters that name a service: `<team>-<service>` must fit one DNS label (it names the Argo CD
 * Application and the host). Reports on `component_name`. Pair it with `whenValid('team_name', 'component_name')`.
 */
export function checkCombinedName(value: { team_name: string; component_name: string }, ctx: z.RefinementCtx): void {
  const problem = combinedNameProblem(value.team_name, value.component_name);
  if (problem) ctx.addIssue({ code: 'custom', message: problem, path: ['component_name'] });
}

/** `whenValid('team_name', 'component_name')`: where {@link checkCombinedName} may run. */
export const NAMES_VALID = whenValid('team_name', 'component_name');
