/**
 * The cluster's operation table (each operation's Workflow arguments, deploy/README.md "Parameters") and the mapping of
 * Argo Workflow status to pds's vocabulary (issue 10 "Operations").
 */
import { describe, expect, it } from 'vitest';
import { auditStatusOf, finishedByLabels, messageOf, stepsOf } from '../../adapters/kubernetes/engine.js';
import { clusterOperations } from '../../adapters/kubernetes/operations.js';
import type { Workflow } from '../../adapters/kubernetes/objects.js';
import { parseTimestamped } from '../../adapters/kubernetes/pod-logs.js';
import { stepNode, stepPodNames } from '../../adapters/kubernetes/step-logs.js';
import { assertImplementsEveryOperation, operationContract, type OperationId } from '../../core/operations/index.js';

const ctx = { registry: 'registry.example.com/pds', domain: 'apps.example.com', tenantUid: 'uid-1', workflowName: 'deploy-service-x7k2p' };
const args = (id: OperationId, input: Record<string, string>) =>
  (clusterOperations[id] as (p: unknown, c: typeof ctx) => { parameters: Record<string, string>; env?: Record<string, string> })(operationContract(id).parameters.parse(input), ctx);

describe('the cluster operation table', () => {
  it('implements every operation', () => {
    expect(() => assertImplementsEveryOperation('kubernetes', clusterOperations)).not.toThrow();
    expect(() => assertImplementsEveryOperation('kubernetes', { ...clusterOperations, 'preview-delete': undefined })).toThrow(/does not implement preview-delete/);
  });

  it('asks deploy-service and rollback-service for a manual Argo CD sync only when a freeze was overridden', () => {
    const over = { ...ctx, override: true };
    const table = (id: OperationId, input: Record<string, string>, c: typeof over) =>
      (clusterOperations[id] as (p: unknown, c: typeof over) => { parameters: Record<string, string> })(operationContract(id).parameters.parse(input), c).parameters;
    const deploy = { action: 'deploy', team_name: 'acme', component_name: 'web', git_tag: '0.1.1', dockerfile_repo: 'acme/web' };
    const rollback = { team_name: 'acme', component_name: 'web', target_tag: '0.1.0' };
    expect(table('deploy-service', deploy, over).manual_sync).toBe('true');
    expect(table('rollback-service', rollback, over).manual_sync).toBe('true');
    expect(args('deploy-service', deploy).parameters.manual_sync).toBeUndefined();
    expect(table('rollback-service', rollback, { ...ctx, override: false }).manual_sync).toBeUndefined();
  });

  it('derives application, host, image (keyed by the source, core/images), push_secret and tenant_uid once', () => {
    expect(args('deploy-service', { action: 'onboard', team_name: 'acme', component_name: 'web', git_tag: '0.1.0', dockerfile_repo: 'acme/web', port: '8080' }).parameters).toEqual({
      action: 'onboard',
      team_name: 'acme',
      component_name: 'web',
      git_tag: '0.1.0',
      dockerfile_repo: 'acme/web',
      port: '8080',
      tenant_uid: 'uid-1',
      application: 'acme-web',
      host: 'acme-web.apps.example.com',
      image: 'registry.example.com/pds/src/acme/web:0.1.0',
      push_secret: 'pds-registry-push-acme.web',
    });
    // The same source deployed by another tenant is the same image.
    expect(args('deploy-service', { action: 'deploy', team_name: 'beta', component_name: 'site', git_tag: '0.1.0', dockerfile_repo: 'Acme/web' }).parameters.image).toBe(
      'registry.example.com/pds/src/acme/web:0.1.0',
    );
    // Rollback and previews run an image built before: the one of the service's recorded source.
    const recorded = { ...ctx, service: { repo: 'acme/web', dockerfilePath: 'docker/Dockerfile' } };
    const rollback = clusterOperations['rollback-service'](operationContract('rollback-service').parameters.parse({ team_name: 'acme', component_name: 'web', target_tag: '0.1.0' }) as never, recorded);
    expect(rollback.parameters.image).toMatch(/^registry\.example\.com\/pds\/src\/acme\/web\/f-[0-9a-f]{16}:0\.1\.0$/);
    expect(args('preview-deploy', { team_name: 'acme', component_name: 'web', image_tag: '0.2.0', ttl_hours: '4' }).parameters).toMatchObject({
      preview_name: 'web-preview-0-2-0',
      preview_application: 'acme-web-preview-0-2-0',
      host: 'acme-web-preview-0-2-0.apps.example.com',
      application: 'acme-web',
    });
  });

  it('keeps env_vars values out of the parameters: keys and the Secret name only', () => {
    const a = args('deploy-service', { action: 'update-config', team_name: 'acme', component_name: 'web', env_vars: 'A=1\nB=two=2' });
    expect(a.parameters).toEqual({ action: 'update-config', team_name: 'acme', component_name: 'web', tenant_uid: 'uid-1', application: 'acme-web', env_secret: 'deploy-service-x7k2p-env', env_keys: 'A,B' });
    expect(a.env).toEqual({ A: '1', B: 'two=2' });
  });
});

describe('Argo Workflow status in pds words', () => {
  it('maps phases to the audit vocabulary', () => {
    expect([undefined, '', 'Pending', 'Running', 'Succeeded', 'Failed', 'Error'].map(auditStatusOf)).toEqual(['submitted', 'submitted', 'submitted', 'submitted', 'succeeded', 'failed', 'failed']);
  });

  it('names the running step, the failed node, and lists Pod nodes as steps in start order', () => {
    const nodes = {
      root: { type: 'Steps', displayName: 'wf', phase: 'Running' },
      a: { type: 'Pod', displayName: 'check-tenant', phase: 'Succeeded', startedAt: '2026-01-01T00:00:01Z' },
      b: { type: 'Pod', displayName: 'build-image', phase: 'Running', startedAt: '2026-01-01T00:00:02Z' },
      c: { type: 'Skipped', displayName: 'copy-environment', phase: 'Skipped', startedAt: '2026-01-01T00:00:02Z' },
    };
    const running = { status: { phase: 'Running', nodes } };
    expect(messageOf(running)).toBe('running step build-image (1 step done)');
    expect(stepsOf(running).map((s) => `${s.name}:${s.status}`)).toEqual(['check-tenant:succeeded', 'build-image:running', 'copy-environment:skipped']);
    const failed = { status: { phase: 'Failed', message: 'child failed', nodes: { ...nodes, b: { ...nodes.b, phase: 'Failed', message: 'main: Error (exit code 1): no Dockerfile' } } } };
    expect(messageOf(failed)).toBe('step build-image failed: main: Error (exit code 1): no Dockerfile');
    expect(messageOf({ status: { phase: 'Error', message: 'workflowtemplates.argoproj.io "x" not found' } })).toBe('workflowtemplates.argoproj.io "x" not found');
    expect(messageOf({})).toBe('submitted to Argo Workflows, waiting for the controller');
  });

  it('reads kubelet log timestamps (RFC 3339 with nanoseconds)', () => {
    expect(parseTimestamped('2026-11-22T20:41:15.123456789Z hello world')).toEqual({ timestamp: '2026-11-22T20:41:15.123Z', line: 'hello world' });
    expect(parseTimestamped('no timestamp here')).toBeUndefined();
  });
});

describe('the pod of a step (Argo pod names)', () => {
  const wf = (name: string, format?: string): Workflow => ({ metadata: { name, ...(format ? { annotations: { 'workflows.argoproj.io/pod-name-format': format } } : {}) } });

  it('v2 (Argo ≥ 3.4): <workflow>-<template>-<hash of the node id>, then the node id', () => {
    expect(stepPodNames(wf('rollback-service-1a2b3'), { id: 'rollback-service-1a2b3-3021452466', name: 'rollback-service-1a2b3[0].validate', templateName: 'validate' })).toEqual([
      'rollback-service-1a2b3-validate-3021452466',
      'rollback-service-1a2b3-3021452466',
    ]);
    // A step of a referenced WorkflowTemplate names its template in templateRef.
    expect(stepPodNames(wf('w'), { id: 'w-42', templateRef: { name: 'common', template: 'git-clone' } })[0]).toBe('w-git-clone-42');
    expect(stepPodNames(wf('w'), { id: 'w-42', name: 'w[0].inline', templateName: 'x' })[0]).toBe('w-42');
  });

  it('v1, or a node without a template: the node id', () => {
    expect(stepPodNames(wf('w', 'v1'), { id: 'w-42', templateName: 'build' })).toEqual(['w-42']);
    expect(stepPodNames(wf('w'), { id: 'w-42' })).toEqual(['w-42']);
    expect(stepPodNames(wf('w'), {})).toEqual([]);
  });

  it('cuts a long prefix so the name fits 253 characters, keeping the hash', () => {
    const [name] = stepPodNames(wf('w'), { id: 'w-4294967295', templateName: 't'.repeat(300) });
    expect(name).toHaveLength(253);
    expect(name).toMatch(/^w-t+-4294967295$/);
  });

  it('finds the pod node shown as a step, the failed one first', () => {
    const workflow: Workflow = {
      metadata: { name: 'w' },
      status: {
        nodes: {
          w: { id: 'w', type: 'Steps', displayName: 'w' },
          'w-1': { id: 'w-1', type: 'Pod', displayName: 'build', phase: 'Succeeded', startedAt: '2026-01-01T00:00:00Z' },
          'w-2': { id: 'w-2', type: 'Pod', displayName: 'build', phase: 'Failed', startedAt: '2026-01-01T00:00:01Z' },
          'w-3': { id: 'w-3', type: 'Skipped', displayName: 'push' },
        },
      },
    };
    expect(stepNode(workflow, 'build')?.id).toBe('w-2');
    expect(stepNode(workflow, 'push')).toBeUndefined();
    expect(stepNode(workflow, 'w')).toBeUndefined();
  });
});

describe("a Workflow's end, from Argo's labels (metadata-only watch)", () => {
  const labelled = (labels: Record<string, string>) => ({ metadata: { name: 'w', labels } });
  it('is finished with a final phase label, or completed=true; running or unlabelled is not', () => {
    expect(finishedByLabels(labelled({ 'workflows.argoproj.io/phase': 'Succeeded' }))).toBe(true);
    expect(finishedByLabels(labelled({ 'workflows.argoproj.io/phase': 'Error' }))).toBe(true);
    expect(finishedByLabels(labelled({ 'workflows.argoproj.io/completed': 'true' }))).toBe(true);
    expect(finishedByLabels(labelled({ 'workflows.argoproj.io/phase': 'Running', 'workflows.argoproj.io/completed': 'false' }))).toBe(false);
    expect(finishedByLabels(labelled({}))).toBe(false);
  });
});
