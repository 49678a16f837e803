/**
 * The operation tools (one per operation, `tools.ts`), the catalog tools (`catalog.ts`) and `platform_promote_image`
 * (`promote.ts`, a deploy-service), in listing order.
 */
import type { AnyTool } from '../define.js';
import { catalogTools } from './catalog.js';
import { promoteImage } from './promote.js';
import { operationTools } from './tools.js';

export { ExecuteResult, executeOperation, recordedParameters, settledMessage, submitOperation, workflowNameFor, type Submission } from './execute.js';
export { describeOperation, findOperationTool, OperationDefinition } from './catalog.js';
export { EXECUTE_PATH, operationTool, operationTools } from './tools.js';

/** Catalog tools, then every operation's tool, then the ways to call one (promotion: a deploy-service). */
export const operationsTools: readonly AnyTool[] = [...catalogTools, ...operationTools, promoteImage];
