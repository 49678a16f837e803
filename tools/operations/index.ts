/** The operation tools (one per operation, `tools.ts`) and the catalog tools (`catalog.ts`), in listing order. */
import type { AnyTool } from '../define.js';
import { catalogTools } from './catalog.js';
import { operationTools } from './tools.js';

export { ExecuteResult, executeOperation, recordedParameters, settledMessage, submitOperation, workflowNameFor, type Submission } from './execute.js';
export { describeOperation, findOperationTool, OperationDefinition } from './catalog.js';
export { EXECUTE_PATH, operationTool, operationTools } from './tools.js';

/** Catalog tools, then every operation's tool. */
export const operationsTools: readonly AnyTool[] = [...catalogTools, ...operationTools];
