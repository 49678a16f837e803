/**
 * Canary and blue-green releases on Kubernetes (issue 22): the Argo Rollouts `Rollout` the templates write in place of
 * the Deployment (`deploy/workflows/pds-steps.yaml` `write-service-manifests`), read for status and patched for a
 * promote or abort by hand, as the kubectl plugin does (`kubectl argo rollouts promote --full` sets
 * `status.promoteFull`; `abort` sets `status.abort`, both on the status subresource:
 * https://argo-rollouts.readthedocs.io/en/stable/generated/kubectl-argo-rollouts/kubectl-argo-rollouts_promote/).
 * An abort by hand also records who asked on the Rollout (`pds.dev/aborted-by`), which Argo does not.
 *
 * The analysis of each canary step is an `AnalysisRun` the controller creates (labels `rollout-type: Step`,
 * `step-index`, `rollouts-pod-template-hash`), whose `status.metricResults[].measurements` carry what was measured
 * (https://argo-rollouts.readthedocs.io/en/stable/features/analysis/): pds reads them for the per-step results of a
 * deploy's workflow detail and for the reason of an automatic rollback.
 * Only the fields pds reads are typed: Argo's own types stop here.
 */
import { splitImage } from '../../core/images.js';
import { AppsV1Api, CustomObjectsApi, PatchStrategy, setHeaderOptions, type KubeConfig, type KubernetesObject } from '@kubernetes/client-node';
import { Conflict, NotFound, Upstream } from '../../core/errors.js';
import type { WorkflowStep } from '../../core/model.js';
import { applicationName } from '../../core/names.js';
import type { RolloutControl } from '../../core/ports.js';
import { analysisFailure, errorRateVerdict, formatPause, parseCanarySteps, type RolloutView } from '../../core/rollouts.js';
import { ANNOTATION, ARGO_GROUP, LABEL } from './objects.js';

/** Argo Rollouts' API version. */
export const ROLLOUTS_VERSION = 'v1alpha1';

/** An Argo Rollouts `Rollout`, the fields pds reads. */
export interface Rollout extends KubernetesObject {
  spec?: {
    strategy?: {
      canary?: { steps?: Array<{ setWeight?: number; pause?: { duration?: string }; analysis?: unknown }> };
      blueGreen?: { activeService?: string; previewService?: string; autoPromotionSeconds?: number };
    };
    template?: { spec?: { containers?: Array<{ name?: string; image?: string }> } };
    /** The Deployment whose pod template the Rollout runs (write-rollout's Rollouts refer to the service's). */
    workloadRef?: { kind?: string; name?: string };
  };
  status?: {
    phase?: string;
    message?: string;
    currentStepIndex?: number;
    abort?: boolean;
    promoteFull?: boolean;
    stableRS?: string;
    currentPodHash?: string;
    /** The `metadata.generation` (as text) the controller last acted on. */
    observedGeneration?: string;
    /** With `workloadRef`: the referenced Deployment's `metadata.generation` (as text) the controller last acted on. */
    workloadObservedGeneration?: string;
    /** ISO 8601 time of the abort, while aborted. */
    abortedAt?: string;
    pauseConditions?: Array<{ reason?: string; startTime?: string }>;
    canary?: { weights?: { canary?: { weight?: number }; stable?: { weight?: number } } };
    blueGreen?: { activeSelector?: string; previewSelector?: string };
  };
}

/** The tag of an image reference `<registry>/src/<owner>/<repo>:<tag>`, pinned or not (`…:<tag>@sha256:…`, `core/images.ts`). */
function tagOf(reference: string | undefined): string {
  const { image } = splitImage(reference ?? '');
  const at = image.lastIndexOf(':');
  return at > image.lastIndexOf('/') ? image.slice(at + 1) : '';
}

/**
 * The `rollout` object of a Rollout's status, or `undefined` for a rolling service. The stable and canary tags are the
 * ones set-image recorded on the Rollout with each release (`pds.dev/stable-tag`, `pds.dev/canary-tag`).
 */
export function rolloutView(rollout: Rollout, workflowName = ''): RolloutView | undefined {
  const strategy = rollout.spec?.strategy;
  if (!strategy?.canary && !strategy?.blueGreen) return undefined;
  const status = rollout.status ?? {};
  // With workloadRef the pod template (and its image) is the Deployment's: set-image records the tags on the Rollout.
  const annotations = rollout.metadata?.annotations ?? {};
  const canaryTag = annotations[ANNOTATION.canaryTag] || tagOf(rollout.spec?.template?.spec?.containers?.[0]?.image);
  const stableTag = annotations[ANNOTATION.stableTag] ?? '';
  const steps = strategy.canary ? (strategy.canary.steps ?? []).filter((s) => s.setWeight !== undefined).length : 1;
  const index = status.currentStepIndex ?? 0;
  const weight = status.canary?.weights?.canary?.weight ?? (status.phase === 'Healthy' ? 100 : 0);
  const phase = status.abort ? 'Aborted' : status.phase === 'Paused' ? 'Paused' : status.phase === 'Healthy' ? 'Healthy' : status.phase === 'Degraded' ? 'Degraded' : 'Progressing';
  const paused = status.pauseConditions?.[0]?.startTime;
  const pause = strategy.canary?.steps?.[index]?.pause?.duration;
  const view: RolloutView = {
    strategy: strategy.canary ? 'canary' : 'blue-green',
    phase,
    // The canary step is the number of setWeight steps reached: write-rollout follows each with a pause and an analysis.
    step: strategy.canary ? Math.max(1, (strategy.canary.steps ?? []).slice(0, index + 1).filter((s) => s.setWeight !== undefined).length) : 1,
    steps,
    canaryWeight: weight,
    stableTag,
    canaryTag,
    message: status.message ?? '',
    workflowName: rollout.metadata?.annotations?.[ANNOTATION.workflow] ?? workflowName,
  };
  const abortedBy = abortedByHand(rollout);
  if (phase === 'Aborted' && abortedBy) view.message = `aborted by ${abortedBy}`;
  if (paused && pause) view.pausedUntil = new Date(Date.parse(paused) + seconds(pause) * 1000).toISOString();
  // A blue-green preview waits until promoted by hand or autoPromotionSeconds after its pause began.
  const autoPromotion = strategy.blueGreen?.autoPromotionSeconds;
  if (paused && autoPromotion && status.phase === 'Paused') view.pausedUntil = new Date(Date.parse(paused) + autoPromotion * 1000).toISOString();
  return view;
}

/** Who aborted the Rollout's current release by hand (pds's annotations name its workflow), or `undefined`. */
function abortedByHand(rollout: Rollout): string | undefined {
  const a = rollout.metadata?.annotations ?? {};
  return rollout.status?.abort && a[ANNOTATION.abortedBy] && a[ANNOTATION.abortedWorkflow] === a[ANNOTATION.workflow] ? a[ANNOTATION.abortedBy] : undefined;
}

/** `2m`, `90s`, `1h` as seconds (Argo's pause durations as pds writes them). */
function seconds(duration: string): number {
  return parseCanarySteps(`1%:${duration}`)[0]?.pauseSeconds ?? 0;
}

/** The Rollout of `team/app`, or `undefined` when the service has none (a rolling service: a Deployment). */
export async function readRollout(kc: KubeConfig, team: string, app: string): Promise<Rollout | undefined> {
  try {
    return (await kc.makeApiClient(CustomObjectsApi).getNamespacedCustomObject({
      group: ARGO_GROUP,
      version: ROLLOUTS_VERSION,
      namespace: team,
      plural: 'rollouts',
      name: applicationName(team, app),
    })) as Rollout;
  } catch (err) {
    if ((err as { code?: number }).code === 404) return undefined;
    throw new Upstream(`could not read the Rollout of ${team}/${app}`, { cause: err });
  }
}

/**
 * Promote and abort by patching the Rollout's status, as the kubectl plugin does. An abort first records who asked and
 * the release's workflow in the Rollout's annotations (`pds.dev/aborted-by`, `pds.dev/aborted-workflow`): the deploy's
 * wait-rollout step and status then say "aborted by <user>".
 * @param serviceExists whether `team/app` is a service (its Argo CD Application exists), to tell 404 from 409.
 */
export function kubernetesRollouts(kc: KubeConfig, serviceExists: (team: string, app: string) => Promise<boolean>): RolloutControl {
  const custom = kc.makeApiClient(CustomObjectsApi);
  /** The release in progress (`release`'s, when given), or the refusal saying why there is none to act on. */
  async function inProgress(team: string, app: string, what: 'promote' | 'abort', release?: string): Promise<RolloutView> {
    const rollout = await readRollout(kc, team, app);
    const view = rollout && rolloutView(rollout);
    if (!view) {
      if (!(await serviceExists(team, app))) throw new NotFound(`service not found: ${team}/${app}`);
      throw new Conflict(`no canary or blue-green release of ${team}/${app} is in progress to ${what} (it has no Rollout: strategy rolling); a release starts with deploy-service action=deploy`);
    }
    const running = view.phase === 'Paused' || view.phase === 'Progressing';
    if (release !== undefined && view.workflowName !== release) {
      throw new Conflict(`the release of ${team}/${app} that was to be promoted (${release}) has ended; its Rollout is on ${view.canaryTag} (${view.workflowName}), ${view.phase}`);
    }
    if (!running) {
      if (release !== undefined) throw new Conflict(`the release of ${team}/${app} that was to be promoted (${release}) has ended: its Rollout is ${view.phase} on ${view.canaryTag}`);
      throw new Conflict(`no canary or blue-green release of ${team}/${app} is in progress to ${what}: its Rollout is ${view.phase} on ${view.canaryTag}`);
    }
    return view;
  }
  async function act(team: string, app: string, what: 'promote' | 'abort', userId: string, release?: string): Promise<RolloutView> {
    const view = await inProgress(team, app, what, release);
    const object = { group: ARGO_GROUP, version: ROLLOUTS_VERSION, namespace: team, plural: 'rollouts', name: applicationName(team, app) };
    const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
    try {
      if (what === 'abort') {
        const annotations = { [ANNOTATION.abortedBy]: userId, [ANNOTATION.abortedWorkflow]: view.workflowName };
        await custom.patchNamespacedCustomObject({ ...object, body: { metadata: { annotations } } }, merge);
      }
      const status = what === 'promote' ? { promoteFull: true, pauseConditions: null } : { abort: true };
      await custom.patchNamespacedCustomObjectStatus({ ...object, body: { status } }, merge);
    } catch (err) {
      throw new Upstream(`could not ${what} the Rollout of ${team}/${app}`, { cause: err });
    }
    return view;
  }
  return {
    current: (team, app) => inProgress(team, app, 'promote'),
    promote: (team, app, userId, release) => act(team, app, 'promote', userId, release),
    abort: (team, app, userId) => act(team, app, 'abort', userId),
  };
}

/**
 * An Argo Rollouts `AnalysisRun`, the fields pds reads: its phase (`Pending`, `Running`, `Successful`, `Failed`,
 * `Error`, `Inconclusive`) and each metric's measurements (https://argo-rollouts.readthedocs.io/en/stable/features/analysis/).
 */
export interface AnalysisRun extends KubernetesObject {
  spec?: { metrics?: Array<{ name?: string; provider?: { web?: { url?: string } } }> };
  status?: {
    phase?: string;
    message?: string;
    metricResults?: Array<{ name?: string; phase?: string; message?: string; measurements?: Array<{ phase?: string; value?: string }> }>;
  };
}

/** The labels Argo Rollouts puts on the AnalysisRun of a canary step (`utils/analysis/factory.go` StepLabels). */
export const STEP_RUN_LABEL = { podHash: 'rollouts-pod-template-hash', type: 'rollout-type', stepIndex: 'step-index' } as const;

/**
 * The AnalysisRuns of the canary steps of the release whose pod template hash is `podHash` (and that `selector`
 * selects, a label selector), oldest first.
 * @throws Upstream when the API server refuses the list (a 404, no AnalysisRun kind, is none).
 */
export async function readStepAnalysisRuns(kc: KubeConfig, team: string, podHash: string | undefined, selector?: string): Promise<AnalysisRun[]> {
  try {
    const list = (await kc.makeApiClient(CustomObjectsApi).listNamespacedCustomObject({
      group: ARGO_GROUP,
      version: ROLLOUTS_VERSION,
      namespace: team,
      plural: 'analysisruns',
      labelSelector: [`${STEP_RUN_LABEL.type}=Step`, ...(podHash ? [`${STEP_RUN_LABEL.podHash}=${podHash}`] : []), ...(selector ? [selector] : [])].join(','),
    })) as { items?: AnalysisRun[] };
    return (list.items ?? []).sort((a, b) => created(a).localeCompare(created(b)) || (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? ''));
  } catch (err) {
    if ((err as { code?: number }).code === 404) return [];
    throw new Upstream(`could not read the AnalysisRuns of ${team}`, { cause: err });
  }
}

const created = (o: KubernetesObject) => String(o.metadata?.creationTimestamp ?? '');
const FAILED = new Set(['Failed', 'Error']);

/**
 * What an AnalysisRun measured, in the words of the analysis (the metrics write-rollout writes: `health`, the probe
 * path, and `error-rate`, Prometheus's answer `[<fraction>]`): `ok` is undefined while it runs.
 * @example analysisVerdict(run) // { ok: true, text: 'probe /healthz ok, error rate 0.4% ≤ 5%' }
 */
export function analysisVerdict(run: AnalysisRun): { ok: boolean | undefined; text: string } {
  const phase = run.status?.phase ?? 'Pending';
  const ok = phase === 'Successful' ? true : FAILED.has(phase) ? false : undefined;
  const results = run.status?.metricResults ?? [];
  // A failure names only what failed: it becomes the workflow's reason.
  const shown = ok === false && results.some((m) => FAILED.has(m.phase ?? '')) ? results.filter((m) => FAILED.has(m.phase ?? '')) : results;
  const texts = shown.map((metric) => {
    const value = metric.measurements?.at(-1)?.value ?? '';
    const passed = metric.phase === 'Successful';
    if (metric.name === 'health') {
      const url = run.spec?.metrics?.find((m) => m.name === 'health')?.provider?.web?.url;
      const path = url ? url.replace(/^[a-z]+:\/\/[^/]*/, '') || '/' : '';
      return `probe${path ? ` ${path}` : ''} ${passed ? 'ok' : metric.phase === 'Running' || !metric.phase ? 'running' : `failed${value ? ` (${value})` : ''}`}`;
    }
    const rate = Number(value.replace(/^\[|\]$/g, '').split(',')[0]);
    if (metric.name === 'error-rate' && value !== '' && Number.isFinite(rate)) return errorRateVerdict(rate).text;
    return `${metric.name ?? 'metric'} ${(metric.phase ?? 'pending').toLowerCase()}${value ? ` (${value})` : ''}`;
  });
  const text = texts.join(', ') || run.status?.message || phase.toLowerCase();
  return { ok, text };
}

/** A canary step as write-rollout writes it: `setWeight`, then a pause, then an analysis (indices into the steps). */
interface CanaryStepAt {
  /** 1-based canary step. */
  step: number;
  weight: number;
  pauseSeconds: number;
  /** Index of its setWeight step. */
  weightIndex: number;
  /** Index of the analysis step that ends it, or -1. */
  analysisIndex: number;
}

function canaryStepsOf(rollout: Rollout): CanaryStepAt[] {
  const steps = rollout.spec?.strategy?.canary?.steps ?? [];
  const out: CanaryStepAt[] = [];
  steps.forEach((s, i) => {
    if (s.setWeight === undefined) return;
    const next = steps.findIndex((t, j) => j > i && t.setWeight !== undefined);
    const end = next < 0 ? steps.length : next;
    const pause = steps.slice(i, end).find((t) => t.pause)?.pause?.duration;
    const analysisIndex = steps.findIndex((t, j) => j > i && j < end && t.analysis !== undefined);
    out.push({ step: out.length + 1, weight: s.setWeight, pauseSeconds: pause ? seconds(pause) : 0, weightIndex: i, analysisIndex });
  });
  return out;
}

/** The newest run of each step index among `runs` (a retried release has several). */
function newestByStep(runs: readonly AnalysisRun[]): Map<number, AnalysisRun> {
  const byStep = new Map<number, AnalysisRun>();
  for (const run of runs) byStep.set(Number(run.metadata?.labels?.[STEP_RUN_LABEL.stepIndex] ?? -1), run);
  return byStep;
}

/**
 * Why the Rollout's current release was aborted and at which canary step, as the sandbox says it ("error rate 7.2% > 5%
 * at step 2 (50%)", "aborted by carol at step 1 (10%)"): who aborted it by hand, else what its failed AnalysisRun
 * measured, else the controller's message. Argo puts an aborted canary back at step index 0, so the step is the failed
 * run's `step-index`, or the one after the last step whose analysis passed. `undefined` when it is not aborted.
 */
export function abortReason(rollout: Rollout, runs: readonly AnalysisRun[]): string | undefined {
  if (!rollout.status?.abort) return undefined;
  const steps = canaryStepsOf(rollout);
  const failed = runs.filter((r) => FAILED.has(r.status?.phase ?? '')).at(-1);
  const by = abortedByHand(rollout);
  const reason = by ? `aborted by ${by}` : failed ? analysisVerdict(failed).text : (rollout.status.message ?? 'aborted').replace(/^RolloutAborted: /, '');
  if (!steps.length) return reason;
  let at: CanaryStepAt | undefined;
  if (failed && !by) {
    const index = Number(failed.metadata?.labels?.[STEP_RUN_LABEL.stepIndex] ?? 0);
    at = [...steps].reverse().find((s) => s.weightIndex <= index);
  } else {
    // Runs after the newest failure are this attempt's (a retried release keeps the failed one's).
    const since = failed ? created(failed) : '';
    const passed = runs.filter((r) => created(r) >= since && r !== failed && r.status?.phase === 'Successful').length;
    at = steps[Math.min(passed, steps.length - 1)];
  }
  return at ? analysisFailure(reason, at.step, at.weight) : reason;
}

/**
 * The canary steps of the Rollout's current release as workflow steps, beside the workflow's own (issue 22 item 3): as
 * the sandbox names them ("canary step 1/2: 10% of traffic to 0.2.0 for 2m, then analysis"), each with its analysis
 * result ("analysis passed: probe /healthz ok, error rate 0.4% ≤ 5%"), the step in progress `running`, a failed or
 * aborted one `failed` with its reason ("error rate 7.2% > 5% at step 1 (10%); rolled back to 0.2.0"), later ones `pending` (`skipped` once promoted past). Only runs created at or
 * after `since` (ISO 8601: the workflow's start) count, and an abort from before it (`status.abortedAt`) is the
 * previous attempt's, so a release deployed again shows its own steps, all pending until it is retried.
 * `[]` for a blue-green Rollout.
 */
export function canaryWorkflowSteps(rollout: Rollout, runs: readonly AnalysisRun[], since: string, rolledBack?: RolledBackRelease): WorkflowStep[] {
  const steps = canaryStepsOf(rollout);
  const status = rollout.status ?? {};
  const tag = rolledBack?.canaryTag || rollout.metadata?.annotations?.[ANNOTATION.canaryTag] || tagOf(rollout.spec?.template?.spec?.containers?.[0]?.image);
  const mine = runs.filter((r) => created(r) >= since);
  const byStep = newestByStep(mine);
  // abortedAt has whole seconds: one in the second the workflow began is taken as before it (its own release cannot
  // be aborted that fast), as wait-rollout takes it.
  const abortedBefore = !rolledBack && !!status.abort && !!status.abortedAt && Date.parse(status.abortedAt) <= Date.parse(since);
  const reason = rolledBack ? rolledBack.message : abortedBefore ? undefined : abortReason(rollout, mine);
  const healthy = !rolledBack && status.phase === 'Healthy' && !!status.stableRS && status.stableRS === status.currentPodHash;
  const index = status.currentStepIndex ?? 0;
  let blocked = abortedBefore;
  return steps.map((at) => {
    const step: WorkflowStep = { name: `canary step ${at.step}/${steps.length}: ${at.weight}% of traffic to ${tag} for ${formatPause(at.pauseSeconds)}, then analysis`, status: 'pending' };
    const run = byStep.get(at.analysisIndex);
    const verdict = run && analysisVerdict(run);
    if (blocked) return step;
    if (verdict?.ok === true) return { ...step, status: 'succeeded', message: `analysis passed: ${verdict.text}` };
    if (verdict?.ok === false || reason) {
      blocked = true;
      // As the sandbox says it: the reason, and where the traffic went back.
      const stable = rolledBack?.stableTag ?? rollout.metadata?.annotations?.[ANNOTATION.stableTag];
      return { ...step, status: 'failed', message: reason ? `${reason}${stable ? `; rolled back to ${stable}` : ''}` : analysisFailure(verdict!.text, at.step, at.weight) };
    }
    if (healthy) return { ...step, status: 'skipped', message: 'promoted past it' };
    if (index < at.weightIndex) return step;
    blocked = true;
    return { ...step, status: 'running', message: verdict ? `analysing: ${verdict.text}` : `${at.weight}% of traffic to ${tag}${status.phase === 'Paused' ? ', paused' : ''}` };
  });
}

/** A release deploy-service's exit handler rolled back and reverted in Git (the Application's `pds.dev/rolled-back`). */
export interface RolledBackRelease {
  workflow: string;
  canaryTag: string;
  stableTag: string;
  /** Why, e.g. "error rate 7.2% > 5% at step 1 (10%)", "aborted by carol at step 1 (10%)". */
  message: string;
}

/**
 * The canary steps of `workflowName`'s release of `team/app` (see {@link canaryWorkflowSteps}), when the service's
 * Rollout carries that release, or when `rolledBack` says the exit handler rolled that release back (its revert took
 * the Rollout back to the release before; the steps then come from the service's AnalysisRuns since `since`, and the
 * failed one says why it was rolled back). `[]` otherwise (a rolling or blue-green service, another release).
 * @throws Upstream when the Rollout or its AnalysisRuns cannot be read.
 */
export async function readCanaryWorkflowSteps(kc: KubeConfig, team: string, app: string, workflowName: string, since: string, rolledBack?: RolledBackRelease): Promise<WorkflowStep[]> {
  const rollout = await readRollout(kc, team, app);
  if (!rollout?.spec?.strategy?.canary) return [];
  if (rollout.metadata?.annotations?.[ANNOTATION.workflow] === workflowName && rollout.status?.currentPodHash) {
    return canaryWorkflowSteps(rollout, await readStepAnalysisRuns(kc, team, rollout.status.currentPodHash), since);
  }
  if (rolledBack?.workflow !== workflowName) return [];
  // The AnalysisRuns carry the Rollout's selector labels (pds.dev/tenant, pds.dev/service), whatever the pod hash.
  const runs = await readStepAnalysisRuns(kc, team, undefined, `${LABEL.service}=${app}`);
  return canaryWorkflowSteps(rollout, runs, since, rolledBack);
}

/** A Rollout as status reads it: its view, and whether its status is of the release its annotations name. */
export interface RolloutRead {
  view: RolloutView;
  /**
   * Whether the controller has acted on the Rollout's current spec and pod template: `status.observedGeneration` is its
   * `metadata.generation` and, with `workloadRef`, `status.workloadObservedGeneration` the Deployment's generation.
   * `false` between Argo CD applying a release (or the revert of one) and the Rollouts controller taking it up: the
   * annotations (tags, workflow) are then the new spec's while the status is still the release before's.
   */
  observed: boolean;
}

/**
 * The `rollout` view of `team/app` ({@link rolloutView}) and whether its status is of its current spec
 * ({@link RolloutRead}); once aborted, its message says why and where ({@link abortReason}), read from the release's
 * AnalysisRuns. `undefined` for a service without a Rollout.
 *
 * The Deployment a `workloadRef` names is read after the Rollout, so a release (or revert) Argo CD applied to both is
 * seen in the Deployment's generation by then, and a status that has not observed that generation
 * (https://argo-rollouts.readthedocs.io/en/stable/features/specification/ `status.workloadObservedGeneration`) is
 * known to be the release before's.
 * @throws Upstream when the Rollout cannot be read.
 */
export async function readRolloutState(kc: KubeConfig, team: string, app: string): Promise<RolloutRead | undefined> {
  const rollout = await readRollout(kc, team, app);
  const view = rollout && rolloutView(rollout);
  if (!view) return undefined;
  const observed = await observedCurrentSpec(kc, team, rollout);
  if (view.phase !== 'Aborted' || !rollout.status?.currentPodHash) return { view, observed };
  // The reason is a better message, not the status itself: a refused list keeps the controller's words.
  const runs = await readStepAnalysisRuns(kc, team, rollout.status.currentPodHash).catch(() => []);
  view.message = abortReason(rollout, runs) ?? view.message;
  return { view, observed };
}

/** Whether the Rollouts controller has acted on `rollout`'s spec and on its workloadRef Deployment's pod template. */
async function observedCurrentSpec(kc: KubeConfig, team: string, rollout: Rollout): Promise<boolean> {
  const status = rollout.status ?? {};
  // Argo Rollouts before v1.0 wrote a hash of the spec here: only a generation can be compared.
  const observed = status.observedGeneration ?? '';
  if (/^\d+$/.test(observed) && observed !== String(rollout.metadata?.generation ?? '')) return false;
  const ref = rollout.spec?.workloadRef?.name;
  // A controller that does not write workloadObservedGeneration cannot be compared: taken as current, as before.
  if (!ref || status.workloadObservedGeneration === undefined) return true;
  try {
    const deployment = await kc.makeApiClient(AppsV1Api).readNamespacedDeployment({ namespace: team, name: ref });
    return status.workloadObservedGeneration === String(deployment.metadata?.generation ?? '');
  } catch (err) {
    // No Deployment: the controller has no pod template to act on, and nothing newer to compare with.
    if ((err as { code?: number }).code === 404) return true;
    throw new Upstream(`could not read the Deployment ${ref} of the Rollout of ${team}`, { cause: err });
  }
}
