/**
 * Running an operation from the CLI (`POST /api/v1/operations/{name}/execute`) and saying what was submitted: the
 * workflow name, and how to follow it (`pds wait`, on stderr so piped JSON stays the API's body).
 */
import { callApi } from './api.js';
import { print, type Format } from './output.js';
import type { Session } from './session.js';

/** The execute answer (`docs/api.md#operations`). */
export interface Submitted {
  workflowName: string;
  operation: string;
  status: string;
  message: string;
}

/**
 * Execute `operation` with `parameters` (strings, as the API takes them) and print the answer.
 * @throws ApiError as the server refuses (400 with the reason, 403, 404, 429).
 */
export async function executeOperation(session: Session, format: Format, operation: string, parameters: Record<string, string | undefined>): Promise<Submitted> {
  const body = Object.fromEntries(Object.entries(parameters).filter(([, v]) => v !== undefined));
  const submitted = await callApi<Submitted>(session, 'POST', `/api/v1/operations/${encodeURIComponent(operation)}/execute`, body);
  print(format, submitted, (s: Submitted) => ({ head: ['workflow', 'operation', 'status', 'message'], rows: [[s.workflowName, s.operation, s.status, s.message]] }));
  process.stderr.write(`Follow it with: pds wait ${submitted.workflowName}\n`);
  return submitted;
}
