/**
 * Validators for operation parameters (SPEC.md "Operation parameters seen in requests"): every value is a string,
 * and each rejection names what is allowed, with an example.
 */
import { z } from 'zod';
import { RepoFullName, SemVerTag, ServiceName, TeamName } from '../core/model.js';

export const TeamNameParam = TeamName.describe('Target tenant, a DNS label, e.g. "acme"');
export const ComponentNameParam = ServiceName.describe('Service name within the tenant, a DNS label, e.g. "web"');
export const GitTagParam = SemVerTag.describe('Git tag to build and deploy, SemVer X.Y.Z, e.g. "0.1.1"');
export const RepoParam = RepoFullName.describe('Repository holding the build file, "<owner>/<repo>", e.g. "acme/web"');

/** Container port as text, 1–65535. */
export const PortParam = z
  .string()
  .regex(/^[1-9]\d{0,4}$/, 'must be a port number 1-65535 as text, e.g. "8080"')
  .refine((p) => Number(p) <= 65535, 'must be a port number 1-65535 as text, e.g. "8080"')
  .describe('Container port the service listens on, as text, e.g. "8787"');

/** Longest preview lifetime: 30 days. */
export const MAX_TTL_HOURS = 720;

/** Preview lifetime as a whole number of hours, 1–720, as text. */
export const TtlHoursParam = z
  .string()
  .regex(/^[1-9]\d*$/, `must be a whole number of hours 1-${MAX_TTL_HOURS} as text, e.g. "24"`)
  .refine((h) => Number(h) <= MAX_TTL_HOURS, `must be at most ${MAX_TTL_HOURS} hours (30 days)`)
  .describe(`Preview lifetime in whole hours, 1-${MAX_TTL_HOURS}, as text, e.g. "24"`);

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

/**
 * `KEY=VALUE` entries separated by newlines (blank lines ignored). Keys are shell variable names; values may contain
 * `=`; a key may appear once.
 */
export const EnvVarsParam = z
  .string()
  .max(65536, 'must be at most 64 KiB')
  .superRefine((text, ctx) => {
    const seen = new Set<string>();
    const lines = text.split(/\r?\n/).filter((l) => l.trim() !== '');
    if (lines.length === 0) ctx.addIssue({ code: 'custom', message: 'must hold at least one KEY=VALUE line' });
    if (lines.length > MAX_ENV_VARS) ctx.addIssue({ code: 'custom', message: `must hold at most ${MAX_ENV_VARS} entries` });
    lines.forEach((line, i) => {
      const eq = line.indexOf('=');
      const key = eq < 0 ? line : line.slice(0, eq);
      if (eq < 0 || !ENV_KEY.test(key)) {
        ctx.addIssue({
          code: 'custom',
          message: `line ${i + 1} must be KEY=VALUE with KEY a variable name (letters, digits, "_", not starting with a digit), e.g. "LOG_LEVEL=info"`,
        });
      } else if (seen.has(key)) {
        ctx.addIssue({ code: 'custom', message: `line ${i + 1} repeats the key "${key}"` });
      } else {
        seen.add(key);
      }
    });
  })
  .describe('Environment of the service: KEY=VALUE entries separated by newlines, e.g. "LOG_LEVEL=info\\nFEATURE_X=on"');

/** Kubernetes quantity as text, e.g. `500m`, `4`, `8Gi`. */
export const QuantityParam = (example: string) =>
  z
    .string()
    .regex(/^\d+(\.\d+)?(m|k|M|G|T|Ki|Mi|Gi|Ti)?$/, `must be a Kubernetes quantity, e.g. "${example}"`);

/** A comma-separated list of user ids. */
export const UserListParam = z
  .string()
  .regex(/^[^,\s]+(\s*,\s*[^,\s]+)*$/, 'must be user ids separated by commas, e.g. "alice,bob@example.com"');
