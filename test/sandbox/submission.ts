/**
 * A workflow submission as the execute pipeline makes one: the raw parameters validated by the operation's contract
 * (the door), their recorded (redacted) form, and the audit entry recorded with it. No vitest import: the crash child
 * process uses it too.
 */
import { isOperationId, OPERATIONS } from '../../core/operations/index.js';
import type { AuditEntry } from '../../core/model.js';
import type { WorkflowSubmission } from '../../core/ports.js';
import { recordedParameters } from '../../tools/operations/execute.js';

/** @throws ZodError when `raw` is not valid for `operation` (a test's own mistake). */
export function submission(name: string, operation: string, raw: Record<string, string>, userId: string): WorkflowSubmission {
  if (!isOperationId(operation)) throw new TypeError(`not an operation: ${operation}`);
  const contract = OPERATIONS[operation];
  const parameters = contract.parameters.parse(raw) as WorkflowSubmission['parameters'];
  const recorded = recordedParameters(contract, parameters as Record<string, unknown>);
  const audit: AuditEntry = {
    id: `audit-${name}`,
    timestamp: new Date().toISOString(),
    userId,
    operation,
    parameters: recorded,
    workflowName: name,
    status: 'submitted',
    riskLevel: contract.riskLevel,
    message: '',
  };
  return { name, operation, parameters, recorded, userId, audit };
}
