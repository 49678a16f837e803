/**
 * What every command of the `pds` CLI for people shares: the `--server` and `-o` options (accepted after the command
 * name too, as people type them), `TEAM/APP` arguments, and the session they open.
 */
import { Command, Option } from 'commander';
import { usageError } from './errors.js';
import { FORMATS, outputFormat, type Format } from './output.js';
import { openSession, type Session } from './session.js';

/** A command that talks to a pds: `--server URL` and `-o table|json|yaml`. */
export function apiCommand(name: string, summary: string): Command {
  return new Command(name)
    .summary(summary)
    .description(summary)
    .addOption(new Option('--server <url>', 'pds base URL (default: $PDS_BASE_URL, else the one you signed in to)'))
    .addOption(new Option('-o, --output <format>', 'output format (default: table on a terminal, json when piped)').choices(FORMATS));
}

/** The session and output format of a command's invocation. */
export async function contextOf(command: Command): Promise<{ session: Session; format: Format }> {
  const options = command.optsWithGlobals<{ server?: string; output?: string }>();
  return { format: outputFormat(options.output), session: await openSession(options.server) };
}

/** A `TEAM/APP` argument. @throws CliError (usage) when it is not of that form. */
export function teamApp(value: string): { team: string; app: string } {
  const match = /^([^/\s]+)\/([^/\s]+)$/.exec(value);
  if (!match) throw usageError(`expected TEAM/APP, e.g. acme/web (got "${value}")`);
  return { team: match[1]!, app: match[2]! };
}

/** Which operation parameter each flag sets (see {@link paramOption}). */
const PARAMETERS = new WeakMap<Option, string>();

/**
 * A flag that sets operation parameter `parameter`; the server's messages about that parameter then name the flag.
 * @example paramOption('--tag <tag>', 'the git tag', 'git_tag')
 */
export function paramOption(flags: string, description: string, parameter: string): Option {
  const option = new Option(flags, description);
  PARAMETERS.set(option, parameter);
  return option;
}

/**
 * Parameter → what the person typed for it, from `command`'s option definitions ({@link paramOption}); `team_name`
 * and `component_name` are the `TEAM/APP` argument.
 * @example flagsOf(deploy) // { git_tag: '--tag', dockerfile_repo: '--repo', …, team_name: 'TEAM', component_name: 'APP' }
 */
export function flagsOf(command: Command): Record<string, string> {
  const flags: Record<string, string> = { team_name: 'TEAM', component_name: 'APP' };
  for (const option of command.options) {
    const parameter = PARAMETERS.get(option);
    if (parameter && option.long) flags[parameter] = option.long;
  }
  return flags;
}

/**
 * Commander checks required options before unknown ones, so `--tags 1.0` answered "required option '--tag' not
 * specified" and never "Did you mean --tag?". This moves the required-option check of `command` and its
 * subcommands after commander's unknown-option check (a `preAction` hook), with the same message and exit.
 */
export function unknownOptionsFirst(command: Command): Command {
  const required = command.options.filter((o) => o.mandatory);
  for (const option of required) option.makeOptionMandatory(false);
  if (required.length) {
    command.hook('preAction', (self, actionCommand) => {
      if (actionCommand !== self) return;
      for (const option of required) {
        if (self.getOptionValue(option.attributeName()) === undefined) self.error(`error: required option '${option.flags}' not specified`, { code: 'commander.missingMandatoryOptionValue' });
      }
    });
  }
  for (const sub of command.commands) unknownOptionsFirst(sub);
  return command;
}
