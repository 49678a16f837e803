/**
 * What must never appear in a log (issue 13 §1): bearer tokens (JWTs, GitHub tokens), `Authorization` values,
 * confirmation values and service environment values. Used by the run-wide scan (`test/helpers/run-log.ts`, read by
 * `test/ops/run-log-scan.test.ts`) and by `test/ops/logging.test.ts`.
 */

/** Shapes of secrets, each with what it is. */
export const SECRET_SHAPES: { what: string; pattern: RegExp }[] = [
  { what: 'a JWT', pattern: /eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/ },
  { what: 'a GitHub token', pattern: /\bgh[pousr]_[A-Za-z0-9]{20,}/ },
  // "Bearer realm=…" (a challenge) and "Bearer <token>" (a hint) are not credentials.
  { what: 'a bearer credential', pattern: /Bearer\s+(?!realm\b|<|\[redacted\])[A-Za-z0-9._~+/=-]{12,}/i },
  { what: 'an Authorization header value', pattern: /"authorization":\s*"(?!\[redacted\])/i },
  { what: 'a confirmation value', pattern: /\b\d{10}\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]{43}\b/ },
  { what: 'service environment values', pattern: /"env_vars":\s*(?!"\[redacted\]"|"[^"]*=\*\*\*)/ },
];

/** One finding: the line number (1-based), what was found, and the line with the match masked. */
export interface SecretFinding {
  line: number;
  what: string;
  excerpt: string;
}

/**
 * Every secret in `text` (a log, one JSON object per line): the shapes above, and each of `known` (exact values a
 * test used, e.g. an env value or a metrics token).
 */
export function findSecrets(text: string, known: string[] = []): SecretFinding[] {
  const findings: SecretFinding[] = [];
  const lines = text.split('\n');
  lines.forEach((content, index) => {
    for (const { what, pattern } of SECRET_SHAPES) {
      const match = pattern.exec(content);
      if (match) findings.push({ line: index + 1, what, excerpt: mask(content, match.index, match[0].length) });
    }
    for (const value of known) {
      const at = content.indexOf(value);
      if (value && at >= 0) findings.push({ line: index + 1, what: 'a value the test marked secret', excerpt: mask(content, at, value.length) });
    }
  });
  return findings;
}

function mask(line: string, at: number, length: number): string {
  const from = Math.max(0, at - 80);
  return `${line.slice(from, at)}«${length} secret characters»${line.slice(at + length, at + length + 80)}`;
}
