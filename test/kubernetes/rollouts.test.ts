/**
 * How pds reads a canary release from Argo Rollouts' objects (adapters/kubernetes/rollouts.ts, issue 22): an
 * AnalysisRun's measurements in the words of the analysis, the reason and step of an abort (Argo puts an aborted canary
 * back at step index 0), and the canary steps a deploy's workflow detail lists. The Rollouts and AnalysisRuns here
 * are shaped as the controller writes them (https://argo-rollouts.readthedocs.io/en/stable/features/analysis/).
 */
import { describe, expect, it } from 'vitest';
import { abortReason, analysisVerdict, canaryWorkflowSteps, rolloutView, type AnalysisRun, type Rollout } from '../../adapters/kubernetes/rollouts.js';

const analysis = { analysis: { templates: [{ templateName: 'acme-web' }] } };

function rollout(status: Rollout['status'], annotations: Record<string, string> = {}): Rollout {
  return {
    metadata: { name: 'acme-web', annotations: { 'pds.dev/stable-tag': '0.2.0', 'pds.dev/canary-tag': '1.3.0', 'pds.dev/workflow': 'wf', ...annotations } },
    spec: {
      strategy: {
        canary: { steps: [{ setWeight: 10 }, { pause: { duration: '2m' } }, analysis, { setWeight: 50 }, { pause: { duration: '5m' } }, analysis] },
      },
    },
    status: { currentPodHash: 'h1', stableRS: 'h0', ...status },
  };
}

function run(stepIndex: number, phase: string, errorRate: string, created = '2026-11-26T10:00:10Z'): AnalysisRun {
  const failed = phase === 'Failed';
  return {
    metadata: { name: `acme-web-h1-2-${stepIndex}`, creationTimestamp: created as unknown as Date, labels: { 'rollout-type': 'Step', 'step-index': String(stepIndex) } },
    spec: { metrics: [{ name: 'health', provider: { web: { url: 'http://acme-web-canary.acme.svc/healthz' } } }] },
    status: {
      phase,
      ...(failed && { message: 'Metric "error-rate" assessed Failed due to failed (1) > failureLimit (0)' }),
      metricResults: [
        { name: 'health', phase: 'Successful', measurements: [{ phase: 'Successful', value: 'true' }] },
        { name: 'error-rate', phase: failed ? 'Failed' : 'Successful', measurements: [{ phase, value: errorRate }] },
      ],
    },
  };
}

describe('a canary release read from Argo Rollouts', () => {
  it('says what an AnalysisRun measured; a failure names only what failed', () => {
    expect(analysisVerdict(run(2, 'Successful', '[0.004]'))).toEqual({ ok: true, text: 'probe /healthz ok, error rate 0.4% ≤ 5%' });
    expect(analysisVerdict(run(2, 'Failed', '[0.072]'))).toEqual({ ok: false, text: 'error rate 7.2% > 5%' });
    expect(analysisVerdict({ status: { phase: 'Running' } })).toEqual({ ok: undefined, text: 'running' });
  });

  it('gives the reason and step of an abort: the failed run, else who aborted it by hand, else the controller', () => {
    // Argo's index after an abort is 0: the step comes from the failed run's step-index (5: the analysis of step 2).
    const aborted = rollout({ abort: true, phase: 'Degraded', currentStepIndex: 0, message: 'RolloutAborted: Rollout aborted update to revision 2' });
    expect(abortReason(aborted, [run(2, 'Successful', '[0]'), run(5, 'Failed', '[0.072]')])).toBe('error rate 7.2% > 5% at step 2 (50%)');
    const byHand = rollout({ abort: true, phase: 'Degraded', currentStepIndex: 0 }, { 'pds.dev/aborted-by': 'carol', 'pds.dev/aborted-workflow': 'wf' });
    expect(abortReason(byHand, [run(2, 'Successful', '[0]')])).toBe('aborted by carol at step 2 (50%)');
    expect(rolloutView(byHand)).toMatchObject({ phase: 'Aborted', message: 'aborted by carol' });
    // Another release's abort by hand is not this one's.
    const stale = rollout({ abort: true, phase: 'Degraded', message: 'RolloutAborted: Rollout aborted update to revision 3' }, { 'pds.dev/aborted-by': 'carol', 'pds.dev/aborted-workflow': 'wf-old' });
    expect(abortReason(stale, [])).toBe('Rollout aborted update to revision 3 at step 1 (10%)');
    expect(abortReason(rollout({ phase: 'Paused' }), [])).toBeUndefined();
  });

  it('lists the canary steps of a release with their analysis results', () => {
    const since = '2026-11-26T10:00:00.000Z';
    expect(canaryWorkflowSteps(rollout({ phase: 'Paused', currentStepIndex: 4 }), [run(2, 'Successful', '[0.004]')], since)).toEqual([
      { name: 'canary step 1/2: 10% of traffic to 1.3.0 for 2m, then analysis', status: 'succeeded', message: 'analysis passed: probe /healthz ok, error rate 0.4% ≤ 5%' },
      { name: 'canary step 2/2: 50% of traffic to 1.3.0 for 5m, then analysis', status: 'running', message: '50% of traffic to 1.3.0, paused' },
    ]);
    const failed = canaryWorkflowSteps(rollout({ abort: true, phase: 'Degraded', currentStepIndex: 0, abortedAt: '2026-11-26T10:00:20Z' }), [run(2, 'Failed', '[0.072]')], since);
    expect(failed.map((s) => [s.status, s.message])).toEqual([['failed', 'error rate 7.2% > 5% at step 1 (10%); rolled back to 0.2.0'], ['pending', undefined]]);
    // Deployed again: the abort and the run before this workflow began are the previous attempt's.
    const again = canaryWorkflowSteps(rollout({ abort: true, phase: 'Degraded', currentStepIndex: 0, abortedAt: '2026-11-26T09:00:00Z' }), [run(2, 'Failed', '[0.072]', '2026-11-26T09:00:00Z')], since);
    expect(again.map((s) => s.status)).toEqual(['pending', 'pending']);
    // Back on the stable ReplicaSet (or promoted): the steps that never ran were skipped.
    const skipped = canaryWorkflowSteps(rollout({ phase: 'Healthy', currentStepIndex: 6, currentPodHash: 'h0', stableRS: 'h0' }), [], since);
    expect(skipped.map((s) => s.status)).toEqual(['skipped', 'skipped']);
    expect(canaryWorkflowSteps({ ...rollout({}), spec: { strategy: { blueGreen: { activeService: 'acme-web' } } } }, [], since)).toEqual([]);
  });
});
