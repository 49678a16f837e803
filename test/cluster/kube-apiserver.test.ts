/**
 * The control-plane fixture itself: a second control plane beside the run's one starts on free ports, answers, and
 * stop() leaves no process and no directory behind; a start that fails leaves nothing either.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { CoreV1Api } from '@kubernetes/client-node';
import { describe, expect, inject, it } from 'vitest';
import { ephemeralLow } from '../fixtures/free-port.js';
import { adminKubeConfig, startKubeApiServer } from '../fixtures/kube-apiserver.js';

/** Running, not merely an exited process its (re)parent has not reaped yet. */
const alive = (pid: number) => {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /, '')[0] !== 'Z';
  } catch {
    return false;
  }
};

describe('test/fixtures/kube-apiserver.ts', () => {
  it('starts etcd, kube-apiserver and kube-controller-manager on free ports, and stop() ends all three', async () => {
    const server = await startKubeApiServer();
    const pids = ['etcd', 'kas', 'kcm'].map((n) => Number(readFileSync(path.join(server.dir, `${n}.pid`), 'utf8')));
    expect(server.server).not.toBe(adminKubeConfig(inject('kubeconfigPath')).getCurrentCluster()!.server);
    // The ports were drawn below the kernel's ephemeral range (test/fixtures/free-port.ts), where no outgoing
    // connection can take one between the draw and the bind.
    const ports = readFileSync(path.join(server.dir, 'ports'), 'utf8').match(/\d+/g)!.map(Number);
    expect(ports).toHaveLength(3);
    for (const port of ports) expect(port).toBeLessThan(ephemeralLow());
    const namespaces = await adminKubeConfig(server.kubeconfigPath).makeApiClient(CoreV1Api).listNamespace();
    expect(namespaces.items.map((n) => n.metadata!.name)).toContain('kube-system');
    expect(pids.every(alive)).toBe(true);
    await server.stop();
    expect(pids.filter(alive)).toEqual([]);
    expect(existsSync(server.dir)).toBe(false);
  }, 120_000); // a second control plane on a busy 2-core machine

  it('fails with a clear message and leaves nothing behind when the binaries are missing', async () => {
    const before = readdirSync(tmpdir()).filter((f) => f.startsWith('pds-envtest-'));
    await expect(startKubeApiServer(undefined, path.join(tmpdir(), 'no-such-envtest-dir'))).rejects.toThrow(/missing .*kube-apiserver: run scripts\/envtest\/build.sh/);
    expect(readdirSync(tmpdir()).filter((f) => f.startsWith('pds-envtest-'))).toEqual(before);
  });
});
