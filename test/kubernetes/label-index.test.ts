/**
 * `labelIndex` (adapters/kubernetes/informers.ts): the Applications of one tenant found without a scan of all, kept by
 * the informer's add/update/delete events. The events here are fed as client-node's ListWatch emits them (the object as
 * cached); the wiring to a real informer is covered by test/cluster/kubernetes-backend.test.ts (listServices of one
 * tenant after onboarding and after retire-service).
 */
import { describe, expect, it } from 'vitest';
import type { KubernetesObject } from '@kubernetes/client-node';
import { labelIndex } from '../../adapters/kubernetes/informers.js';

type Verb = 'add' | 'update' | 'delete';

function source() {
  const handlers: Record<Verb, Array<(obj: KubernetesObject) => void>> = { add: [], update: [], delete: [] };
  return {
    on: (verb: Verb, cb: (obj: KubernetesObject) => void) => void handlers[verb].push(cb),
    emit: (verb: Verb, obj: KubernetesObject) => handlers[verb].forEach((cb) => cb(obj)),
  };
}
const app = (name: string, tenant?: string): KubernetesObject => ({ metadata: { name, namespace: 'argocd', labels: tenant ? { 'pds.dev/tenant': tenant } : {} } });
const names = (objects: KubernetesObject[]) => objects.map((o) => o.metadata!.name).sort();

describe('an index of watched objects by one label', () => {
  it('finds the objects of one value; follows a label that changes, an update, a delete; leaves out the unlabelled', () => {
    const events = source();
    const of = labelIndex(events, 'pds.dev/tenant');
    events.emit('add', app('acme-web', 'acme'));
    events.emit('add', app('acme-api', 'acme'));
    events.emit('add', app('orbit-web', 'orbit'));
    events.emit('add', app('stray'));
    expect(names(of('acme'))).toEqual(['acme-api', 'acme-web']);
    expect(names(of('orbit'))).toEqual(['orbit-web']);
    expect(of('nobody')).toEqual([]);

    const updated = app('acme-web', 'acme');
    updated.metadata!.annotations = { 'pds.dev/image-tag': '1.2.0' };
    events.emit('update', updated);
    expect(of('acme').find((o) => o.metadata!.name === 'acme-web')).toBe(updated);

    events.emit('update', app('acme-api', 'orbit'));
    expect(names(of('acme'))).toEqual(['acme-web']);
    expect(names(of('orbit'))).toEqual(['acme-api', 'orbit-web']);

    events.emit('update', app('orbit-web'));
    expect(names(of('orbit'))).toEqual(['acme-api']);

    events.emit('delete', app('acme-web', 'acme'));
    expect(of('acme')).toEqual([]);
    events.emit('delete', app('stray'));
    expect(names(of('orbit'))).toEqual(['acme-api']);
  });
});
