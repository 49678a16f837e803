/**
 * The operation contract (DESIGN.md "Operations: one contract, two implementations"; `docs/api.md#operations`): every operation pds runs, by id. {@link OperationId} is the union of their names, {@link OperationParams}
 * the typed parameters of each. A backend supplies one implementation per id; {@link assertImplementsEveryOperation}
 * refuses, at start-up, one that lacks any.
 *
 * Adding an operation: declare it in its family file (`service-`, `tenant-` or `preview-operations.ts`, or a new family
 * spread in here), implement it on every backend (`adapters/sandbox/operations.ts`, the cluster backend's table and its
 * WorkflowTemplate in `deploy/`), and test it. Tools, REST routes, OpenAPI and `GET /api/v1/operations` follow.
 */
import type { OperationContract, ParamsOf } from './contract.js';
import { previewOperations } from './preview-operations.js';
import { serviceOperations } from './service-operations.js';
import { tenantOperations } from './tenant-operations.js';

export * from './contract.js';

/** Every operation, by id. */
export const OPERATIONS = { ...serviceOperations, ...tenantOperations, ...previewOperations } as const;

/** The name of an operation, e.g. `deploy-service`. */
export type OperationId = keyof typeof OPERATIONS;

/** The typed parameters of operation `K`, as validated at the door. */
export type OperationParams<K extends OperationId = OperationId> = ParamsOf<(typeof OPERATIONS)[K]>;

/** Every operation id, in declaration order. */
export const OPERATION_IDS = Object.keys(OPERATIONS) as OperationId[];

/** The contract of an operation id (typed). */
export function operationContract<K extends OperationId>(id: K): (typeof OPERATIONS)[K] {
  return OPERATIONS[id];
}

/** True when `name` is an operation id (own keys only: `constructor` or `__proto__` are not operations). */
export function isOperationId(name: string): name is OperationId {
  return Object.hasOwn(OPERATIONS, name);
}

/** An operation of any id, for code that handles them generically. */
export type AnyOperationContract = OperationContract<OperationId, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** One implementation per operation id: the shape every backend's operation table has. */
export type OperationTable<Impl extends { [K in OperationId]: unknown }> = { readonly [K in OperationId]: Impl[K] };

/**
 * Refuse a backend that does not implement every operation.
 * @param backend the backend's name, for the message (e.g. `sandbox`).
 * @param table the backend's implementations by operation id.
 * @throws TypeError `the <backend> backend does not implement <ids>` naming each missing id.
 */
export function assertImplementsEveryOperation(backend: string, table: Readonly<Record<string, unknown>>): void {
  const missing = OPERATION_IDS.filter((id) => typeof table[id] !== 'function' && (typeof table[id] !== 'object' || table[id] === null));
  if (missing.length) throw new TypeError(`the ${backend} backend does not implement ${missing.join(', ')}; every operation needs one implementation per backend`);
}
