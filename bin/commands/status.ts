/** `pds status TEAM/APP`: sync and health of a deployed service (`GET /api/v1/status/{team}/{app}`). */
import { getStatus } from '../../tools/services.js';
import { apiCommand, contextOf, teamApp } from '../client/command.js';
import { clientOf } from '../client/api.js';
import { print } from '../client/output.js';

export function statusCommand() {
  return apiCommand('status', 'sync and health of a deployed service')
    .argument('<team/app>', 'the service, e.g. acme/web')
    .action(async (target: string, _options, command) => {
      const { session, format } = await contextOf(command);
      const status = await clientOf(session).call(getStatus, teamApp(target));
      print(format, status, (s) => ({
        head: ['application', 'sync', 'health', 'image', 'host', 'message'],
        rows: [[s.argocd.name, s.argocd.syncStatus, s.argocd.healthStatus, s.service.imageTag, s.service.host, s.argocd.message]],
      }));
    });
}
