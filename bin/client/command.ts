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
