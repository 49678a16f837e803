/**
 * Where pds finds its cluster: the in-cluster ServiceAccount when it runs in a pod, else `KUBECONFIG` (or
 * `~/.kube/config`), as kubectl does. The returned config counts the API server requests made through it, so the
 * benchmark and the tests can show that warm reads make none.
 */
import { readFileSync } from 'node:fs';
import { KubeConfig, type RequestContext } from '@kubernetes/client-node';
import type { RequestOptions } from 'node:https';

/** The path of the namespace file of an in-cluster ServiceAccount. */
const SERVICE_ACCOUNT_NAMESPACE = '/var/run/secrets/kubernetes.io/serviceaccount/namespace';

/** A {@link KubeConfig} that counts every request (API calls, watches, log reads) it authenticates. */
export class CountingKubeConfig extends KubeConfig {
  /** Requests authenticated so far: one per API call, one per watch (re)connection. */
  requests = 0;

  override async applySecurityAuthentication(context: RequestContext): Promise<void> {
    this.requests++;
    return super.applySecurityAuthentication(context);
  }

  override async applyToFetchOptions(opts: RequestOptions): ReturnType<KubeConfig['applyToFetchOptions']> {
    this.requests++;
    return super.applyToFetchOptions(opts);
  }
}

/**
 * Load the cluster configuration: `kubeconfigPath` when given, else in-cluster (`KUBERNETES_SERVICE_HOST` set), else
 * `KUBECONFIG` / `~/.kube/config` (client-node's `loadFromDefault`).
 * @throws Error when no configuration is found or the file cannot be read.
 */
export function loadKubeConfig(kubeconfigPath?: string): CountingKubeConfig {
  const kc = new CountingKubeConfig();
  if (kubeconfigPath) kc.loadFromFile(kubeconfigPath);
  else kc.loadFromDefault();
  if (!kc.getCurrentCluster()) throw new Error('no Kubernetes cluster configured: run in a pod with a ServiceAccount, or set KUBECONFIG');
  return kc;
}

/**
 * The namespace pds runs in (where its preview-reaper Lease lives): the ServiceAccount's namespace in a pod, else the
 * kubeconfig context's namespace, else `pds`.
 */
export function ownNamespace(kc: KubeConfig): string {
  try {
    return readFileSync(SERVICE_ACCOUNT_NAMESPACE, 'utf8').trim();
  } catch {
    return kc.getContextObject(kc.getCurrentContext())?.namespace ?? 'pds';
  }
}
