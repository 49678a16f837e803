/**
 * vitest global setup: one real Kubernetes control plane (etcd + kube-apiserver + kube-controller-manager, see
 * `test/fixtures/kube-apiserver.ts`) for the whole run, with our test CRDs (`test/fixtures/crds/`) installed.
 * Suites read the admin kubeconfig's path with `inject('kubeconfigPath')` and isolate themselves by namespace names.
 * When the binaries are missing, `scripts/envtest/build.sh` builds them first (~7 min once), printing progress.
 */
import path from 'node:path';
import type {} from 'vitest';
import type { TestProject } from 'vitest/node';
import { adminKubeConfig, ensureEnvtestBinaries, installCrds, startKubeApiServer } from '../fixtures/kube-apiserver.js';

declare module 'vitest' {
  export interface ProvidedContext {
    kubeconfigPath: string;
  }
}

export default async function setup(project: TestProject) {
  const progress = (line: string) => process.stderr.write(`${line}\n`);
  // Quiet when the binaries are cached; every line while a first build runs.
  await ensureEnvtestBinaries((line) => {
    if (!line.includes('binaries present')) progress(line);
  });
  const server = await startKubeApiServer();
  try {
    await installCrds(adminKubeConfig(server.kubeconfigPath), path.resolve(import.meta.dirname, '../fixtures/crds'));
  } catch (err) {
    await server.stop();
    throw err;
  }
  project.provide('kubeconfigPath', server.kubeconfigPath);
  return () => server.stop();
}
