/**
 * Turning zod issues into one caller-facing sentence that names each field and what is allowed
 * (house rule: "Bad input gets a clear error"). Used by invoke() for every tool, so REST (400) and MCP (`isError`)
 * say exactly the same thing.
 */
import { z } from 'zod';
import { InvalidParams } from '../core/errors.js';

// A missing required field reads "is required", not zod's "expected string, received undefined".
z.config({
  customError: (issue) => (issue.code === 'invalid_type' && issue.input === undefined ? 'is required' : undefined),
});

/** `field: problem; other: problem`, with unknown keys listed against the allowed ones. */
export function describeIssues(issues: readonly z.core.$ZodIssue[], allowedKeys: readonly string[] = []): string {
  const lines = issues.map((issue) => {
    if (issue.code === 'unrecognized_keys') {
      const allowed = allowedKeys.length ? `; allowed: ${allowedKeys.join(', ')}` : '';
      return `unknown parameter${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => `"${k}"`).join(', ')}${allowed}`;
    }
    const field = issue.path.length ? issue.path.join('.') : 'input';
    return `${field}: ${issue.message}`;
  });
  // A value can break two checks that say the same thing (a pattern and a range); say it once.
  return [...new Set(lines)].join('; ');
}

/**
 * Parse `input` with `schema`.
 * @returns the parsed (defaulted, coerced) value.
 * @throws InvalidParams `invalid parameters: <field>: <what is allowed>; …`.
 */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const result = schema.safeParse(input ?? {});
  if (result.success) return result.data;
  const keys = schema instanceof z.ZodObject ? Object.keys(schema.shape) : [];
  throw new InvalidParams(`invalid parameters: ${describeIssues(result.error.issues, keys)}`);
}
