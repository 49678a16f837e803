/**
 * Failures of the `pds` command for people, with the exit code each means: 1 the server refused or an operation
 * failed, 2 a usage error (also commander's own), 3 not signed in (run `pds login`), 4 `pds wait` timed out.
 */

/** Exit codes of `pds`. */
export const EXIT = { ok: 0, failed: 1, usage: 2, signedOut: 3, timedOut: 4 } as const;

/** An error whose message is for the person and whose `exitCode` the process ends with. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number = EXIT.failed,
  ) {
    super(message);
    this.name = 'CliError';
  }
}

/** A command used wrongly (exit 2). */
export function usageError(message: string): CliError {
  return new CliError(message, EXIT.usage);
}
