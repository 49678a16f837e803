/**
 * `pds rollouts promote TEAM/APP` and `pds rollouts abort TEAM/APP` (`POST /api/v1/rollouts/{team}/{app}/promote|abort`,
 * README "Rollouts"): skip the remaining pauses of a canary or blue-green release in progress, or put all traffic
 * back on the stable tag. With `--wait`, follow the release's deploy workflow until it settles, as `pds wait` does.
 * A promote the tenant's policy holds for approval prints who may approve until when, and the command that approves
 * it; it does not wait.
 */
import { Command } from 'commander';
import { abortRollout, promoteRollout } from '../../tools/rollouts.js';
import { clientOf } from '../client/api.js';
import { apiCommand, contextOf, teamApp } from '../client/command.js';
import { withWait } from '../client/execute.js';
import { forPeople, print } from '../client/output.js';
import { waitForWorkflow } from './wait.js';

function rolloutAction(name: 'promote' | 'abort', summary: string) {
  const tool = name === 'promote' ? promoteRollout : abortRollout;
  return withWait(apiCommand(name, summary).argument('<team/app>', 'the service, e.g. acme/web')).action(
    async (target: string, o: { wait?: boolean; timeout: string }, command: Command) => {
      const { session, format } = await contextOf(command);
      const answer = await clientOf(session).call(tool, teamApp(target));
      if (!o.wait || forPeople(format)) {
        print(format, answer, (a) => ({
          head: ['workflow', 'strategy', 'stable', 'release', 'weight', 'message'],
          rows: [[a.workflowName, a.rollout.strategy, a.rollout.stableTag, a.rollout.canaryTag, `${a.rollout.canaryWeight}%`, a.message]],
        }));
      }
      const held = answer.approval;
      if (held) {
        // Held for approval: nothing changed yet, so there is nothing of this command to wait for.
        process.stderr.write(
          `Waiting for approval ${held.id}: ${held.required} from ${held.approvers.join(', ')} until ${held.expiresAt}; nothing was promoted yet.\n` +
            `An approver other than you runs: pds approvals approve ${held.id}   (or: pds approvals reject ${held.id} --reason …)\n` +
            `Follow the release with: pds wait ${answer.workflowName}\n`,
        );
        return;
      }
      if (o.wait) await waitForWorkflow(session, format, answer.workflowName, o.timeout);
      else process.stderr.write(`Follow it with: pds wait ${answer.workflowName} (or add --wait)\n`);
    },
  );
}

export function rolloutsCommand() {
  return new Command('rollouts')
    .summary('promote or abort a canary or blue-green release')
    .addCommand(rolloutAction('promote', 'skip the remaining pauses: the release takes all traffic now'))
    .addCommand(rolloutAction('abort', 'put all traffic back on the stable tag; the deploy fails'));
}
