/**
 * `deploy/` on the test API server: its manifests (parsed with client-node's `loadAllYaml`), created in the order
 * deploy/README.md gives, and kubeconfigs for its ServiceAccounts made from their real token Secrets.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { CoreV1Api, KubeConfig, KubernetesObjectApi, loadAllYaml, type KubernetesObject } from '@kubernetes/client-node';
import type { WorkflowTemplate } from '../fixtures/argo-steps/runner.js';

export const DEPLOY = path.resolve(import.meta.dirname, '../../deploy');
/** What a platform team applies for the kubernetes backend, in order (deploy/README.md). */
export const CLUSTER_FILES = ['kubernetes/cluster', 'workflows'].flatMap((dir) =>
  readdirSync(path.join(DEPLOY, dir))
    .filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml')
    .sort()
    .map((f) => path.join(dir, f)),
);

/** The objects of one file under `deploy/`. */
export function loadDeployFile(file: string): KubernetesObject[] {
  return loadAllYaml(readFileSync(path.join(DEPLOY, file), 'utf8')) as KubernetesObject[];
}

/** The WorkflowTemplates of `deploy/workflows/` by name, as plain JSON (what the API server stores). */
export function loadWorkflowTemplates(): Map<string, WorkflowTemplate> {
  const templates = CLUSTER_FILES.filter((f) => f.startsWith('workflows/')).flatMap(loadDeployFile);
  return new Map(templates.map((t) => [t.metadata!.name!, JSON.parse(JSON.stringify(t)) as WorkflowTemplate]));
}

const isConflict = (err: unknown) => (err as { code?: number }).code === 409;

/**
 * Create `objects` in order; an object another suite of the same run created already counts as created (the API
 * server validated the same manifest then). @throws the API server's error for anything else.
 */
export async function createAll(kc: KubeConfig, objects: KubernetesObject[]): Promise<void> {
  const api = kc.makeApiClient(KubernetesObjectApi);
  for (const object of objects) {
    await api.create(object).catch((err: unknown) => {
      if (!isConflict(err)) throw err;
    });
  }
}

/** The namespaces Argo Workflows and Argo CD would have made, then everything in deploy/ for the kubernetes backend. */
export async function installDeploy(kc: KubeConfig): Promise<void> {
  await createAll(kc, [{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'argocd' } }]);
  await createAll(kc, CLUSTER_FILES.flatMap(loadDeployFile));
}

/**
 * A kubeconfig file for a ServiceAccount, with its token from the Secret the controller manager makes (up to 20 s),
 * and `namespace` as the default (as in a pod). @returns its path and a KubeConfig.
 */
export async function serviceAccountKubeConfig(
  admin: KubeConfig,
  account: { namespace: string; name: string },
  dir: string,
): Promise<{ path: string; kc: KubeConfig }> {
  const core = admin.makeApiClient(CoreV1Api);
  const deadline = Date.now() + 20_000;
  let token: string | undefined;
  while (!token) {
    const sa = await core.readNamespacedServiceAccount(account);
    const secretName = sa.secrets?.[0]?.name;
    if (secretName) {
      const secret = await core.readNamespacedSecret({ name: secretName, namespace: account.namespace });
      if (secret.data?.token) token = Buffer.from(secret.data.token, 'base64').toString();
    }
    if (!token) {
      if (Date.now() > deadline) throw new Error(`no token Secret for ServiceAccount ${account.namespace}/${account.name}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  const cluster = admin.getCurrentCluster()!;
  const file = path.join(dir, `${account.namespace}-${account.name}.kubeconfig`);
  writeFileSync(
    file,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'envtest', cluster: { server: cluster.server, 'certificate-authority': cluster.caFile } }],
      users: [{ name: account.name, user: { token } }],
      contexts: [{ name: account.name, context: { cluster: 'envtest', user: account.name, namespace: account.namespace } }],
      'current-context': account.name,
    }),
  );
  const kc = new KubeConfig();
  kc.loadFromFile(file);
  return { path: file, kc };
}
