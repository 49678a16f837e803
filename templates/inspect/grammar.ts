/**
 * The grammars a value taken from a repository must fit before it reaches a generated file (issue 17 item 4): a Go
 * package path, a Python module path, a script path, a probe path, a PEP 508 requirement. A value that does not fit is refused
 * with an {@link InvalidParams} naming the file it came from and the value (JSON-quoted, so a newline shows as
 * `\n`), never repaired: a repaired name would build something other than what the repository holds.
 */
import { InvalidParams } from '../../core/errors.js';

/** One element of a directory path a Go package lives in (Go's import path elements, without `..`). */
export const GO_PATH_ELEMENT = /^[A-Za-z0-9_][A-Za-z0-9_.-]*$/;
/** A Python identifier, ASCII only (what `import a.b` and uvicorn's `module:attribute` accept without surprise). */
export const PYTHON_IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** `<module>:<app>`, e.g. `app.main:app`. */
export const PYTHON_APP = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*:[A-Za-z_][A-Za-z0-9_]*$/;
/** A relative file path of letters, digits and `._@-`, segments separated by `/`, no `.` or `..` segment. */
export const RELATIVE_PATH = /^(?!\.{1,2}(\/|$))[A-Za-z0-9_@][A-Za-z0-9_.@-]*(\/(?!\.{1,2}(\/|$))[A-Za-z0-9_@][A-Za-z0-9_.@-]*)*$/;
/**
 * An HTTP probe path: `/` then letters, digits and `._~/-`, at most 200 characters, e.g. `/health`. It is written
 * into the image HEALTHCHECK's shell command, so nothing that means something to a shell (`;`, `&`, `$`, quotes,
 * spaces) fits.
 */
export const HEALTH_PATH = /^\/[A-Za-z0-9._~/-]{0,199}$/;
/**
 * A PEP 508 requirement as pip reads it (https://peps.python.org/pep-0508/): a name, then extras, versions, markers
 * or `@ url`, in printable ASCII without the characters that mean something to a shell, YAML or a GitHub Actions
 * expression (`$`, backtick, `\`, `{`, `}`, `|`, `<` is allowed as a version operator). It starts with a letter or
 * digit, so it can never be a pip option (`--index-url=…`).
 */
export const PEP508_REQUIREMENT = /^[A-Za-z0-9][A-Za-z0-9 ._\-[\],<>=!~;:@/+*'"()#?&%]*$/;

/**
 * The value when it fits the grammar.
 * @param file the repository file the value came from, e.g. `pyproject.toml` or `cmd/api/main.go`.
 * @param what what the value is, e.g. `Go package directory`.
 * @param allowed the grammar in words, e.g. `letters, digits and ._-`.
 * @param remedy what the caller can do instead, e.g. `rename it, or pass entry to choose another`.
 * @throws InvalidParams `<file>: <what> "<value>" is not allowed: must be <allowed>`.
 */
export function fitting(file: string, what: string, value: string, grammar: RegExp, allowed: string, remedy = 'rename it, or pass entry to choose another'): string {
  if (value.length <= 200 && grammar.test(value)) return value;
  throw new InvalidParams(`${JSON.stringify(file).slice(1, -1)}: ${what} ${JSON.stringify(value)} is not allowed: it must be ${allowed}; ${remedy}.`);
}
