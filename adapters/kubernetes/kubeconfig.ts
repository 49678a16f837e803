/**
 * Where pds finds its cluster: the in-cluster ServiceAccount when it runs in a pod, else `KUBECONFIG` (or
 * `~/.kube/config`), as kubectl does. The returned config counts the API server requests made through it, so the
 * benchmark and the tests can show that warm reads make none, and bounds every one of them by `PDS_KUBE_TIMEOUT_S`,
 * as every outbound call of pds is bounded (README "Configuration").
 */
import { readFileSync } from 'node:fs';
import { KubeConfig, type RequestContext } from '@kubernetes/client-node';
import type { RequestOptions } from 'node:https';

/** The path of the namespace file of an in-cluster ServiceAccount. */
const SERVICE_ACCOUNT_NAMESPACE = '/var/run/secrets/kubernetes.io/serviceaccount/namespace';

/** Milliseconds an API server request may take when nothing else is configured (`PDS_KUBE_TIMEOUT_S` default). */
export const DEFAULT_KUBE_TIMEOUT_MS = 10_000;

/**
 * A {@link KubeConfig} that counts every request (API calls, watches, log reads) it authenticates, and bounds each:
 * an API call (request and answer body) by an abort signal on its request context, a watch (re)connection (until
 * the response headers) by node-fetch's `timeout`, which client-node's `applyToFetchOptions` hands to `fetch` and
 * `Watch` keeps. An established watch stays open: it may rightly be silent for minutes.
 */
export class CountingKubeConfig extends KubeConfig {
  /** Requests authenticated so far: one per API call, one per watch (re)connection. */
  requests = 0;

  /** @param timeoutMs the bound of each request, milliseconds (`PDS_KUBE_TIMEOUT_S` × 1000). */
  constructor(readonly timeoutMs = DEFAULT_KUBE_TIMEOUT_MS) {
    super();
  }

  override async applySecurityAuthentication(context: RequestContext): Promise<void> {
    this.requests++;
    const deadline = AbortSignal.timeout(this.timeoutMs);
    const prior = context.getSignal();
    context.setSignal(prior ? AbortSignal.any([prior, deadline]) : deadline);
    return super.applySecurityAuthentication(context);
  }

  override async applyToFetchOptions(opts: RequestOptions): ReturnType<KubeConfig['applyToFetchOptions']> {
    this.requests++;
    const init = await super.applyToFetchOptions(opts);
    // Not opts.timeout: that one also becomes the agent's socket idle timeout, which would cut a quiet watch.
    return { ...init, timeout: init.timeout ?? this.timeoutMs };
  }
}

/**
 * True when `err` is a request {@link CountingKubeConfig} cut at its bound: an aborted API call (node-fetch
 * `AbortError`) or a watch whose response did not start in time (node-fetch `FetchError` of type `request-timeout`).
 */
export function isTimeout(err: unknown): boolean {
  const e = err as { name?: string; type?: string } | undefined;
  return e?.name === 'AbortError' || e?.type === 'request-timeout';
}

/**
 * True when `err` is client-node failing to parse an answer without a body: the API server answers a log read of a
 * pod whose container has not started with 204 and no content type, which client-node reports as a plain `Error`.
 */
export function isNoContent(err: unknown): boolean {
  return err instanceof Error && !('code' in err) && /No Content-Type defined/.test(err.message);
}

/**
 * Load the cluster configuration: `kubeconfigPath` when given, else in-cluster (`KUBERNETES_SERVICE_HOST` set), else
 * `KUBECONFIG` / `~/.kube/config` (client-node's `loadFromDefault`). Each request made through it is bounded by
 * `timeoutMs` (default {@link DEFAULT_KUBE_TIMEOUT_MS}).
 * @throws Error when no configuration is found or the file cannot be read.
 */
export function loadKubeConfig(kubeconfigPath?: string, timeoutMs = DEFAULT_KUBE_TIMEOUT_MS): CountingKubeConfig {
  const kc = new CountingKubeConfig(timeoutMs);
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
