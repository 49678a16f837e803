/**
 * What each operation does in the sandbox (SPEC "Endpoints → Operations", "Operation parameters"): a plan of named
 * steps, each of which checks and changes the sandbox state and writes the log lines a real run would (clone, build,
 * push, GitOps commit, Argo CD sync, rollout, health check). The plans live in `tenant-operations.ts`,
 * `service-operations.ts` and `preview-operations.ts`; shared steps and checks in `steps.ts`.
 *
 * The engine (`engine.ts`) runs one step at a time, on a copy of the state, and commits the step's changes together
 * with the workflow's progress, so a step runs to completion exactly once even across a crash: it is re-run only when
 * its commit never reached the disk. A step that throws fails the workflow with the error's message.
 */
import { InvalidParams } from '../../core/errors.js';
import { previewDelete, previewDeploy } from './preview-operations.js';
import { deploy, onboard, provisionDatabase, retire, rollback, updateConfig } from './service-operations.js';
import type { SandboxState, WorkflowRecord } from './state.js';
import { createTenant, deleteTenant } from './tenant-operations.js';

/** Settings the operations read. */
export interface OperationEnv {
  /** Service hosts are `<team>-<service>.<domain>`; the image registry is `registry.<domain>`. */
  domain: string;
  /** Milliseconds in one `ttl_hours` hour (3,600,000 outside tests). */
  hourMs: number;
}

/** What a step sees: the draft state it may change, its workflow, and sinks for log lines. */
export interface StepContext {
  /** The draft: changes are committed only if the step returns. */
  readonly state: SandboxState;
  readonly run: WorkflowRecord;
  readonly params: Readonly<Record<string, string>>;
  readonly now: Date;
  readonly env: OperationEnv;
  /** A workflow line (labels `source: workflow`, `workflow`, `step`) in the log of the plan's service. */
  log(line: string): void;
  /** A deployment event (labels `source: deployment`, `pod`) in the log of `team/app`. */
  event(team: string, app: string, pod: string, line: string): void;
}

export interface Step {
  name: string;
  run(ctx: StepContext): void;
}

/** The steps of one workflow and where its lines are logged. */
export interface Plan {
  team: string;
  /** The service whose log gets the workflow lines and which is marked `Degraded` on failure; "" for tenant operations. */
  app: string;
  steps: Step[];
  /** Message of the succeeded workflow; called on the draft right after the last step. */
  done(ctx: StepContext): string;
}

/** Operations the sandbox runs (SPEC "Registered operation names"). */
export const SANDBOX_OPERATIONS = [
  'create-tenant',
  'delete-tenant',
  'deploy-service',
  'provision-database',
  'retire-service',
  'rollback-service',
  'preview-deploy',
  'preview-delete',
] as const;

/**
 * The plan of one submission. Never throws: problems with the parameters or the state surface when the first step
 * runs, so they fail the workflow (and its audit entry) with a message instead of refusing the submission. Step
 * names may use the state as it is now; what a step does depends only on the state it runs against.
 */
export function planOperation(
  submission: { operation: string; parameters: Record<string, string>; userId: string },
  state: Readonly<SandboxState>,
  env: OperationEnv,
): Plan {
  const p = submission.parameters;
  switch (submission.operation) {
    case 'create-tenant':
      return createTenant(p, submission.userId);
    case 'delete-tenant':
      return deleteTenant(p);
    case 'deploy-service':
      switch (p.action) {
        case 'onboard':
          return onboard(p, env);
        case 'deploy':
          return deploy(p, state, env);
        case 'update-config':
          return updateConfig(p, state, env);
        default:
          return failing(p, 'validate action', `unknown action "${p.action ?? ''}" for deploy-service; use onboard, deploy or update-config`);
      }
    case 'rollback-service':
      return rollback(p, state, env);
    case 'provision-database':
      return provisionDatabase(p);
    case 'retire-service':
      return retire(p);
    case 'preview-deploy':
      return previewDeploy(p, state, env);
    case 'preview-delete':
      return previewDelete(p);
    default:
      return failing(
        p,
        'resolve operation',
        `unknown operation "${submission.operation}"; the sandbox runs ${SANDBOX_OPERATIONS.join(', ')}`,
      );
  }
}

/** A plan whose only step fails with `message` (unknown operation or action). */
function failing(p: Record<string, string>, step: string, message: string): Plan {
  return {
    team: p.team_name ?? '',
    app: p.component_name ?? '',
    steps: [
      {
        name: step,
        run() {
          throw new InvalidParams(message);
        },
      },
    ],
    done: () => '',
  };
}
