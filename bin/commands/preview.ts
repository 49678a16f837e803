/** `pds preview TEAM/APP --tag X.Y.Z [--ttl-hours 24]`: an ephemeral preview environment (`preview-deploy`). */
import { apiCommand, contextOf, teamApp } from '../client/command.js';
import { executeOperation } from '../client/execute.js';

export function previewCommand() {
  return apiCommand('preview', 'open a preview environment of an image tag')
    .argument('<team/app>', 'the service, e.g. acme/web')
    .requiredOption('--tag <tag>', 'the image tag to preview, e.g. 1.5.0')
    .option('--ttl-hours <hours>', 'how long it lives, 1 to 720 hours', '24')
    .action(async (target: string, o: { tag: string; ttlHours: string }, command) => {
      const { team, app } = teamApp(target);
      const { session, format } = await contextOf(command);
      await executeOperation(session, format, 'preview-deploy', { team_name: team, component_name: app, image_tag: o.tag, ttl_hours: o.ttlHours });
    });
}
