/** `pds rollback TEAM/APP --to X.Y.Z [--wait]`: return a service to a tag it ran before (`rollback-service`). */
import type { Command } from 'commander';
import { apiCommand, paramOption, teamApp } from '../client/command.js';
import { submit, withWait } from '../client/execute.js';

export function rollbackCommand() {
  return withWait(
    apiCommand('rollback', 'return a service to an earlier image tag')
      .argument('<team/app>', 'the service, e.g. acme/web')
      .addOption(paramOption('--to <tag>', 'the image tag to return to, e.g. 1.4.1', 'target_tag').makeOptionMandatory())
      .addOption(paramOption('--override-reason <why>', 'break-glass during a freeze window (tenant admins, signed in as a person)', 'override_reason')),
  ).action(async (target: string, o: { to: string; overrideReason?: string }, command: Command) => {
    const { team, app } = teamApp(target);
    await submit(command, 'rollback-service', {
      team_name: team,
      component_name: app,
      target_tag: o.to,
      ...(o.overrideReason && { override_reason: o.overrideReason }),
    });
  });
}
