/**
 * A tenant's governance policy (issue 20 item 1): who must approve which operations, when operations are frozen, and
 * where a deploy must have run first. One JSON document per tenant, validated here and published in OpenAPI through
 * the policy tools (`tools/governance.ts`). The empty document `{}` means today's behaviour: nothing is frozen,
 * nothing waits for approval.
 *
 * What is enforced today: `freezeWindows` and `promotion` (refused at the door, `tools/operations/execute.ts` and
 * `tools/operations/promotion.ts`), and `approvals` (the execution waits for them: `core/governance/approvals.ts`).
 */
import { parseMemberReference } from '../identity.js';
import { CiPolicy } from './ci.js';
import { Cron } from 'croner';
import { z } from 'zod';
import { TeamName } from '../model.js';
import { OPERATION_IDS, type OperationId } from '../operations/index.js';

const DURATION = /^(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$/;
const UNIT_MS = [86_400_000, 3_600_000, 60_000, 1_000] as const;

/** The longest duration a policy may name: 30 days. */
export const MAX_DURATION_MS = 30 * 86_400_000;

/**
 * Milliseconds of a duration written as days, hours, minutes and seconds in that order, each optional, as Go and Argo
 * CD write them without fractions: `30m`, `24h`, `1h30m`, `2d`.
 * @returns `undefined` when `text` is not such a duration or is zero.
 * @example durationMs('1h30m') // 5_400_000
 */
export function durationMs(text: string): number | undefined {
  const match = DURATION.exec(text);
  if (!match || text === '') return undefined;
  const ms = UNIT_MS.reduce((sum, unit, i) => sum + Number(match[i + 1] ?? 0) * unit, 0);
  return ms > 0 ? ms : undefined;
}

/**
 * A duration for messages, rounded down to what a person reads: seconds below a minute, else minutes, hours and days.
 * @example formatDuration(750_000) // '12m' · formatDuration(5_400_000) // '1h30m' · formatDuration(40_000) // '40s'
 */
export function formatDuration(ms: number): string {
  if (ms < 60_000) return `${Math.max(0, Math.floor(ms / 1000))}s`;
  let minutes = Math.floor(ms / 60_000);
  const days = Math.floor(minutes / 1440);
  minutes -= days * 1440;
  const hours = Math.floor(minutes / 60);
  minutes -= hours * 60;
  return `${days ? `${days}d` : ''}${hours ? `${hours}h` : ''}${minutes || (!days && !hours) ? `${minutes}m` : ''}`;
}

/** A duration field: `30m`, `24h`, `1h30m`, `2d`; more than zero, at most 30 days. */
export const Duration = z
  .string()
  .max(20)
  .refine((s) => durationMs(s) !== undefined, 'must be a duration such as "30m", "24h", "1h30m" or "2d" (days, hours, minutes, seconds in that order)')
  .refine((s) => (durationMs(s) ?? 0) <= MAX_DURATION_MS, 'must be at most 30 days ("30d")');

/**
 * Who may approve: a user id (`alice`, `alice@example.com`, `oidc:…`), `group:<name>` (a group claim of the approver's
 * token), or `role:admin` (the tenant's admins) — member references of the one identity grammar (`core/identity.ts`).
 */
export type ApproverRef = { kind: 'user'; userId: string } | { kind: 'group'; group: string } | { kind: 'role'; role: 'admin' };

/**
 * Parse an approver reference with {@link parseMemberReference}; of the prefixed forms only `group:` and `role:admin`
 * name approvers (`github-actions:` is CI, never a person).
 * @returns `undefined` when `text` is none of the three forms.
 * @example parseApprover('group:sre') // { kind: 'group', group: 'sre' }
 */
export function parseApprover(text: string): ApproverRef | undefined {
  const ref = parseMemberReference(text);
  if (ref?.kind === 'user') return { kind: 'user', userId: ref.user.id };
  if (ref?.kind === 'group') return { kind: 'group', group: ref.name };
  if (ref?.kind === 'role' && ref.name === 'admin') return { kind: 'role', role: 'admin' };
  return undefined;
}

/** An operation name, or `*` for every operation. */
const PolicyOperation = z
  .string()
  .refine((s) => s === '*' || (OPERATION_IDS as readonly string[]).includes(s), `must be "*" or an operation name: ${OPERATION_IDS.join(', ')}`)
  .describe('An operation name such as "deploy-service", or "*" for every operation');

/** True when a list of policy operations covers `operation`. */
export function covers(operations: readonly string[], operation: OperationId): boolean {
  return operations.includes('*') || operations.includes(operation);
}

/** True when `zone` is an IANA time zone name the runtime knows (`Europe/Berlin`, `UTC`). */
export function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/** Why `schedule` is not a cron expression croner accepts (five fields, or six with seconds), or `undefined`. */
function cronProblem(schedule: string): string | undefined {
  try {
    new Cron(schedule, { paused: true });
    return undefined;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}

/** Approval rule: executions of `operations` wait for `required` approvals from `approvers`. */
export const ApprovalPolicy = z
  .strictObject({
    operations: z.array(PolicyOperation).min(1).max(20).describe('Operations that need approval, e.g. ["deploy-service", "rollback-service"]'),
    required: z.number().int().min(1).max(5).describe('How many distinct people must approve, e.g. 1'),
    approvers: z
      .array(
        z
          .string()
          .refine((s) => parseApprover(s) !== undefined, 'must be a user id ("alice"), "group:<name>" ("group:sre") or "role:admin"'),
      )
      .min(1)
      .max(50)
      .describe('Who may approve: user ids ("alice"), "group:<name>" ("group:sre"), or "role:admin" (the tenant\'s admins)'),
    expiresAfter: Duration.default('24h').describe('How long a request waits before it expires and fails, e.g. "24h"'),
  })
  .describe('Four eyes: executions of these operations wait, without running, for approvals from other people; rejection or expiry fails them');

/** A recurring freeze, as Argo CD's sync windows: from each `schedule` start, `duration` long. */
export const FreezeWindow = z
  .strictObject({
    name: z
      .string()
      .regex(/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/, 'must be lowercase letters, digits and "-", at most 63 characters')
      .optional()
      .describe('A short name for messages, e.g. "weekend"; default "window-<n>" by position'),
    schedule: z
      .string()
      .max(100)
      .superRefine((s, ctx) => {
        const problem = cronProblem(s);
        if (problem) ctx.addIssue({ code: 'custom', message: `must be a cron expression such as "0 18 * * 5" (${problem})` });
      })
      .describe('Cron expression of each start, e.g. "0 18 * * 5" (Fridays 18:00)'),
    duration: Duration.describe('How long each window lasts from its start, e.g. "63h"'),
    timeZone: z
      .string()
      .max(64)
      .default('UTC')
      .refine(isTimeZone, 'must be an IANA time zone name such as "Europe/Berlin" or "UTC"')
      .describe('IANA time zone the schedule is read in, e.g. "Europe/Berlin"'),
    operations: z.array(PolicyOperation).min(1).max(20).describe('Operations refused while the window is active, e.g. ["deploy-service"] or ["*"]'),
    reason: z.string().min(1).max(200).describe('Why, shown in every refusal, e.g. "weekend: no one on call"'),
  })
  .describe('A recurring window in which the listed operations are refused (a tenant admin may override with a reason)');

/**
 * Promotion rule: a deploy (or onboarding) here of an image is refused at the door unless pds observed that image
 * (by digest) run Synced and Healthy in the service of the same name in tenant `from`, without a gap, for at least
 * `minHealthy` (`tools/operations/promotion.ts`).
 */
export const PromotionPolicy = z
  .strictObject({
    from: TeamName.describe('The tenant a deploy must have run in first, e.g. "acme-staging"'),
    minHealthy: Duration.describe('How long it must have been Synced and Healthy there, e.g. "30m"'),
  })
  .describe('Verified promotion: a deploy here needs its image to have run Synced and Healthy in "from" for "minHealthy" first');

/** The policy document of a tenant; `{}` is today's behaviour. */
export const TenantPolicy = z
  .strictObject({
    approvals: ApprovalPolicy.optional(),
    freezeWindows: z.array(FreezeWindow).max(20).optional().describe('At most 20 windows'),
    promotion: PromotionPolicy.optional(),
    ci: CiPolicy.optional(),
  })
  .describe('A tenant\'s governance policy; {} means no approvals, no freezes, no promotion rule, no CI OIDC tokens');
export type TenantPolicy = z.output<typeof TenantPolicy>;

/** A freeze window active at some instant, and when it ends. */
export interface ActiveFreeze {
  /** The window's name, or `window-<n>` (1-based position). */
  name: string;
  reason: string;
  timeZone: string;
  /** When the window (with any overlapping next occurrence) ends. */
  endsAt: Date;
}

/**
 * Most later occurrences chained when they overlap the active one (a per-minute schedule longer than a minute never
 * ends); the end reported is then the end of the last one looked at, a lower bound.
 */
const MAX_OCCURRENCES = 200;

/**
 * The window of `policy` that covers `operation` at `now`, if any (the one ending last when several do). A window is
 * active from each start of its schedule (in its time zone) for its duration; back-to-back or overlapping occurrences
 * make one window.
 */
export function activeFreeze(policy: TenantPolicy, operation: OperationId, now: Date): ActiveFreeze | undefined {
  let found: ActiveFreeze | undefined;
  (policy.freezeWindows ?? []).forEach((window, index) => {
    if (!covers(window.operations, operation)) return;
    const length = durationMs(window.duration)!;
    const cron = new Cron(window.schedule, { paused: true, timezone: window.timeZone });
    // The first start after (now − duration) is the earliest that can still be active now.
    let start = cron.nextRun(new Date(now.getTime() - length - 1));
    if (!start || start.getTime() > now.getTime()) return;
    let end = start.getTime() + length;
    for (let i = 0; i < MAX_OCCURRENCES; i++) {
      start = cron.nextRun(start);
      if (!start || start.getTime() > end) break;
      end = Math.max(end, start.getTime() + length);
    }
    if (end <= now.getTime()) return;
    if (!found || end > found.endsAt.getTime()) {
      found = { name: window.name ?? `window-${index + 1}`, reason: window.reason, timeZone: window.timeZone, endsAt: new Date(end) };
    }
  });
  return found;
}

/** `2026-11-30 07:00` in `timeZone` (24-hour clock). */
export function localTime(at: Date, timeZone: string): string {
  const parts = new Intl.DateTimeFormat('en-CA', {
    timeZone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
  }).formatToParts(at);
  const get = (type: string) => parts.find((p) => p.type === type)?.value ?? '';
  return `${get('year')}-${get('month')}-${get('day')} ${get('hour')}:${get('minute')}`;
}

/**
 * The refusal text of an active window: its name, reason, and end in its time zone and in UTC.
 * @example 'deploy-service is frozen in acme by window "weekend" (no one on call) until 2026-11-30 07:00 Europe/Berlin
 *   (2026-11-30T06:00:00Z)'
 */
export function describeFreeze(freeze: ActiveFreeze, operation: string, team: string): string {
  const utc = freeze.endsAt.toISOString().replace(/\.\d{3}Z$/, 'Z');
  return (
    `${operation} is frozen in ${team} by window "${freeze.name}" (${freeze.reason}) until ` +
    `${localTime(freeze.endsAt, freeze.timeZone)} ${freeze.timeZone} (${utc})`
  );
}
