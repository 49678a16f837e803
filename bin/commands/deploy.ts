/**
 * `pds deploy TEAM/APP --tag X.Y.Z --repo OWNER/REPO`: build and deploy a tag (`deploy-service`, `action=deploy`);
 * with `--onboard --port P` the first deployment of a service (`action=onboard`).
 */
import { apiCommand, contextOf, teamApp } from '../client/command.js';
import { usageError } from '../client/errors.js';
import { executeOperation } from '../client/execute.js';

export function deployCommand() {
  return apiCommand('deploy', 'build and deploy a tag (--onboard the first time)')
    .argument('<team/app>', 'the service, e.g. acme/web')
    .requiredOption('--tag <tag>', 'the git tag to build and deploy, e.g. 1.4.2')
    .requiredOption('--repo <owner/repo>', 'the repository with the Dockerfile, e.g. acme/web')
    .option('--dockerfile-path <path>', 'the Dockerfile when not at the repository root')
    .option('--onboard', 'first deployment: creates the service (needs --port)')
    .option('--port <port>', 'with --onboard: the container port, e.g. 8787')
    .option('--template <name>', 'with --onboard: the service template', 'default')
    .option('--health-check-path <path>', 'with --onboard: probe path when not /healthz')
    .action(async (target: string, o: { tag: string; repo: string; dockerfilePath?: string; onboard?: boolean; port?: string; template: string; healthCheckPath?: string }, command) => {
      const { team, app } = teamApp(target);
      if (o.onboard && !o.port) throw usageError('--onboard needs --port (the container port, e.g. --port 8787)');
      if (!o.onboard && (o.port || o.healthCheckPath)) throw usageError('--port and --health-check-path go with --onboard');
      const { session, format } = await contextOf(command);
      await executeOperation(session, format, 'deploy-service', {
        action: o.onboard ? 'onboard' : 'deploy',
        team_name: team,
        component_name: app,
        git_tag: o.tag,
        dockerfile_repo: o.repo,
        dockerfile_path: o.dockerfilePath,
        ...(o.onboard && { port: o.port, service_template: o.template, health_check_path: o.healthCheckPath }),
      });
    });
}
