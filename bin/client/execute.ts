/**
 * Running an operation from the CLI (its tool's REST binding: `POST /api/v1/operations/{name}/execute`) and saying
 * what was submitted: the workflow name, and how to follow it (`pds wait`, on stderr so piped JSON stays the API's
 * body).
 */
import type { OperationId, OperationParams } from '../../core/operations/index.js';
import { findOperationTool } from '../../tools/operations/index.js';
import { clientOf } from './api.js';
import { print, type Format } from './output.js';
import type { Session } from './session.js';

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
 * @throws PlatformError as the server refuses (INVALID_PARAMS, CONFIRMATION_REQUIRED, FORBIDDEN, NOT_FOUND, …).
 */
export async function executeOperation<K extends OperationId>(session: Session, format: Format, operation: K, parameters: CliParameters<K>): Promise<Submitted> {
  const input = Object.fromEntries(Object.entries(parameters).filter(([, v]) => v !== undefined));
  const submitted = (await clientOf(session).call(findOperationTool(operation), input)) as Submitted;
  print(format, submitted, (s: Submitted) => ({ head: ['workflow', 'operation', 'status', 'message'], rows: [[s.workflowName, s.operation, s.status, s.message]] }));
  process.stderr.write(`Follow it with: pds wait ${submitted.workflowName}\n`);
  return submitted;
}
