/**
 * A service's error rate from Prometheus (`PDS_PROMETHEUS_URL`) for canary and blue-green analysis (issue 22): one
 * instant query, `GET /api/v1/query?query=<errorRateQuery>` (Prometheus HTTP API, "Instant queries":
 * https://prometheus.io/docs/prometheus/latest/querying/api/#instant-queries), through the outbound fetch the caller
 * hands in (the outbound rule, its deadline and size cap).
 */
import { Upstream } from '../../core/errors.js';
import { applicationName } from '../../core/names.js';
import { errorRateQuery } from '../../core/rollouts.js';

/** The fields of an instant query's answer pds reads. */
interface InstantQueryResponse {
  status?: string;
  error?: string;
  data?: { resultType?: string; result?: Array<{ value?: [number, string] }> };
}

/**
 * The error rate reader for Prometheus at `url`.
 * @returns a function answering the error rate of `team/app` as a fraction (0.072 = 7.2%); 0 when the service served
 *   nothing in the window (an empty vector, or NaN from 0/0).
 * @throws Upstream when Prometheus cannot be reached, refuses the query, or answers something else than a vector.
 */
export function prometheusErrorRate(options: { url: string; fetch: (url: string, init?: { signal?: AbortSignal }) => Promise<Response>; timeoutMs?: number }) {
  return async (team: string, app: string): Promise<number> => {
    const url = new URL(`${options.url}/api/v1/query`);
    url.search = new URLSearchParams({ query: errorRateQuery(team, applicationName(team, app)) }).toString();
    let body: InstantQueryResponse;
    try {
      const res = await options.fetch(url.toString(), { signal: AbortSignal.timeout(options.timeoutMs ?? 5_000) });
      body = (await res.json()) as InstantQueryResponse;
      if (!res.ok || body.status !== 'success') throw new Error(`Prometheus answered ${res.status}: ${body.error ?? body.status}`);
    } catch (err) {
      throw new Upstream(`could not query Prometheus for the error rate of ${team}/${app}`, { cause: err });
    }
    if (body.data?.resultType !== 'vector') throw new Upstream(`Prometheus answered a ${body.data?.resultType} for the error rate of ${team}/${app}, not a vector`);
    const raw = body.data.result?.[0]?.value?.[1];
    const rate = raw === undefined ? 0 : Number(raw);
    return Number.isFinite(rate) ? rate : 0;
  };
}
