/**
 * What an operation is in the sandbox (`docs/api.md#operations`): a plan of named steps, each of which checks and
 * changes the sandbox state and writes the log lines a real run would (clone, build, push, GitOps commit, Argo CD
 * sync, rollout, health check). Each operation's plan comes from the sandbox's operation table (`operations.ts`); the
 * plans live in `tenant-operations.ts`, `service-operations.ts` and `preview-operations.ts`, shared steps in `steps.ts`.
 *
 * The engine (`engine.ts`) runs one step at a time, on a copy of the state, and commits the step's changes together
 * with the workflow's progress, so a step runs to completion exactly once even across a crash: it is re-run only when
 * its commit never reached the disk. A step that throws fails the workflow with the error's message. Parameters arrive
 * validated and typed (`core/operations/`); steps check only what the state can change (a tenant deleted meanwhile).
 */
import type { OperationId, OperationParams } from '../../core/operations/index.js';
import type { SandboxState, WorkflowRecord } from './state.js';

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
  readonly now: Date;
  readonly env: OperationEnv;
  /** A workflow line (labels `source: workflow`, `workflow`, `step`) in the log of the plan's service. */
  log(line: string): void;
  /** A deployment event (labels `source: deployment`, `pod`) in the log of `team/app`. */
  event(team: string, app: string, pod: string, line: string): void;
  /** An image pushed to the sandbox's registry (`<repository>:<tag>`, its digest), recorded with the step. */
  pushed(image: string, digest: string): void;
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

/** What a plan factory may read besides the parameters. */
export interface PlanContext {
  /** The state as it is now: names of steps may use it; what a step does depends only on the state it runs against. */
  state: Readonly<SandboxState>;
  env: OperationEnv;
  /** The submitter's user id. */
  userId: string;
}

/** Makes the plan of operation `K` from its typed parameters. */
export type PlanFactory<K extends OperationId> = (params: OperationParams<K>, ctx: PlanContext) => Plan;

/** The sandbox's implementation of every operation: one plan factory per operation id. */
export type SandboxOperationTable = { readonly [K in OperationId]: PlanFactory<K> };
