/**
 * Running an operation from the CLI (its tool's REST binding: `POST /api/v1/operations/{name}/execute`) and saying
 * what was submitted: the workflow name, and how to follow it (`pds wait`, on stderr so piped JSON stays the API's
 * body) — or, with `--wait`, following it at once as `pds wait` does (same lines, same exit codes).
 */
import { Option, type Command } from 'commander';
import type { OperationId, OperationParams } from '../../core/operations/index.js';
import { findOperationTool } from '../../tools/operations/index.js';
import { timeoutSeconds, waitForWorkflow } from '../commands/wait.js';
import { cliErrorOf, clientOf } from './api.js';
import { contextOf, flagsOf } from './command.js';
import { CliError } from './errors.js';
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

/** Every key of any member of a union (an operation's parameters may be one, e.g. deploy-service's per action). */
type KeysOf<U> = U extends unknown ? keyof U : never;

/**
 * An operation's parameters as the command line gives them: strings, under the names the operation's contract
 * declares (a renamed parameter fails to compile here), plus the `confirm` value of a confirmation request.
 */
export type CliParameters<K extends OperationId> = { [name in KeysOf<OperationParams<K>> | 'confirm']?: string };

/**
 * Execute `operation` with `parameters` and print the answer.
 * @param options.quiet print nothing on stdout (a `--wait` with `-o json|yaml` prints the settled workflow instead).
 * @throws PlatformError as the server refuses (INVALID_PARAMS, CONFIRMATION_REQUIRED, FORBIDDEN, NOT_FOUND, …).
 */
export async function executeOperation<K extends OperationId>(
  session: Session,
  format: Format,
  operation: K,
  parameters: CliParameters<K>,
  options: { quiet?: boolean } = {},
): Promise<Submitted> {
  const input = Object.fromEntries(Object.entries(parameters).filter(([, v]) => v !== undefined));
  const submitted = (await clientOf(session).call(findOperationTool(operation), input)) as Submitted;
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
 * Submit `operation` for `command`'s invocation: its session and format, its `--wait`; a refusal's REST hints said
 * as `pds` commands, then its parameter names as the command's flags (`git_tag` → `--tag`; after, because the
 * commands' bodies name parameters).
 * @throws CliError as the server refuses (exit 1, or 3 when not signed in) and as {@link waitForWorkflow} does.
 */
export async function submit<K extends OperationId>(command: Command, operation: K, parameters: CliParameters<K>): Promise<Submitted> {
  const { wait, timeout } = command.opts<{ wait?: boolean; timeout?: string }>();
  const { session, format } = await contextOf(command);
  let submitted: Submitted;
  try {
    submitted = await executeOperation(session, format, operation, parameters, { quiet: Boolean(wait) && !forPeople(format) });
  } catch (err) {
    const refused = cliErrorOf(err);
    if (refused instanceof CliError) throw new CliError(flagWords(cliWords(refused.message), flagsOf(command)), refused.exitCode);
    throw refused;
  }
  if (wait) await waitForWorkflow(session, format, submitted.workflowName, timeout ?? '30m');
  else process.stderr.write(`Follow it with: pds wait ${submitted.workflowName} (or add --wait)\n`);
  return submitted;
}
