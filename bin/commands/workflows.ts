/**
 * `pds workflows [--team T] [--service APP] [--operation OP] [--limit N]`: the workflow history, newest first
 * (`GET /api/v1/workflows`); with `--team` and `--service`, a service's deploy history.
 */
import { listWorkflows, MAX_WORKFLOWS } from '../../tools/workflows.js';
import { clientOf } from '../client/api.js';
import { apiCommand, contextOf } from '../client/command.js';
import { usageError } from '../client/errors.js';
import { print } from '../client/output.js';

export function workflowsCommand() {
  return apiCommand('workflows', 'workflow history, newest first (--team, --service)')
    .option('--team <team>', 'only this tenant, e.g. acme')
    .option('--service <app>', 'with --team: only this service, e.g. web')
    .option('--operation <name>', 'only this operation, e.g. deploy-service')
    .option('--limit <n>', `how many, 1-${MAX_WORKFLOWS}`, '20')
    .action(async (o: { team?: string; service?: string; operation?: string; limit: string }, command) => {
      if (o.service && !o.team) throw usageError('--service needs --team (e.g. --team acme --service web)');
      const { session, format } = await contextOf(command);
      const list = await clientOf(session).call(listWorkflows, { limit: o.limit, team: o.team, service: o.service, operation: o.operation });
      print(format, list, (l) => ({
        head: ['workflow', 'operation', 'phase', 'target', 'tag', 'started', 'by'],
        rows: l.items.map((w: any) => [
          w.name,
          w.operation + (w.parameters.action ? ` (${w.parameters.action})` : ''),
          w.phase,
          [w.parameters.team_name, w.parameters.component_name].filter(Boolean).join('/'),
          w.parameters.git_tag ?? w.parameters.target_tag ?? w.parameters.image_tag ?? '',
          w.startedAt,
          w.userId,
        ]),
      }));
    });
}
