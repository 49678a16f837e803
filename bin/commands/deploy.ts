/**
 * `pds deploy TEAM/APP --tag X.Y.Z [--repo OWNER/REPO] [--wait]`: build and deploy a tag (`deploy-service`,
 * `action=deploy`); with `--onboard --port P` the first deployment of a service (`action=onboard`), with `--strategy`
 * canary or blue-green for its later releases (README "Rollouts"); with `--from TEAM/APP` the exact image (by digest)
 * another service runs healthy now (`platform_promote_image`: a `deploy-service` with `image_digest` and
 * `promoted_from`, issue 20 item 4). Without `--repo`, a
 * deploy takes the repository of the service's last deploy: the service record does not carry it (docs/api.md#service),
 * the deploy history does (`dockerfile_repo` of `GET /api/v1/workflows?team=…&service=…&operation=deploy-service`).
 */
import type { Command } from 'commander';
import { listWorkflows, MAX_WORKFLOWS } from '../../tools/workflows.js';
import { cliErrorOf, clientOf } from '../client/api.js';
import { apiCommand, contextOf, flagsOf, paramOption, teamApp } from '../client/command.js';
import { CliError, usageError } from '../client/errors.js';
import { submit, withWait, type Submitted } from '../client/execute.js';
import { forPeople, print } from '../client/output.js';
import { cliWords, flagWords } from '../client/words.js';
import { waitForWorkflow } from './wait.js';

/** The repository (and Dockerfile path) of the last deploy of `team/app` that named one. @throws CliError when none did. */
async function lastRepository(command: Command, team: string, app: string): Promise<{ repo: string; path?: string; workflow: string }> {
  const { session } = await contextOf(command);
  const history = await clientOf(session).call(listWorkflows, { team, service: app, operation: 'deploy-service', limit: MAX_WORKFLOWS });
  const last = history.items.find((w) => w.parameters.dockerfile_repo);
  if (!last) {
    throw new CliError(
      `no earlier deploy of ${team}/${app} names its repository (the service record does not keep it): pass --repo OWNER/REPO, ` +
        `or onboard it first: pds deploy ${team}/${app} --onboard --port PORT --tag X.Y.Z --repo OWNER/REPO`,
    );
  }
  return { repo: last.parameters.dockerfile_repo!, path: last.parameters.dockerfile_path, workflow: last.name };
}

export function deployCommand() {
  return withWait(
    apiCommand('deploy', 'build and deploy a tag (--onboard the first time)')
      .argument('<team/app>', 'the service, e.g. acme/web')
      .addOption(paramOption('--tag <tag>', 'the git tag to build and deploy, e.g. 1.4.2 (or --from)', 'git_tag'))
      .option('--from <team/app>', 'deploy the exact image (by digest) that service runs healthy now, e.g. acme-staging/web')
      .addOption(paramOption('--repo <owner/repo>', 'the repository with the Dockerfile (default: the one of the last deploy)', 'dockerfile_repo'))
      .addOption(paramOption('--dockerfile-path <path>', 'the Dockerfile when not at the repository root', 'dockerfile_path'))
      .option('--onboard', 'first deployment: creates the service (needs --port and --repo)')
      .addOption(paramOption('--port <port>', 'with --onboard: the container port, e.g. 8787', 'port'))
      .addOption(paramOption('--template <name>', 'with --onboard: the service template', 'service_template').default('default'))
      .addOption(paramOption('--health-check-path <path>', 'with --onboard: probe path when not /healthz', 'health_check_path'))
      .addOption(paramOption('--strategy <strategy>', 'with --onboard: how later releases roll out: rolling, canary or blue-green', 'strategy'))
      .addOption(paramOption('--canary-steps <steps>', 'with --strategy canary: weights and pauses, e.g. 10%:2m,50%:5m', 'canary_steps'))
      .addOption(paramOption('--override-reason <why>', 'break-glass during a freeze window (tenant admins, signed in as a person)', 'override_reason')),
  ).action(
    async (
      target: string,
      o: {
        tag?: string;
        from?: string;
        repo?: string;
        dockerfilePath?: string;
        onboard?: boolean;
        port?: string;
        template: string;
        healthCheckPath?: string;
        strategy?: string;
        canarySteps?: string;
        overrideReason?: string;
      },
      command: Command,
    ) => {
      const { team, app } = teamApp(target);
      if (o.from) {
        if (o.tag || o.repo || o.dockerfilePath || o.onboard || o.strategy || o.canarySteps || o.overrideReason) {
          throw usageError('--from deploys what the other service runs: leave out --tag, --repo, --dockerfile-path, --onboard and --override-reason');
        }
        return void (await promote(command, team, app, o.from));
      }
      if (!o.tag) throw usageError("required option '--tag <tag>' not specified (or --from TEAM/APP to promote what another service runs)");
      if (o.onboard && !o.port) throw usageError('--onboard needs --port (the container port, e.g. --port 8787)');
      if (o.onboard && !o.repo) throw usageError('--onboard needs --repo (the repository with the Dockerfile, e.g. --repo acme/web)');
      if (!o.onboard && (o.port || o.healthCheckPath || o.strategy || o.canarySteps)) {
        throw usageError('--port, --health-check-path, --strategy and --canary-steps go with --onboard');
      }
      let { repo, dockerfilePath } = o;
      if (!repo) {
        const last = await lastRepository(command, team, app);
        repo = last.repo;
        dockerfilePath ??= last.path;
        process.stderr.write(`Building ${repo}${dockerfilePath ? ` (${dockerfilePath})` : ''}, the repository of the last deploy ${last.workflow}.\n`);
      }
      await submit(command, 'deploy-service', {
        action: o.onboard ? 'onboard' : 'deploy',
        team_name: team,
        component_name: app,
        git_tag: o.tag,
        dockerfile_repo: repo,
        dockerfile_path: dockerfilePath,
        ...(o.overrideReason && { override_reason: o.overrideReason }),
        ...(o.onboard && {
          port: o.port,
          service_template: o.template,
          health_check_path: o.healthCheckPath,
          strategy: o.strategy as 'rolling' | 'canary' | 'blue-green' | undefined,
          canary_steps: o.canarySteps,
        }),
      });
    },
  );
}


/**
 * `pds deploy TEAM/APP --from TEAM/APP`: `platform_promote_image` through its REST binding (`POST /api/v1/promotions`),
 * printed and followed (`--wait`) as any submission is.
 * @throws CliError as the server refuses (the promotion rule's 403 says what is missing).
 */
async function promote(command: Command, team: string, app: string, from: string): Promise<Submitted> {
  const { wait, timeout } = command.opts<{ wait?: boolean; timeout?: string }>();
  const { session, format } = await contextOf(command);
  // Loaded here: the tool's module brings the execute pipeline, which no other deploy needs on the client.
  const { promoteImage } = await import('../../tools/operations/promote.js');
  let submitted: Submitted;
  try {
    submitted = (await clientOf(session).call(promoteImage, { team_name: team, component_name: app, from })) as Submitted;
  } catch (err) {
    const refused = cliErrorOf(err);
    if (refused instanceof CliError) throw new CliError(flagWords(cliWords(refused.message), flagsOf(command)), refused.exitCode);
    throw refused;
  }
  if (!wait || forPeople(format)) {
    print(format, submitted, (s: Submitted) => ({ head: ['workflow', 'operation', 'status', 'message'], rows: [[s.workflowName, s.operation, s.status, cliWords(s.message)]] }));
  }
  if (wait) await waitForWorkflow(session, format, submitted.workflowName, timeout ?? '30m');
  else process.stderr.write(`Follow it with: pds wait ${submitted.workflowName} (or add --wait)\n`);
  return submitted;
}
