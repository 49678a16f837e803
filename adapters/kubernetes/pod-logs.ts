/**
 * Service logs from its pods through the API server (`GET /api/v1/namespaces/<team>/pods/<pod>/log` with `tailLines`,
 * `sinceSeconds` and `timestamps`), merged across pods by time, the newest `lines` kept (issue 10 "Logs").
 */
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { Upstream } from '../../core/errors.js';
import type { LogLine } from '../../core/model.js';
import type { LogSource } from './backend.js';
import { describe } from './informers.js';
import { isNoContent } from './kubeconfig.js';
import { LABEL } from './objects.js';

/** Split `2026-11-22T20:41:15.123456789Z text` (a kubelet line with `timestamps=true`) into its time and text. */
export function parseTimestamped(raw: string): { timestamp: string; line: string } | undefined {
  const space = raw.indexOf(' ');
  if (space < 20) return undefined;
  const stamp = raw.slice(0, space);
  const ms = Date.parse(stamp);
  if (Number.isNaN(ms)) return undefined;
  return { timestamp: new Date(ms).toISOString(), line: raw.slice(space + 1) };
}

/**
 * The pods of `<team>/<app>` (labels `pds.dev/tenant`, `pds.dev/service`), each asked for its newest `lines` of the
 * last `sinceSeconds`. Pods not yet on a node, or whose container has not started (the API server answers 204
 * without a body, or 400 "waiting to start"), or gone since the list (404) are counted in the note.
 * @throws Upstream when the pods cannot be listed, or a log read is refused (e.g. 403: pds's ServiceAccount lacks
 *   `pods/log`), fails, or has no answer within `PDS_KUBE_TIMEOUT_S`: never reported as "no logs yet".
 */
export function podLogSource(kc: KubeConfig): LogSource {
  const core = kc.makeApiClient(CoreV1Api);
  return {
    async read(team, app, { lines, sinceSeconds }) {
      const selector = `${LABEL.tenant}=${team},${LABEL.service}=${app}`;
      const pods = await core.listNamespacedPod({ namespace: team, labelSelector: selector }).catch((err: unknown) => {
        throw new Upstream(`could not list the pods of ${team}/${app}: ${describe(err)}`, { cause: err });
      });
      const limit = Math.max(0, Math.floor(lines));
      const all: LogLine[] = [];
      let waiting = 0;
      let unreadable = 0;
      for (const pod of pods.items) {
        const name = pod.metadata!.name!;
        const container = pod.spec?.containers?.[0]?.name;
        if (!pod.spec?.nodeName || limit === 0) {
          waiting++;
          continue;
        }
        try {
          const text = await core.readNamespacedPodLog({
            name,
            namespace: team,
            container,
            tailLines: limit,
            sinceSeconds: Math.max(1, Math.floor(sinceSeconds)),
            timestamps: true,
          });
          for (const raw of String(text ?? '').split('\n')) {
            const parsed = raw && parseTimestamped(raw);
            if (parsed) all.push({ ...parsed, labels: { pod: name, container: container ?? '', source: 'pod' } });
          }
        } catch (err) {
          const code = (err as { code?: number }).code;
          if (!(isNoContent(err) || code === 400 || code === 404)) {
            throw new Upstream(`could not read the log of pod ${name} of ${team}/${app}: ${describe(err)}`, { cause: err });
          }
          unreadable++;
        }
      }
      all.sort((a, b) => (a.timestamp < b.timestamp ? -1 : a.timestamp > b.timestamp ? 1 : 0));
      const shown = limit === 0 ? [] : all.slice(-limit);
      const notes = [
        `${shown.length} line${shown.length === 1 ? '' : 's'} from ${pods.items.length} pod${pods.items.length === 1 ? '' : 's'} of ${team}/${app} (last ${sinceSeconds}s)`,
      ];
      if (all.length > shown.length) notes.push(`${all.length - shown.length} older lines not shown`);
      if (waiting) notes.push(`${waiting} pod${waiting === 1 ? '' : 's'} not yet on a node`);
      if (unreadable) notes.push(`${unreadable} pod${unreadable === 1 ? '' : 's'} without readable logs yet`);
      return { lines: shown, note: notes.join('; ') };
    },
  };
}
