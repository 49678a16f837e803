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
import type { RolloutSettings } from '../../core/rollouts.js';
import type { RolloutCommand } from '../sql/index.js';
import type { SandboxState, WorkflowRecord } from './state.js';

/** How the sandbox simulates canary and blue-green releases (issue 22). */
export interface RolloutEnv {
  /**
   * Real milliseconds per second of a rollout pause (1,000 outside tests; `PDS_SANDBOX_PAUSE_SCALE` × 1,000), so a
   * test runs a `10%:2m` step in a fraction of a second without sleeping on real minutes.
   */
  pauseMsPerSecond: number;
  /** How often a waiting rollout step looks for a promote or abort by hand, milliseconds. */
  recheckMs: number;
  /** `PDS_SANDBOX_UNHEALTHY_TAGS`: releases of these tags fail their analysis (a simulated 7.2% error rate). */
  unhealthyTags: ReadonlySet<string>;
  /**
   * The service's error rate now (a fraction), from Prometheus when `PDS_PROMETHEUS_URL` is set; `undefined` when no
   * source is configured (the sandbox then simulates it).
   * @throws Upstream when the source cannot be read.
   */
  errorRate?: (team: string, app: string) => Promise<number>;
}

/** Settings the operations read. */
export interface OperationEnv {
  /** Service hosts are `<team>-<service>.<domain>`; the image registry is `registry.<domain>`. */
  domain: string;
  /** Milliseconds in one `ttl_hours` hour (3,600,000 outside tests). */
  hourMs: number;
  rollout: RolloutEnv;
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
  /** A promote or abort by hand left for this workflow and not yet acted on. */
  readonly command?: RolloutCommand;
  /** What the step's `measure` found before the step's transaction; `undefined` when it has not run yet. */
  readonly measured?: unknown;
}

/**
 * How a step ended, when not simply done: `again` runs it again after that many milliseconds (a rollout pause; its
 * changes are committed, it is not done); `note` is what a done step found (an analysis result, shown in the workflow
 * detail); `fail` fails the workflow with that message but commits the step's changes (an aborted rollout that put
 * traffic back on stable); `consumed` clears the promote or abort by hand the step acted on.
 */
export interface StepOutcome {
  again?: number;
  /** Workflow message while the step waits (`again`). */
  message?: string;
  note?: string;
  fail?: string;
  consumed?: boolean;
}

export interface Step {
  name: string;
  run(ctx: StepContext): void | StepOutcome;
  /**
   * Read the outside world for the step (an analysis query) before its transaction opens, so no transaction waits on
   * the network; the result is the step context's `measured`.
   */
  measure?(env: OperationEnv): Promise<unknown>;
}

/** The steps of one workflow and where its lines are logged. */
export interface Plan {
  team: string;
  /** The service whose log gets the workflow lines and which is marked `Degraded` on failure; "" for tenant operations. */
  app: string;
  steps: Step[];
  /** Message of the succeeded workflow; called on the draft right after the last step. */
  done(ctx: StepContext): string;
  /** What the plan must keep across the workflow's steps (the rollout settings at submission): recorded with its arguments. */
  pin?: RolloutSettings;
}

/** What a plan factory may read besides the parameters. */
export interface PlanContext {
  /** The state as it is now: names of steps may use it; what a step does depends only on the state it runs against. */
  state: Readonly<SandboxState>;
  env: OperationEnv;
  /** The submitter's user id. */
  userId: string;
  /** The rollout settings the service had when the workflow was submitted, which its plan keeps using. */
  pinned?: RolloutSettings;
}

/** Makes the plan of operation `K` from its typed parameters. */
export type PlanFactory<K extends OperationId> = (params: OperationParams<K>, ctx: PlanContext) => Plan;

/** The sandbox's implementation of every operation: one plan factory per operation id. */
export type SandboxOperationTable = { readonly [K in OperationId]: PlanFactory<K> };
