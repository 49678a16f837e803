/**
 * `pds retire TEAM/APP [--yes] [--wait]`: remove a service for good (`retire-service`). The server never retires on
 * the first call: it answers with the plan and a confirm value (`PDS-Confirm`, valid 5 minutes, once, for this caller
 * and these parameters). The plan is shown, the person is asked, and only a yes sends the value back; `--yes` answers
 * for them.
 */
import { createInterface } from 'node:readline/promises';
import type { Command } from 'commander';
import { apiCommand, contextOf, teamApp } from '../client/command.js';
import { ConfirmationRequired } from '../../core/errors.js';
import { CliError } from '../client/errors.js';
import { executeOperation, submit, withWait } from '../client/execute.js';

/** Ask on stderr, read one line of stdin; no line (end of input) is no. */
export async function confirmed(question: string): Promise<boolean> {
  const rl = createInterface({ input: process.stdin, output: process.stderr, terminal: Boolean(process.stdin.isTTY) });
  try {
    const answer = await Promise.race([rl.question(question), new Promise<string>((resolve) => rl.once('close', () => resolve('')))]);
    return /^y(es)?$/i.test(answer.trim());
  } finally {
    rl.close();
  }
}

/** The plan of a confirmation request, without the API's instructions for sending the value back (the CLI does that). */
export const plan = (message: string) => message.replace(/\s*To proceed, repeat the call[^]*$/, '');

export function retireCommand() {
  return withWait(
    apiCommand('retire', 'remove a service for good (asks first)')
      .argument('<team/app>', 'the service, e.g. acme/web')
      .option('-y, --yes', 'do not ask (for scripts that have shown the plan already)'),
  ).action(async (target: string, o: { yes?: boolean }, command: Command) => {
    const { team, app } = teamApp(target);
    const { session, format } = await contextOf(command);
    const parameters = { team_name: team, component_name: app };
    let confirm: string;
    try {
      await executeOperation(session, format, 'retire-service', parameters);
      return; // a server that did not ask: nothing more to do
    } catch (err) {
      if (!(err instanceof ConfirmationRequired)) throw err;
      confirm = err.confirm;
      process.stderr.write(`${plan(err.message)}\n`);
    }
    if (!o.yes && !(await confirmed(`Retire ${team}/${app}? This cannot be undone. [y/N] `))) {
      throw new CliError(`not retired: ${team}/${app} is unchanged`);
    }
    await submit(command, 'retire-service', { ...parameters, confirm });
  });
}
