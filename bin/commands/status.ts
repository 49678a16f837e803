/**
 * `pds status TEAM/APP`: sync and health of a deployed service (`GET /api/v1/status/{team}/{app}`), and its canary or
 * blue-green release when it has one.
 */
import { getStatus } from '../../tools/services.js';
import { apiCommand, contextOf, teamApp } from '../client/command.js';
import { clientOf } from '../client/api.js';
import { print } from '../client/output.js';
import { state } from '../client/table.js';

export function statusCommand() {
  return apiCommand('status', 'sync and health of a deployed service')
    .argument('<team/app>', 'the service, e.g. acme/web')
    .action(async (target: string, _options, command) => {
      const { session, format } = await contextOf(command);
      const status = await clientOf(session).call(getStatus, teamApp(target));
      print(format, status, (s) => {
        const row = [s.argocd.name, state(s.argocd.syncStatus), state(s.argocd.healthStatus), s.service.imageTag, s.service.host, s.argocd.message];
        if (!s.rollout) return { head: ['application', 'sync', 'health', 'image', 'host', 'message'], rows: [row] };
        // A canary or blue-green release beside the fields of `docs/api.md`: where its traffic is, which step, which tags.
        const r = s.rollout;
        const rollout = `${r.strategy} ${r.phase} step ${r.step}/${r.steps}: ${r.canaryWeight}% on ${r.canaryTag}, stable ${r.stableTag || '-'}`;
        return { head: ['application', 'sync', 'health', 'image', 'host', 'rollout', 'message'], rows: [[...row.slice(0, 5), rollout, row[5]]] };
      });
    });
}
