/**
 * Canary and blue-green releases on Kubernetes (issue 22): the Argo Rollouts `Rollout` the templates write in place of
 * the Deployment (`deploy/workflows/pds-steps.yaml` `write-service-manifests`), read for status and patched for a
 * promote or abort by hand, as the kubectl plugin does (`kubectl argo rollouts promote --full` sets
 * `status.promoteFull`; `abort` sets `status.abort`, both on the status subresource:
 * https://argo-rollouts.readthedocs.io/en/stable/generated/kubectl-argo-rollouts/kubectl-argo-rollouts_promote/).
 * Only the fields pds reads are typed: Argo's own types stop here.
 */
import { splitImage } from '../../core/images.js';
import { CustomObjectsApi, PatchStrategy, setHeaderOptions, type KubeConfig, type KubernetesObject } from '@kubernetes/client-node';
import { Conflict, NotFound, Upstream } from '../../core/errors.js';
import { applicationName } from '../../core/names.js';
import type { RolloutControl } from '../../core/ports.js';
import { parseCanarySteps, type RolloutView } from '../../core/rollouts.js';
import { ANNOTATION, ARGO_GROUP } from './objects.js';

/** Argo Rollouts' API version. */
export const ROLLOUTS_VERSION = 'v1alpha1';

/** An Argo Rollouts `Rollout`, the fields pds reads. */
export interface Rollout extends KubernetesObject {
  spec?: {
    strategy?: {
      canary?: { steps?: Array<{ setWeight?: number; pause?: { duration?: string } }> };
      blueGreen?: { activeService?: string; previewService?: string; autoPromotionSeconds?: number };
    };
    template?: { spec?: { containers?: Array<{ name?: string; image?: string }> } };
  };
  status?: {
    phase?: string;
    message?: string;
    currentStepIndex?: number;
    abort?: boolean;
    promoteFull?: boolean;
    stableRS?: string;
    currentPodHash?: string;
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
  if (paused && pause) view.pausedUntil = new Date(Date.parse(paused) + seconds(pause) * 1000).toISOString();
  // A blue-green preview waits until promoted by hand or autoPromotionSeconds after its pause began.
  const autoPromotion = strategy.blueGreen?.autoPromotionSeconds;
  if (paused && autoPromotion && status.phase === 'Paused') view.pausedUntil = new Date(Date.parse(paused) + autoPromotion * 1000).toISOString();
  return view;
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
 * Promote and abort by patching the Rollout's status, as the kubectl plugin does.
 * @param serviceExists whether `team/app` is a service (its Argo CD Application exists), to tell 404 from 409.
 */
export function kubernetesRollouts(kc: KubeConfig, serviceExists: (team: string, app: string) => Promise<boolean>): RolloutControl {
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
  async function act(team: string, app: string, what: 'promote' | 'abort', release?: string): Promise<RolloutView> {
    const view = await inProgress(team, app, what, release);
    const status = what === 'promote' ? { promoteFull: true, pauseConditions: null } : { abort: true };
    try {
      await kc.makeApiClient(CustomObjectsApi).patchNamespacedCustomObjectStatus(
        { group: ARGO_GROUP, version: ROLLOUTS_VERSION, namespace: team, plural: 'rollouts', name: applicationName(team, app), body: { status } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
    } catch (err) {
      throw new Upstream(`could not ${what} the Rollout of ${team}/${app}`, { cause: err });
    }
    return view;
  }
  return {
    current: (team, app) => inProgress(team, app, 'promote'),
    promote: (team, app, _userId, release) => act(team, app, 'promote', release),
    abort: (team, app) => act(team, app, 'abort'),
  };
}
