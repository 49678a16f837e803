/**
 * Service logs from Loki (`PDS_LOKI_URL`): `GET /loki/api/v1/query_range` with the pods of the service's Deployment
 * (`{namespace="<team>", pod=~"<team>-<service>-<rs>-<pod>"}`), `direction=backward`, `limit` = lines, from now minus
 * `since` (Loki HTTP API, "Query logs within a range of time").
 */
import { Upstream } from '../../core/errors.js';
import type { LogLine } from '../../core/model.js';
import { applicationName } from '../../core/names.js';

/** Milliseconds a Loki query may take. */
const TIMEOUT_MS = 10_000;

interface QueryRangeResponse {
  status?: string;
  data?: { resultType?: string; result?: Array<{ stream?: Record<string, string>; values?: Array<[string, string]> }> };
}

/**
 * The LogQL stream selector of a service's pods: its Deployment's pods only (`<app>-<replicaset hash>-<pod hash>`;
 * a preview `<service>-preview-…` has more dashes and does not match).
 * @example serviceSelector('acme', 'web') // '{namespace="acme", pod=~"acme-web-[a-z0-9]+-[a-z0-9]+"}'
 */
export function serviceSelector(team: string, app: string): string {
  return `{namespace="${team}", pod=~"${applicationName(team, app)}-[a-z0-9]+-[a-z0-9]+"}`;
}

/**
 * A log source reading Loki at `url`.
 * @throws Upstream when Loki cannot be reached or answers anything but a `streams` result.
 */
export function lokiLogSource(options: { url: string; fetch?: typeof fetch; now?: () => Date }) {
  const fetchImpl = options.fetch ?? fetch;
  const now = options.now ?? (() => new Date());
  return {
    async read(team: string, app: string, { lines, sinceSeconds }: { lines: number; sinceSeconds: number }): Promise<{ lines: LogLine[]; note: string }> {
      const limit = Math.max(0, Math.floor(lines));
      if (limit === 0) return { lines: [], note: `0 lines asked of Loki for ${team}/${app}` };
      const endNs = BigInt(now().getTime()) * 1_000_000n;
      const startNs = endNs - BigInt(Math.floor(sinceSeconds)) * 1_000_000_000n;
      const url = new URL(`${options.url}/loki/api/v1/query_range`);
      url.search = new URLSearchParams({
        query: serviceSelector(team, app),
        start: String(startNs),
        end: String(endNs),
        limit: String(limit),
        direction: 'backward',
      }).toString();
      let body: QueryRangeResponse;
      try {
        const res = await fetchImpl(url, { signal: AbortSignal.timeout(TIMEOUT_MS) });
        if (!res.ok) throw new Error(`Loki answered ${res.status}: ${(await res.text()).slice(0, 200)}`);
        body = (await res.json()) as QueryRangeResponse;
      } catch (err) {
        throw new Upstream(`could not read the logs of ${team}/${app} from Loki`, { cause: err });
      }
      if (body.status !== 'success' || body.data?.resultType !== 'streams') {
        throw new Upstream(`Loki answered no log streams for ${team}/${app} (status ${body.status}, ${body.data?.resultType})`);
      }
      const all: Array<LogLine & { ns: bigint }> = [];
      for (const stream of body.data.result ?? []) {
        for (const [ns, line] of stream.values ?? []) {
          const at = BigInt(ns);
          all.push({ ns: at, timestamp: new Date(Number(at / 1_000_000n)).toISOString(), line, labels: { ...(stream.stream ?? {}), source: 'loki' } });
        }
      }
      all.sort((a, b) => (a.ns < b.ns ? -1 : a.ns > b.ns ? 1 : 0));
      const shown = all.slice(-limit).map(({ ns: _ns, ...line }) => line);
      return { lines: shown, note: `${shown.length} line${shown.length === 1 ? '' : 's'} from Loki for ${team}/${app} (last ${sinceSeconds}s)` };
    },
  };
}
