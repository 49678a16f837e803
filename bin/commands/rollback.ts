/** `pds rollback TEAM/APP --to X.Y.Z`: return a service to a tag it ran before (`rollback-service`). */
import { apiCommand, contextOf, teamApp } from '../client/command.js';
import { executeOperation } from '../client/execute.js';

export function rollbackCommand() {
  return apiCommand('rollback', 'return a service to an earlier image tag')
    .argument('<team/app>', 'the service, e.g. acme/web')
    .requiredOption('--to <tag>', 'the image tag to return to, e.g. 1.4.1')
    .action(async (target: string, o: { to: string }, command) => {
      const { team, app } = teamApp(target);
      const { session, format } = await contextOf(command);
      await executeOperation(session, format, 'rollback-service', { team_name: team, component_name: app, target_tag: o.to });
    });
}
