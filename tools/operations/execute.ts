/**
 * The execute pipeline of every operation tool (`docs/api.md#operations` execute rules; DESIGN.md "Operations: one
 * contract, two implementations"): after invoke() has validated the input and checked access and the write limit,
 * confirm destructive operations, audit, submit the workflow, answer at once with `status: "submitted"`.
 *
 * The audit entry goes with the submission: the engine records both in one write, so a submission it refuses (or
 * cannot record) leaves no entry behind (issue 7 item 12). Audit entries and workflow records hold the parameters as
 * recorded: strings, secret values redacted.
 */
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { ConfirmationRequired, Forbidden, PlatformError, Upstream } from '../../core/errors.js';
import { approvalNeeded, approvalNotice, type ApprovalRequest } from '../../core/governance/approvals.js';
import { activeFreeze, describeFreeze, type ActiveFreeze } from '../../core/governance/policy.js';
import type { TenantRef } from '../../core/ports.js';
import { roleAllows, roleIn } from '../access.js';
import { requirePerson } from '../governance.js';
import type { AuditEntry } from '../../core/model.js';
import type { AnyOperationContract, Door, OperationId, OperationParams } from '../../core/operations/index.js';
import { parameterStrings, redactEnvVars, type EnvVar } from '../../core/operations/parameters.js';
import type { ToolContext } from '../define.js';
import { visibleTenantNames } from '../not-found.js';
import { CONFIRM_TTL_SECONDS, createConfirmation, redeemConfirmation } from './confirm.js';
import { checkPromotion, type PromotionPin } from './promotion.js';

/** The execute response (`docs/api.md#operations`: `POST /api/v1/operations/{name}/execute`). */
export const ExecuteResult = z.object({
  workflowName: z.string().describe('Name of the submitted workflow; follow it with platform_get_workflow'),
  operation: z.string().describe('Operation name, e.g. "deploy-service"'),
  status: z.literal('submitted'),
  message: z.string(),
});
export type ExecuteResult = z.infer<typeof ExecuteResult>;

/**
 * The data of a confirmation request (`ConfirmationRequired`): the `structuredContent` of its `isError` result over
 * MCP; over REST the `PDS-Confirm*` headers.
 */
export const ConfirmationRequest = z.object({
  confirm: z.string().describe('Send it back as "confirm" with the same parameters to proceed (once)'),
  expiresAt: z.string().describe('ISO 8601 UTC time after which the value is refused'),
  plan: z.string().describe('What the operation will do'),
});

/**
 * The input of an operation tool: the operation's parameters, `confirm` for operations that need it, and
 * `override_reason` (break-glass during a freeze window).
 */
export interface OperationInput {
  confirm?: string;
  override_reason?: string;
  [parameter: string]: unknown;
}

/**
 * The parameters as recorded in the audit trail and on workflow records: every value a string, secret parameters
 * redacted (`env_vars` keeps its keys: `KEY=***`).
 */
export function recordedParameters(contract: AnyOperationContract, params: Readonly<Record<string, unknown>>): Record<string, string> {
  return parameterStrings(params, contract.secretParameters, (value) => (Array.isArray(value) ? redactEnvVars(value as EnvVar[]) : '***'));
}

/** Characters of a workflow name's random suffix (see {@link workflowNameFor}). */
const WORKFLOW_SUFFIX_LENGTH = 10;

/**
 * `<operation>-<10 characters>`, DNS-safe and easy to read aloud. Names are unique in the record store for as long as
 * the records are kept, so the suffix must not repeat across all of them: 27^10 (about 2·10^14) makes a repeat
 * unlikely even after millions of workflows. Five characters (27^5, 14 million) repeated about once in 2,000
 * submissions during the soak at 7,000 writes, and the deploy was refused with 409 `workflow … already exists`.
 * @example workflowNameFor('deploy-service') // 'deploy-service-k7rqzb2x9m'
 */
export function workflowNameFor(operation: string): string {
  const alphabet = 'bcdfghjklmnpqrstvwxz2456789';
  let suffix = '';
  for (const byte of crypto.getRandomValues(new Uint8Array(WORKFLOW_SUFFIX_LENGTH))) suffix += alphabet[byte % alphabet.length];
  return `${operation}-${suffix}`;
}

/**
 * Execute one operation for the caller in `ctx`: preflight checks, confirmation, audit, submission. When the tenant's
 * policy asks for approval (issue 20 item 2), the submission carries the approval request: the engine records it and
 * holds the workflow until approved, and the message says who may approve and until when.
 * @param input the validated tool input: the operation's typed parameters plus `confirm`.
 * @throws ConfirmationRequired (400) for a `requiresConfirm` operation without `confirm`: nothing changed; the error
 *   carries the value, its expiry and the plan.
 * @throws PlatformError from the operation's preflight (403/404/400; nothing audited or submitted).
 * @throws Forbidden during a freeze window of the tenant that covers the operation, unless a tenant admin acting as a
 *   person gave `override_reason` (nothing audited or submitted); or for a deploy the tenant's promotion rule refuses
 *   (`tools/operations/promotion.ts`: its image has not run healthy long enough in the source tenant).
 * @throws InvalidParams when `confirm` is malformed, expired, used, or made for another call.
 * @throws Upstream (or the engine's own PlatformError) when the workflow engine refuses the submission; nothing is
 *   then recorded.
 */
export async function executeOperation(contract: AnyOperationContract, input: OperationInput, ctx: ToolContext): Promise<ExecuteResult> {
  return (await submitOperation(contract, input, ctx)).result;
}

/** A submitted execution: the execute response and what its messages are made of. */
export interface Submission {
  result: ExecuteResult;
  parameters: OperationParams;
  /** What the operation will do, e.g. `roll acme/web back to 0.1.0`. */
  summary: string;
  /** The preflight's warnings, each a sentence. */
  warnings: readonly string[];
  /** The approval it waits for, when its tenant's policy asks for one (issue 20 item 2). */
  approval?: ApprovalRequest;
}

/**
 * {@link executeOperation}, returning also the summary and warnings its result's message was made of, so a caller that
 * waits for the workflow can word the settled message ({@link settledMessage}). Throws as {@link executeOperation}.
 * @param options.pin a deploy pinned to a digest (`platform_promote_image`): the promotion rule must verify that digest,
 *   and it is audited as `image_digest` and `promoted_from` beside the parameters.
 * @param options.retryOf the failed workflow this execution retries (`platform_retry_workflow`): recorded on the new
 *   workflow beside its parameters, never among them.
 */
export async function submitOperation(
  contract: AnyOperationContract,
  input: OperationInput,
  ctx: ToolContext,
  options: { pin?: PromotionPin; retryOf?: string } = {},
): Promise<Submission> {
  const { confirm, override_reason: overrideReason, ...params } = input;
  const parameters = params as OperationParams;
  const recorded = recordedParameters(contract, params);
  const checked = await contract.preflight?.(parameters, {
    domain: ctx.settings.domain,
    backend: ctx.platform.backend,
    codeHost: ctx.platform.codeHost,
    audit: ctx.platform.audit,
    namespaces: ctx.settings.namespaces,
    door: ctx.door,
    visibleTenants: () => visibleTenantNames(ctx.platform.backend, ctx.identity),
  });
  const team = contract.target(parameters as Record<string, unknown>).team;
  const override = await checkFreeze(contract.id, team, overrideReason, ctx);
  // The override is part of what was done: audited, and bound into a confirmation like any parameter.
  if (override) recorded.override_reason = override.reason;
  // A verified (or promoted) digest is what the deploy runs: audited beside the parameters, handed to the engine.
  const promoted = await checkPromotion(contract, parameters, ctx, options.pin);
  let submitted = parameters;
  if (promoted) {
    recorded.image_digest = promoted.digest;
    recorded.promoted_from = promoted.from;
    submitted = { ...parameters, image_digest: promoted.digest } as unknown as OperationParams;
  }
  // create-tenant makes the tenant whose policy it would wait for: never held.
  const tenant = team && contract.id !== 'create-tenant' ? await ctx.platform.backend.getTenantRef(team) : undefined;
  const approval = tenant ? approvalNeeded(await ctx.platform.governance.policy(tenant), contract.id, new Date(), randomUUID()) : undefined;
  // Beside the parameters (issue 20 item 6): which CI run deployed, since its caller id names only the repository.
  if (ctx.identity.ci) recorded.ci_run_url = ctx.identity.ci.run_url;
  const binding = { userId: ctx.identity.userId, operation: contract.id, parameters: recorded };
  const summary = await contract.summarize(parameters, { domain: ctx.settings.domain, backend: ctx.platform.backend });
  if (contract.requiresConfirm) {
    if (!confirm) {
      const { value, expiresAt } = createConfirmation(ctx.confirmSecret, binding);
      const waits = approval ? `Once confirmed, ${approvalNotice(contract.id, approval)}. ` : '';
      throw new ConfirmationRequired(
        `${contract.id} needs confirmation: it will ${summary}. This cannot be undone. Nothing was changed. ${waits}` +
          `To proceed, repeat the call with the same parameters and "confirm": "${value}" within ${CONFIRM_TTL_SECONDS} seconds.`,
        { confirm: value, expiresAt, plan: summary },
      );
    }
    await redeemConfirmation(ctx.confirmSecret, ctx.platform.once, binding, confirm);
  }
  const workflowName = workflowNameFor(contract.id);
  const entry: AuditEntry = {
    id: randomUUID(),
    timestamp: new Date().toISOString(),
    userId: ctx.identity.userId,
    operation: contract.id,
    parameters: recorded,
    workflowName,
    status: 'submitted',
    riskLevel: contract.riskLevel,
    message: '',
  };
  const owner = recorded.team_name ? (recorded.team_name === tenant?.name ? tenant : await ctx.platform.backend.getTenantRef(recorded.team_name)) : undefined;
  try {
    await ctx.platform.workflows.submit({
      name: workflowName,
      operation: contract.id,
      parameters: submitted,
      recorded,
      userId: ctx.identity.userId,
      audit: entry,
      ...(owner ? { tenantUid: owner.uid } : {}),
      ...(approval ? { approval } : {}),
      ...(options.retryOf ? { retryOf: options.retryOf } : {}),
    });
  } catch (err) {
    throw err instanceof PlatformError ? err : new Upstream('the workflow engine refused the submission', { cause: err });
  }
  const warnings = [...(checked?.warnings ?? [])];
  if (override) {
    // The workflow is submitted: a failure to add the event must not read as a refused call (a retry would run it
    // twice); the override stays in the audit entry's parameters.
    await ctx.platform.governance.record(override.tenant, {
      type: 'freeze.overridden',
      userId: ctx.identity.userId,
      timestamp: entry.timestamp,
      data: {
        workflowName,
        operation: contract.id,
        window: override.freeze.name,
        windowEndsAt: override.freeze.endsAt.toISOString(),
        reason: override.reason,
      },
    }).catch(() => warnings.push('the freeze override was audited but could not be added to the tenant\'s event feed'));
  }
  return {
    result: {
      workflowName,
      operation: contract.id,
      status: 'submitted',
      message: submittedMessage(contract, parameters, { workflowName, summary, door: ctx.door, warnings, ...(approval ? { approval } : {}) }),
    },
    parameters,
    summary,
    warnings,
    ...(approval ? { approval } : {}),
  };
}

/** A freeze window overridden by a tenant admin, for the audit entry and the tenant's feed. */
export interface FreezeOverride {
  tenant: TenantRef;
  freeze: ActiveFreeze;
  reason: string;
}

/**
 * Refuse an execution of `operation` (or what counts as one: a rollout's promote counts as a `deploy-service`) that a
 * freeze window of tenant `team` covers now (issue 20 item 3), before anything is recorded; let it through when a
 * tenant admin (or platform admin), signed in as a person, gave `override_reason`.
 * @returns the override when one was used; `undefined` when no window is active (a reason given then is ignored).
 * @throws Forbidden naming the window, its reason and its end (in its time zone and UTC); or, for an override, saying
 *   that a person with the tenant's admin role is needed.
 */
export async function checkFreeze(
  operation: OperationId,
  team: string | undefined,
  reason: string | undefined,
  ctx: ToolContext,
): Promise<FreezeOverride | undefined> {
  const tenant = team ? await ctx.platform.backend.getTenantRef(team) : undefined;
  if (!team || !tenant) return undefined;
  const freeze = activeFreeze(await ctx.platform.governance.policy(tenant), operation, new Date());
  if (!freeze) return undefined;
  const refusal = describeFreeze(freeze, operation, team);
  if (!reason) {
    throw new Forbidden(
      `${refusal}. Nothing was changed. Try again after the window, or a tenant admin signed in as a person (pds login) ` +
        'may override it by repeating the call with "override_reason"',
    );
  }
  requirePerson(ctx.identity, `overriding freeze window "${freeze.name}"`);
  if (!ctx.identity.admin && !roleAllows(roleIn(await ctx.platform.backend.getTenant(team), ctx.identity), 'admin')) {
    throw new Forbidden(`${refusal}. Only the tenant's admins and platform admins may override it; nothing was changed`);
  }
  return { tenant, freeze, reason };
}

/**
 * The execute result's `message`: what was submitted, how long it usually takes, the call that follows it and the
 * call to make once it has succeeded — in the words of the caller's door — then any preflight warnings.
 * @example (MCP) 'Submitted workflow rollback-service-x7k2p to roll acme/web back to 0.1.0. It runs in the background,
 *   usually about 1 minute (no rebuild): follow it with platform_get_workflow {"name":"rollback-service-x7k2p",
 *   "wait_seconds":45} until it has settled; then check its sync and health status with platform_get_status {…}.'
 */
export function submittedMessage(
  contract: AnyOperationContract,
  parameters: OperationParams,
  about: { workflowName: string; summary: string; door: Door; warnings: readonly string[]; approval?: ApprovalRequest },
): string {
  const { door, workflowName } = about;
  // Waiting in the call, not polling: the answer comes when the workflow settles (or after 45 s, to be repeated).
  const follow = door.name({ tool: 'platform_get_workflow', arguments: { name: workflowName, wait_seconds: 45 } });
  const then = contract.followUp
    ? `; then ${contract.followUp.why} with ${door.name({ tool: contract.followUp.tool, arguments: contract.followUp.arguments(parameters) })}`
    : '';
  const warnings = about.warnings.map((w) => ` Warning: ${w}`).join('');
  if (about.approval) {
    const approve = door.name({ tool: 'platform_review_approval', arguments: { id: about.approval.id, decision: 'approve' } });
    return (
      `Submitted workflow ${workflowName} to ${about.summary}, and nothing runs yet: ${approvalNotice(contract.id, about.approval)}. ` +
      `An approver other than you decides with ${approve} (people only, not agents); a rejection or the expiry fails it. ` +
      `Follow it with ${follow} until it has settled${then}.${warnings}`
    );
  }
  return (
    `Submitted workflow ${workflowName} to ${about.summary}. It runs in the background, usually ${contract.duration}: ` +
    `follow it with ${follow} until it has settled${then}.${warnings}`
  );
}

/**
 * The `message` of an execution that settled while the call waited (`wait_seconds`), in place of
 * {@link submittedMessage}'s "It runs in the background …": what happened and what to call next, in the words of the
 * caller's door, then any preflight warnings. The result keeps the execute response's `status: "submitted"`
 * (`docs/api.md`: the status of the submission); `phase` and `settled` say how it ended.
 * @example (MCP, succeeded) 'Workflow rollback-service-x7k2p succeeded while this call waited: it was submitted to roll
 *   acme/web back to 0.1.0. Next, check its sync and health status with platform_get_status {"team":"acme","app":"web"}.'
 * @example (MCP, failed) 'Workflow deploy-service-q4m7z failed while this call waited, at step "build image": <step
 *   message>. It was submitted to deploy acme/web at 0.2.0; failedStep holds the step's log tail; read the workflow with
 *   platform_get_workflow {"name":"deploy-service-q4m7z"}.'
 */
export function settledMessage(
  contract: AnyOperationContract,
  submission: Submission,
  outcome: { phase: 'succeeded' | 'failed'; failedStep?: { name: string; message: string } },
  door: Door,
): string {
  const { workflowName } = submission.result;
  const warnings = submission.warnings.map((w) => ` Warning: ${w}`).join('');
  if (outcome.phase === 'succeeded') {
    const next = contract.followUp
      ? ` Next, ${contract.followUp.why} with ${door.name({ tool: contract.followUp.tool, arguments: contract.followUp.arguments(submission.parameters) })}.`
      : '';
    return `Workflow ${workflowName} succeeded while this call waited: it was submitted to ${submission.summary}.${next}${warnings}`;
  }
  const step = outcome.failedStep;
  const read = door.name({ tool: 'platform_get_workflow', arguments: { name: workflowName } });
  return (
    `Workflow ${workflowName} failed while this call waited${step ? `, at step "${step.name}": ${step.message}` : ''}. ` +
    `It was submitted to ${submission.summary}; ${step ? "failedStep holds the step's log tail; " : ''}read the workflow with ${read}.${warnings}`
  );
}
