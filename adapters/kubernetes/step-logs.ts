/**
 * The log of one Workflow step: Argo Workflows runs each step in a pod of the workflow namespace, and the step's own
 * output is that pod's `main` container log (the `wait` and `init` containers are Argo's). Read through the API
 * server (`GET /api/v1/namespaces/<ns>/pods/<pod>/log?container=main&tailLines=N`), so pds needs `pods/log` get there.
 */
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { Upstream } from '../../core/errors.js';
import { describe } from './informers.js';
import { isNoContent } from './kubeconfig.js';
import type { Workflow, WorkflowNode } from './objects.js';

/** The Workflow annotation saying how Argo named its pods: `v1` (the node id) or `v2` (the default since 3.4). */
export const POD_NAME_FORMAT_ANNOTATION = 'workflows.argoproj.io/pod-name-format';
/** Longest Kubernetes object name. */
const MAX_NAME = 253;
/** Room Argo keeps for `-<hash>` after the prefix of a v2 pod name. */
const HASH_ROOM = 10;

/**
 * The pod names a step node may run under, most likely first (Argo `workflow/util/pod_name.go` GeneratePodName):
 * with the v2 naming (Argo ≥ 3.4 unless the Workflow says `v1`) `<workflow>-<template>-<hash>`, the hash being the
 * node id's suffix after `<workflow>-` and the prefix cut to fit 253 characters; the node id itself (v1 naming, and
 * nodes without a template name).
 * @example stepPodNames(wf('deploy-1a2b3'), { id: 'deploy-1a2b3-3021452466', templateName: 'build' })
 *   // ['deploy-1a2b3-build-3021452466', 'deploy-1a2b3-3021452466']
 */
export function stepPodNames(workflow: Workflow, node: WorkflowNode): string[] {
  const name = workflow.metadata?.name ?? '';
  const id = node.id ?? '';
  if (!id) return [];
  const template = node.templateName || node.templateRef?.template || '';
  if (workflow.metadata?.annotations?.[POD_NAME_FORMAT_ANNOTATION] === 'v1' || !template || id === name || !id.startsWith(`${name}-`)) return [id];
  const hash = id.slice(name.length + 1);
  // Inline templates keep the workflow name alone as the prefix.
  let prefix = (node.name ?? '').includes('.inline') ? name : `${name}-${template}`;
  prefix = prefix.slice(0, Math.min(MAX_NAME - HASH_ROOM - 1, MAX_NAME - hash.length - 1));
  return [`${prefix}-${hash}`, id];
}

/** The pod node of `workflow` shown as step `step` (its display name): a failed one first, else the last started. */
export function stepNode(workflow: Workflow, step: string): WorkflowNode | undefined {
  const nodes = Object.values(workflow.status?.nodes ?? {}).filter((n) => n.type === 'Pod' && (n.displayName ?? n.name ?? n.id) === step);
  const failed = nodes.find((n) => n.phase === 'Failed' || n.phase === 'Error');
  return failed ?? nodes.sort((a, b) => (a.startedAt ?? '').localeCompare(b.startedAt ?? '')).at(-1);
}

/** Reads step logs from the pods of the workflow namespace. */
export interface StepLogReader {
  /**
   * The newest `lines` lines of the `main` container of the pod that ran step `step` of `workflow`, oldest first.
   * @returns `[]` when the step has no pod node, `lines` is 0, or its pod is gone (404: garbage-collected) or has
   *   no log yet (400: the container is waiting; 204: not started).
   * @throws Upstream when the API server refuses (e.g. 403 without `pods/log` get) or cannot be reached.
   */
  read(workflow: Workflow, step: string, lines: number): Promise<string[]>;
}

/** A {@link StepLogReader} on `namespace` (`PDS_WORKFLOW_NAMESPACE`). */
export function stepLogReader(kc: KubeConfig, namespace: string): StepLogReader {
  const core = kc.makeApiClient(CoreV1Api);
  return {
    async read(workflow, step, lines) {
      const limit = Math.max(0, Math.floor(lines));
      const node = stepNode(workflow, step);
      if (!node || limit === 0) return [];
      for (const pod of stepPodNames(workflow, node)) {
        let text: string;
        try {
          text = String((await core.readNamespacedPodLog({ name: pod, namespace, container: 'main', tailLines: limit })) ?? '');
        } catch (err) {
          const code = (err as { code?: number }).code;
          if (code === 404) continue; // not this name, or collected
          if (code === 400 || isNoContent(err)) return []; // waiting, or 204 without a body (client-node throws)
          throw new Upstream(`could not read the log of step ${step} of workflow ${workflow.metadata?.name} (pod ${pod}): ${describe(err)}`, { cause: err });
        }
        const out = text.split('\n');
        if (out.at(-1) === '') out.pop();
        return out.slice(-limit);
      }
      return [];
    },
  };
}
