/**
 * A service's Rollout as deploy-service leaves it, built once for the cluster tests that drive one
 * (`rollouts.test.ts`, `wait-rollout.test.ts`), and the one-step WorkflowTemplate that runs `wait-rollout` alone
 * (`wait-rollout.test.ts`, `template-steps.test.ts`).
 *
 * The objects follow what `write-service-manifests` and `write-rollout` write (`deploy/workflows/pds-steps.yaml`):
 * https://argo-rollouts.readthedocs.io/en/stable/features/specification/
 */
import { AppsV1Api, CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import type { WorkflowTemplate } from '../fixtures/argo-steps/runner.js';
import type { startRolloutsController } from '../fixtures/argo-rollouts-controller.js';

/** The analysis step write-rollout puts after each pause of the canary (10%, pause, analysis; 50%, pause, analysis). */
const ANALYSIS = (name: string) => ({ analysis: { templates: [{ templateName: name }] } });

/**
 * Create the Deployment (the pod template at no replicas, running `image`) and the canary Rollout that refers to it, in
 * namespace `team`, both named `<team>-<app>` and labelled with the tenant and service. With `gatewayApi` the Rollout
 * routes traffic through the Gateway API plug-in (the HTTPRoute of the same name); with `analysisTemplate` the
 * AnalysisTemplate that probes the canary Service's `/healthz` is created too.
 */
export async function createCanaryService(
  admin: KubeConfig,
  o: { team: string; app: string; image: string; gatewayApi?: boolean; analysisTemplate?: boolean },
): Promise<void> {
  const name = `${o.team}-${o.app}`;
  const labels = { 'pds.dev/tenant': o.team, 'pds.dev/service': o.app };
  await admin.makeApiClient(AppsV1Api).createNamespacedDeployment({
    namespace: o.team,
    body: {
      metadata: { name, labels },
      spec: { replicas: 0, selector: { matchLabels: labels }, template: { metadata: { labels }, spec: { containers: [{ name: 'app', image: o.image }] } } },
    },
  });
  const custom = admin.makeApiClient(CustomObjectsApi);
  if (o.analysisTemplate) {
    await custom.createNamespacedCustomObject({
      group: 'argoproj.io', version: 'v1alpha1', plural: 'analysistemplates', namespace: o.team,
      body: {
        apiVersion: 'argoproj.io/v1alpha1', kind: 'AnalysisTemplate', metadata: { name, labels },
        spec: { metrics: [{ name: 'health', failureLimit: 0, successCondition: 'result == true', provider: { web: { url: `http://${name}-canary.${o.team}.svc/healthz`, jsonPath: '{$.ok}' } } }] },
      },
    });
  }
  await custom.createNamespacedCustomObject({
    group: 'argoproj.io', version: 'v1alpha1', plural: 'rollouts', namespace: o.team,
    body: {
      apiVersion: 'argoproj.io/v1alpha1', kind: 'Rollout',
      metadata: { name, labels, annotations: { 'pds.dev/stable-tag': '', 'pds.dev/workflow': '' } },
      spec: {
        replicas: 1, selector: { matchLabels: labels },
        workloadRef: { apiVersion: 'apps/v1', kind: 'Deployment', name, scaleDown: 'onsuccess' },
        strategy: {
          canary: {
            stableService: name, canaryService: `${name}-canary`,
            ...(o.gatewayApi ? { trafficRouting: { plugins: { 'argoproj-labs/gatewayAPI': { httpRoute: name, namespace: o.team } } } } : {}),
            steps: [{ setWeight: 10 }, { pause: { duration: '1h' } }, ANALYSIS(name), { setWeight: 50 }, { pause: { duration: '1h' } }, ANALYSIS(name)],
          },
        },
      },
    },
  });
}

/** The WorkflowTemplate `wait-only` in namespace `workflows`: one step, pds-steps' `wait-rollout` for `team`/`app`. */
export function waitOnlyTemplate(workflows: string, team: string, app: string, timeoutSeconds: number): WorkflowTemplate {
  return {
    metadata: { name: 'wait-only', namespace: workflows },
    spec: {
      entrypoint: 'main',
      serviceAccountName: 'pds-workflow',
      templates: [{
        name: 'main',
        steps: [[{
          name: 'wait-rollout',
          templateRef: { name: 'pds-steps', template: 'wait-rollout' },
          arguments: { parameters: [{ name: 'team_name', value: team }, { name: 'component_name', value: app }, { name: 'timeout_seconds', value: String(timeoutSeconds) }] },
        }]],
      } as WorkflowTemplate['spec']['templates'][number]],
    },
  };
}

/**
 * The Rollouts stand-in's measurements (`startRolloutsController`'s `measure`): health passes for every tag; the error
 * rate of canary tag `failing` is 7.2% (failing the analysis), every other tag's 0.4%.
 */
export function errorRateFailsFor(failing: string): Parameters<typeof startRolloutsController>[0]['measure'] {
  return (r) => {
    const bad = r.metadata?.annotations?.['pds.dev/canary-tag'] === failing;
    return { health: { value: 'true', passed: true }, 'error-rate': { value: bad ? '[0.072]' : '[0.004]', passed: !bad } };
  };
}
