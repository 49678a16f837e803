/**
 * The words of stopping and retrying workflows (issue 22 item 5), shared by both engines and the tools, so a cancelled
 * workflow reads the same in the sandbox and on Kubernetes.
 */
import type { CancelRequest, WorkflowRun } from './ports.js';

/**
 * The settled message of a cancelled workflow: `cancelled by <user>`, with `: <reason>` when one was given.
 * @example cancelledMessage({ userId: 'alice', reason: 'wrong tag' }) // 'cancelled by alice: wrong tag'
 */
export function cancelledMessage(request: Pick<CancelRequest, 'userId' | 'reason'>): string {
  return `cancelled by ${request.userId}${request.reason ? `: ${request.reason}` : ''}`;
}

/**
 * Why a settled workflow cannot be cancelled: its outcome and when.
 * @example 'workflow deploy-service-x7k2p has already settled (succeeded at 2026-11-26T08:00:00.000Z); only a running
 *   or awaiting workflow can be cancelled'
 */
export function settledRefusal(run: Pick<WorkflowRun, 'name' | 'phase' | 'finishedAt'>): string {
  return (
    `workflow ${run.name} has already settled (${run.phase}${run.finishedAt ? ` at ${run.finishedAt}` : ''}); ` +
    'only a running or awaiting workflow can be cancelled'
  );
}
