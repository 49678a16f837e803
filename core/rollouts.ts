/**
 * Progressive delivery of a service (issue 22; README "Rollouts"): its rollout strategy, the canary steps, the analysis
 * thresholds, and the `rollout` object status and workflow detail carry beside the fields of `docs/api.md`. Both backends read
 * the strategy from here: the sandbox runs it as workflow steps, the Kubernetes templates write it as an Argo Rollouts
 * `Rollout` (https://argo-rollouts.readthedocs.io/en/stable/features/specification/).
 */
import { z } from 'zod';

/** `rolling` (the default: every pod replaced at once, today's behaviour), `canary` or `blue-green`. */
export const ROLLOUT_STRATEGIES = ['rolling', 'canary', 'blue-green'] as const;
export const RolloutStrategy = z.enum(ROLLOUT_STRATEGIES);
export type RolloutStrategy = z.infer<typeof RolloutStrategy>;

/** One canary step: `weight` percent of the traffic goes to the new release for `pauseSeconds`, then analysis runs. */
export interface CanaryStep {
  /** Percent of traffic, 1-99 (100 is the promotion that follows the last step). */
  weight: number;
  /** Seconds the weight is held before the analysis, 0-86400. */
  pauseSeconds: number;
}

/** The canary steps used when `canary_steps` is not given: 10% for 2 minutes, then 50% for 5 minutes. */
export const DEFAULT_CANARY_STEPS = '10%:2m,50%:5m';
/** Most canary steps in one rollout. */
export const MAX_CANARY_STEPS = 10;
/** Longest pause of one step: a day (a longer hold is a promote by hand). */
export const MAX_PAUSE_SECONDS = 86_400;

/** How long blue-green waits for a promote by hand before it switches by itself (Argo's `autoPromotionSeconds`). */
export const BLUE_GREEN_AUTO_PROMOTION_SECONDS = 600;
/** Highest share of 5xx answers a release may serve during analysis (a fraction; 0.05 = 5%). */
export const MAX_ERROR_RATE = 0.05;

const STEP = /^([1-9]\d?)%:(\d{1,5})(s|m|h)$/;
const UNIT_SECONDS = { s: 1, m: 60, h: 3600 } as const;

/**
 * `canary_steps` text: comma-separated `<weight>%:<pause>` entries, weights rising from 1 to 99, pauses in `s`, `m` or
 * `h` up to 24h, at most 10 entries, e.g. `10%:2m,50%:5m`. Stays text (records and the GitOps templates carry it as
 * text), normalized to {@link formatCanarySteps}' form; {@link parseCanarySteps} reads it. The full 100% follows the
 * last step.
 */
export const CanaryStepsParam = z
  .string()
  .max(200, 'must be at most 200 characters')
  .superRefine((text, ctx) => {
    const entries = text.split(',').map((e) => e.trim());
    if (entries.length > MAX_CANARY_STEPS) ctx.addIssue({ code: 'custom', message: `must hold at most ${MAX_CANARY_STEPS} steps` });
    let last = 0;
    entries.forEach((entry, i) => {
      const m = STEP.exec(entry);
      if (!m) {
        ctx.addIssue({ code: 'custom', message: `step ${i + 1} ("${entry.slice(0, 20)}") must be <weight>%:<pause>, weight 1-99, pause like 30s, 2m or 1h, e.g. "10%:2m,50%:5m"` });
        return;
      }
      const weight = Number(m[1]);
      const seconds = Number(m[2]) * UNIT_SECONDS[m[3] as keyof typeof UNIT_SECONDS];
      if (weight <= last) ctx.addIssue({ code: 'custom', message: `step ${i + 1}: weights must rise (${weight}% follows ${last}%), e.g. "10%:2m,50%:5m"` });
      if (seconds > MAX_PAUSE_SECONDS) ctx.addIssue({ code: 'custom', message: `step ${i + 1}: a pause must be at most 24h` });
      last = weight;
    });
  })
  .transform((text) => formatCanarySteps(parseCanarySteps(text)))
  .describe('Canary traffic steps "<weight>%:<pause>,…", e.g. "10%:2m,50%:5m" (the default)');

/** The steps of `canary_steps` text validated by {@link CanaryStepsParam}: the one reader of that text. */
export function parseCanarySteps(text: string): CanaryStep[] {
  return text.split(',').map((entry) => {
    const m = STEP.exec(entry.trim())!;
    return { weight: Number(m[1]), pauseSeconds: Number(m[2]) * UNIT_SECONDS[m[3] as keyof typeof UNIT_SECONDS] };
  });
}

/**
 * Canary steps as `canary_steps` text, the form the GitOps templates and records carry.
 * @example formatCanarySteps([{ weight: 10, pauseSeconds: 120 }]) // '10%:2m'
 */
export function formatCanarySteps(steps: readonly CanaryStep[]): string {
  return steps.map((s) => `${s.weight}%:${formatPause(s.pauseSeconds)}`).join(',');
}

/** Seconds as the text of a pause: `2m`, `90s`, `1h`. */
export function formatPause(seconds: number): string {
  if (seconds > 0 && seconds % 3600 === 0) return `${seconds / 3600}h`;
  if (seconds > 0 && seconds % 60 === 0) return `${seconds / 60}m`;
  return `${seconds}s`;
}

/** A service's rollout settings as recorded: the strategy and, for canary, its steps. */
export interface RolloutSettings {
  strategy: RolloutStrategy;
  /** Canary only: normalized `canary_steps` text, e.g. `10%:2m,50%:5m`. */
  canarySteps?: string;
}

/** `rolling`, as every service had before issue 22. */
export const ROLLING: RolloutSettings = { strategy: 'rolling' };

/**
 * The `rollout` object of `platform_get_status` and of a deploy's workflow detail (beside the fields of `docs/api.md`, never in
 * place of them): what a canary or blue-green release is doing, or did last.
 */
export const RolloutView = z.object({
  strategy: RolloutStrategy,
  phase: z
    .enum(['Progressing', 'Paused', 'Healthy', 'Degraded', 'Aborted'])
    .describe('Argo Rollouts phase: Paused while a step holds, Healthy once promoted, Aborted after a rollback to stable'),
  step: z.number().int().describe('Current step, 1-based; 0 before the first'),
  steps: z.number().int().describe('Steps in all (canary: its weights; blue-green: 1)'),
  canaryWeight: z.number().int().describe('Percent of traffic on the new release now, 0-100'),
  stableTag: z.string().describe('The tag serving the rest of the traffic, e.g. "0.1.0" ("" on a first release)'),
  canaryTag: z.string().describe('The tag being rolled out, e.g. "0.2.0"'),
  pausedUntil: z.string().optional().describe('ISO 8601 UTC end of the current pause; absent when not paused or waiting for a promote'),
  message: z.string().describe('What happens now, or why it was aborted, e.g. "error rate 7.2% > 5% at step 2 (50%)"'),
  workflowName: z.string().describe('The workflow of this release'),
  promotedBy: z.string().optional().describe('Who promoted it by hand, skipping the remaining pauses'),
});
export type RolloutView = z.infer<typeof RolloutView>;

/**
 * Why an analysis failed, as the workflow message and status say it.
 * @example analysisFailure('error rate 7.2% > 5%', 2, 50) // 'error rate 7.2% > 5% at step 2 (50%)'
 */
export function analysisFailure(reason: string, step: number, weight: number): string {
  return `${reason} at step ${step} (${weight}%)`;
}

/**
 * An error rate (a fraction) against {@link MAX_ERROR_RATE}, in the words of the analysis.
 * @example errorRateVerdict(0.072) // { ok: false, text: 'error rate 7.2% > 5%' }
 */
export function errorRateVerdict(rate: number): { ok: boolean; text: string } {
  const pct = (n: number) => `${Math.round(n * 1000) / 10}%`;
  const ok = rate <= MAX_ERROR_RATE;
  return { ok, text: `error rate ${pct(rate)} ${ok ? '≤' : '>'} ${pct(MAX_ERROR_RATE)}` };
}

/**
 * The PromQL of a service's error rate over the last 2 minutes: 5xx answers over all answers of its Kubernetes
 * Service, from the conventional `http_requests_total` counter with `namespace`, `service` and `code` labels (as a
 * Prometheus Operator ServiceMonitor scrapes them). Names are DNS labels (validated at the door), so they need no
 * escaping inside the quotes.
 * @example errorRateQuery('acme', 'acme-web')
 * // 'sum(rate(http_requests_total{namespace="acme",service="acme-web",code=~"5.."}[2m])) / sum(rate(http_requests_total{namespace="acme",service="acme-web"}[2m]))'
 */
export function errorRateQuery(namespace: string, service: string): string {
  const selector = `namespace="${namespace}",service="${service}"`;
  return `sum(rate(http_requests_total{${selector},code=~"5.."}[2m])) / sum(rate(http_requests_total{${selector}}[2m]))`;
}
