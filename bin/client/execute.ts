/**
 * Running an operation from the CLI (`POST /api/v1/operations/{name}/execute`) and saying what was submitted: the
 * workflow name, and how to follow it (`pds wait`, on stderr so piped JSON stays the API's body) — or, with `--wait`,
 * following it at once as `pds wait` does (same lines, same exit codes).
 */
import { Option, type Command } from 'commander';
import { waitForWorkflow, timeoutSeconds } from '../commands/wait.js';
import { ApiError, callApi } from './api.js';
import { contextOf, flagsOf } from './command.js';
import { forPeople, print, type Format } from './output.js';
import type { Session } from './session.js';
import { cliWords, flagWords } from './words.js';

/** The execute answer (`docs/api.md#operations`). */
export interface Submitted {
  workflowName: string;
  operation: string;
  status: string;
  message: string;
}

/**
 * Execute `operation` with `parameters` (strings, as the API takes them) and print the answer.
 * @param options.quiet print nothing on stdout (a `--wait` with `-o json|yaml` prints the settled workflow instead).
 * @throws ApiError as the server refuses (400 with the reason, 403, 404, 429).
 */
export async function executeOperation(
  session: Session,
  format: Format,
  operation: string,
  parameters: Record<string, string | undefined>,
  options: { quiet?: boolean } = {},
): Promise<Submitted> {
  const body = Object.fromEntries(Object.entries(parameters).filter(([, v]) => v !== undefined));
  const submitted = await callApi<Submitted>(session, 'POST', `/api/v1/operations/${encodeURIComponent(operation)}/execute`, body);
  if (!options.quiet) {
    print(format, submitted, (s: Submitted) => ({ head: ['workflow', 'operation', 'status', 'message'], rows: [[s.workflowName, s.operation, s.status, cliWords(s.message)]] }));
  }
  return submitted;
}

/** `--wait` and `--timeout` on a command that submits a workflow; a bad `--timeout` is a usage error before anything is sent. */
export function withWait(command: Command): Command {
  return command
    .option('--wait', 'follow the workflow until it settles, as pds wait does (exit 0 if it succeeded)')
    .addOption(new Option('--timeout <duration>', 'with --wait: give up after this long (exit 4), e.g. 10m').default('30m'))
    .hook('preAction', (self, actionCommand) => {
      if (actionCommand === self) timeoutSeconds(self.opts<{ timeout: string }>().timeout);
    });
}

/**
 * Submit `operation` for `command`'s invocation: its session and format, its `--wait`; a refusal's parameter names
 * rewritten as the command's flags (`git_tag` → `--tag`), after its REST hints became `pds` commands (whose
 * bodies name parameters).
 * @throws ApiError as the server refuses; CliError as {@link waitForWorkflow} does with `--wait`.
 */
export async function submit(command: Command, operation: string, parameters: Record<string, string | undefined>): Promise<Submitted> {
  const { wait, timeout } = command.opts<{ wait?: boolean; timeout?: string }>();
  const { session, format } = await contextOf(command);
  let submitted: Submitted;
  try {
    submitted = await executeOperation(session, format, operation, parameters, { quiet: Boolean(wait) && !forPeople(format) });
  } catch (err) {
    if (err instanceof ApiError) throw new ApiError(flagWords(cliWords(err.message), flagsOf(command)), err.status, err.headers);
    throw err;
  }
  if (wait) await waitForWorkflow(session, format, submitted.workflowName, timeout ?? '30m');
  else process.stderr.write(`Follow it with: pds wait ${submitted.workflowName} (or add --wait)\n`);
  return submitted;
}
