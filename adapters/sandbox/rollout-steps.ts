/**
 * Canary and blue-green releases in the sandbox (issue 22; README "Rollouts"): the steps Argo Rollouts would take,
 * with simulated traffic weights. Each canary step sets its weight, holds it for its pause (the step runs again until
 * the pause is over, `StepOutcome.again`) and then analyses the release: the health probe path and the error rate
 * (Prometheus when `PDS_PROMETHEUS_URL` is set; simulated otherwise, failing for `PDS_SANDBOX_UNHEALTHY_TAGS`). A
 * failed analysis, or an abort by hand, puts all traffic back on the stable tag and fails the workflow with the reason;
 * a promote by hand skips every remaining pause. Blue-green starts the new tag as a preview beside the active one,
 * analyses it, waits for a promote (or {@link BLUE_GREEN_AUTO_PROMOTION_SECONDS}), then switches.
 */
import {
  analysisFailure,
  BLUE_GREEN_AUTO_PROMOTION_SECONDS,
  errorRateVerdict,
  formatPause,
  parseCanarySteps,
  DEFAULT_CANARY_STEPS,
  type RolloutSettings,
  type RolloutView,
} from '../../core/rollouts.js';
import { isPlatformError } from '../../core/errors.js';
import { applicationName } from '../../core/names.js';
import type { OperationEnv, Step, StepContext, StepOutcome } from './plan.js';
import type { ServiceRecord } from './state.js';
import { liveService, podName } from './steps.js';

/** The simulated error rate of a release named in `PDS_SANDBOX_UNHEALTHY_TAGS`. */
export const UNHEALTHY_ERROR_RATE = 0.072;

/** What an analysis found: passed or not, and the words for it. */
interface Analysis {
  ok: boolean;
  text: string;
}

/** The release being rolled out: which service, which tag, from which stable tag, probed where. */
interface Release {
  team: string;
  app: string;
  tag: string;
  healthPath: string;
}

/**
 * The progressive steps of a release of `tag` under `settings` (canary or blue-green), in place of the rolling
 * "wait for rollout" step; the health check step that follows records the tag as deployed.
 */
export function progressiveSteps(env: OperationEnv, release: Release, settings: RolloutSettings): Step[] {
  if (settings.strategy === 'canary') return canarySteps(env, release, settings.canarySteps ?? DEFAULT_CANARY_STEPS);
  return blueGreenSteps(env, release);
}

/** Whether a release of `service` goes progressively: a canary or blue-green service that already runs a tag. */
export function isProgressive(settings: RolloutSettings, service: ServiceRecord | undefined): boolean {
  return settings.strategy !== 'rolling' && !!service?.imageTag;
}

/** The rollout settings of a service as recorded (rolling when none). */
export function settingsOf(service: ServiceRecord | undefined): RolloutSettings {
  if (!service?.strategy || service.strategy === 'rolling') return { strategy: 'rolling' };
  return service.strategy === 'canary' ? { strategy: 'canary', canarySteps: service.canarySteps ?? DEFAULT_CANARY_STEPS } : { strategy: service.strategy };
}

function canarySteps(env: OperationEnv, release: Release, text: string): Step[] {
  const steps = parseCanarySteps(text);
  const { tag } = release;
  const canary: Step[] = steps.map(({ weight, pauseSeconds }, i) => ({
    name: `canary step ${i + 1}/${steps.length}: ${weight}% of traffic to ${tag} for ${formatPause(pauseSeconds)}, then analysis`,
    measure: (e) => analyse(e, release),
    run(ctx) {
      const service = liveService(ctx.state, release.team, release.app);
      const step = i + 1;
      if (service.rollout?.workflowName !== ctx.run.name || service.rollout.step < step) {
        // First entry: set the weight and start the pause.
        const stable = service.rollout?.workflowName === ctx.run.name ? service.rollout.stableTag : service.imageTag;
        const pausedUntil = new Date(ctx.now.getTime() + pauseSeconds * env.rollout.pauseMsPerSecond);
        const view: RolloutView = {
          strategy: 'canary',
          phase: 'Paused',
          step,
          steps: steps.length,
          canaryWeight: weight,
          stableTag: stable,
          canaryTag: tag,
          pausedUntil: pausedUntil.toISOString(),
          message: `canary ${tag} at ${weight}% (step ${step}/${steps.length}), stable ${stable}; paused until ${pausedUntil.toISOString()}`,
          workflowName: ctx.run.name,
        };
        if (service.rollout?.workflowName === ctx.run.name && service.rollout.promotedBy) {
          // Promoted by hand: the remaining steps pass without pause or analysis, as Argo's full promotion does.
          service.rollout = { ...view, phase: 'Progressing', message: service.rollout.message, promotedBy: service.rollout.promotedBy };
          delete service.rollout.pausedUntil;
          return { note: `skipped: ${service.rollout.message}` };
        }
        service.rollout = view;
        service.healthStatus = 'Suspended';
        service.message = view.message;
        ctx.log(`set weight ${weight}%: HTTPRoute ${applicationName(release.team, release.app)} sends ${100 - weight}% to stable ${stable}, ${weight}% to canary ${tag}`);
        ctx.event(release.team, release.app, podName(release.team, release.app, ctx.run.name), `canary ${tag} receives ${weight}% of traffic`);
        return wait(env, view, ctx);
      }
      return hold(env, ctx, service, { step, weight });
    },
  }));
  return [
    ...canary,
    {
      name: `promote ${tag} to 100% of traffic`,
      run(ctx) {
        const service = liveService(ctx.state, release.team, release.app);
        if (service.rollout?.workflowName === ctx.run.name) {
          service.rollout = { ...service.rollout, phase: 'Healthy', canaryWeight: 100, message: `${tag} promoted to 100% of traffic` };
          delete service.rollout.pausedUntil;
        }
        service.healthStatus = 'Progressing';
        ctx.log(`set weight 100%: HTTPRoute ${applicationName(release.team, release.app)} sends all traffic to ${tag}; ${tag} is the stable release`);
      },
    },
  ];
}

function blueGreenSteps(env: OperationEnv, release: Release): Step[] {
  const { tag } = release;
  const application = applicationName(release.team, release.app);
  const auto = BLUE_GREEN_AUTO_PROMOTION_SECONDS;
  return [
    {
      name: `start preview of ${tag} beside the active release (no traffic), then analysis`,
      measure: (e) => analyse(e, release),
      run(ctx) {
        const service = liveService(ctx.state, release.team, release.app);
        if (service.rollout?.workflowName !== ctx.run.name) {
          service.rollout = {
            strategy: 'blue-green',
            phase: 'Progressing',
            step: 1,
            steps: 1,
            canaryWeight: 0,
            stableTag: service.imageTag,
            canaryTag: tag,
            message: `preview ${tag} starting beside active ${service.imageTag}`,
            workflowName: ctx.run.name,
          };
          service.message = service.rollout.message;
          ctx.log(`ReplicaSet of ${tag} up behind Service ${application}-preview; Service ${application} (active) stays on ${service.imageTag}`);
        }
        const aborted = abortByHand(ctx, service);
        if (aborted) return aborted;
        const analysis = measured(ctx);
        if (!analysis) return { again: 0, message: `analysing preview ${tag}` };
        if (!analysis.ok) return abort(ctx, service, `${analysis.text} on preview ${tag}`);
        return { note: `analysis passed: ${analysis.text}` };
      },
    },
    {
      name: `wait for promotion of ${tag} (by hand, or by itself after ${formatPause(auto)})`,
      run(ctx) {
        const service = liveService(ctx.state, release.team, release.app);
        const rollout = service.rollout!;
        if (rollout.phase !== 'Paused') {
          const pausedUntil = new Date(ctx.now.getTime() + auto * env.rollout.pauseMsPerSecond).toISOString();
          service.rollout = { ...rollout, phase: 'Paused', pausedUntil, message: `preview ${tag} ready; waiting for a promote until ${pausedUntil}` };
          service.healthStatus = 'Suspended';
          service.message = service.rollout.message;
          return wait(env, service.rollout, ctx);
        }
        const aborted = abortByHand(ctx, service);
        if (aborted) return aborted;
        if (ctx.command?.command === 'promote') {
          service.rollout = { ...rollout, promotedBy: ctx.command.userId, message: `promoted by ${ctx.command.userId}` };
          return { note: `promoted by ${ctx.command.userId}`, consumed: true };
        }
        if (ctx.now.getTime() < Date.parse(rollout.pausedUntil ?? '')) return wait(env, rollout, ctx);
        return { note: `promoted by itself after ${formatPause(auto)}` };
      },
    },
    {
      name: `switch Service ${application} (active) to ${tag}`,
      run(ctx) {
        const service = liveService(ctx.state, release.team, release.app);
        service.rollout = { ...service.rollout!, phase: 'Healthy', canaryWeight: 100, message: `${tag} is active` };
        delete service.rollout.pausedUntil;
        service.healthStatus = 'Progressing';
        ctx.log(`Service ${application} selects ${tag}; the previous ReplicaSet scales down`);
      },
    },
  ];
}

/** A canary step after its first entry: an abort or promote by hand, the pause, then the analysis. */
function hold(env: OperationEnv, ctx: StepContext, service: ServiceRecord, at: { step: number; weight: number }): StepOutcome {
  const rollout = service.rollout!;
  const aborted = abortByHand(ctx, service);
  if (aborted) return aborted;
  if (ctx.command?.command === 'promote') {
    const message = `promoted by ${ctx.command.userId} at step ${at.step} (${at.weight}%): remaining pauses skipped`;
    service.rollout = { ...rollout, phase: 'Progressing', message, promotedBy: ctx.command.userId };
    delete service.rollout.pausedUntil;
    service.healthStatus = 'Progressing';
    service.message = message;
    return { note: message, consumed: true };
  }
  if (ctx.now.getTime() < Date.parse(rollout.pausedUntil ?? '')) return wait(env, rollout, ctx);
  const analysis = measured(ctx);
  if (!analysis) return { again: 0, message: `analysing ${rollout.canaryTag} at ${at.weight}%` };
  if (!analysis.ok) return abort(ctx, service, analysisFailure(analysis.text, at.step, at.weight));
  service.rollout = { ...rollout, phase: 'Progressing', message: `analysis passed at step ${at.step} (${at.weight}%)` };
  delete service.rollout.pausedUntil;
  return { note: `analysis passed: ${analysis.text}` };
}

/** Run again when the pause ends, or sooner to notice a promote or abort by hand. */
function wait(env: OperationEnv, rollout: RolloutView, ctx: StepContext): StepOutcome {
  const left = Date.parse(rollout.pausedUntil ?? '') - ctx.now.getTime();
  return { again: Math.max(0, Math.min(left, env.rollout.recheckMs)), message: rollout.message };
}

function abortByHand(ctx: StepContext, service: ServiceRecord): StepOutcome | undefined {
  if (ctx.command?.command !== 'abort') return undefined;
  const rollout = service.rollout!;
  const where = rollout.strategy === 'canary' ? ` at step ${rollout.step} (${rollout.canaryWeight}%)` : '';
  return { ...abort(ctx, service, `aborted by ${ctx.command.userId}${where}`), consumed: true };
}

/**
 * Put all traffic back on the stable tag and end the release: the service stays Healthy on it, saying what was rolled
 * back and why; the workflow fails with the reason.
 */
function abort(ctx: StepContext, service: ServiceRecord, reason: string): StepOutcome {
  const rollout = service.rollout!;
  const message = `rolled back: ${rollout.canaryTag} ${reason}; all traffic is on ${rollout.stableTag} again`;
  service.rollout = { ...rollout, phase: 'Aborted', canaryWeight: 0, message };
  delete service.rollout.pausedUntil;
  service.syncStatus = 'Synced';
  service.healthStatus = 'Healthy';
  service.message = message;
  delete service.activeWorkflow;
  ctx.log(`rollout aborted (${reason}): weight 0% for ${rollout.canaryTag}, all traffic on ${rollout.stableTag}`);
  ctx.event(service.team, service.name, podName(service.team, service.name, ctx.run.name), `canary ${rollout.canaryTag} scaled down: ${reason}`);
  return { fail: `${reason}; rolled back to ${rollout.stableTag}`, note: reason };
}

/** The analysis the step's `measure` made, or `undefined` before it ran. A source that failed fails the analysis. */
function measured(ctx: StepContext): Analysis | undefined {
  const m = ctx.measured as Analysis | { error: unknown } | undefined;
  if (!m) return undefined;
  if ('error' in m) {
    const why = isPlatformError(m.error) || m.error instanceof Error ? m.error.message : String(m.error);
    return { ok: false, text: `analysis could not read the error rate (${why})` };
  }
  return m;
}

/**
 * Analyse a release: its health probe path (simulated: answers 200) and its error rate (Prometheus when configured,
 * else simulated: {@link UNHEALTHY_ERROR_RATE} for an unhealthy tag, 0 otherwise).
 */
async function analyse(env: OperationEnv, release: Release): Promise<Analysis> {
  const rate = env.rollout.unhealthyTags.has(release.tag)
    ? UNHEALTHY_ERROR_RATE
    : env.rollout.errorRate
      ? await env.rollout.errorRate(release.team, release.app)
      : 0;
  const verdict = errorRateVerdict(rate);
  // A failure names only what failed: it becomes the workflow's reason ("error rate 7.2% > 5% at step 2 (50%)").
  return verdict.ok ? { ok: true, text: `GET ${release.healthPath} → 200, ${verdict.text}` } : verdict;
}
