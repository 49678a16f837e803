/**
 * The sandbox's operation table: one plan factory per operation id (DESIGN.md "Operations: one contract, two
 * implementations"). The type requires an entry for every id of the contract, and `createSandboxPlatform` checks it
 * again at start-up (`assertImplementsEveryOperation`), naming any that is missing.
 */
import type { OperationId } from '../../core/operations/index.js';
import type { Plan, PlanContext, PlanFactory, SandboxOperationTable } from './plan.js';
import { previewDelete, previewDeploy } from './preview-operations.js';
import { deploy, onboard, provisionDatabase, retire, rollback, updateConfig } from './service-operations.js';
import { createTenant, deleteTenant } from './tenant-operations.js';

export const sandboxOperations: SandboxOperationTable = {
  'deploy-service': (p, ctx) => {
    const { state, env } = ctx;
    switch (p.action) {
      case 'onboard':
        return onboard(p, env);
      case 'deploy':
        return deploy(p, ctx);
      case 'update-config':
        return updateConfig(p, state, env);
    }
  },
  'create-tenant': (p, { userId }) => createTenant(p, userId),
  'delete-tenant': (p) => deleteTenant(p),
  'provision-database': (p) => provisionDatabase(p),
  'retire-service': (p) => retire(p),
  'rollback-service': (p, { state, env }) => rollback(p, state, env),
  'preview-deploy': (p, { state, env }) => previewDeploy(p, state, env),
  'preview-delete': (p) => previewDelete(p),
};

/** The plan of one submission, from the table. */
export function planOperation<K extends OperationId>(
  submission: { operation: K; parameters: unknown; userId: string },
  ctx: Omit<PlanContext, 'userId'>,
): Plan {
  const factory = sandboxOperations[submission.operation] as PlanFactory<OperationId>;
  return factory(submission.parameters as never, { ...ctx, userId: submission.userId });
}
