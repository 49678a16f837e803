/**
 * `pds workflows [--team T] [--service APP] [--operation OP] [--limit N]`: the workflow history, newest first
 * (`GET /api/v1/workflows`); with `--team` and `--service`, a service's deploy history.
 *
 * `pds workflows cancel WORKFLOW [--reason TEXT] [--force]` stops a workflow that has not settled (`--force`: Argo's
 * Terminate, which skips deploy-service's undo; the answer warns so), and
 * `pds workflows retry WORKFLOW [--yes] [--wait]` executes a failed one again (issue 22;
 * `POST /api/v1/workflows/{name}/cancel|retry`). A retry of an operation that needs confirmation shows its plan and
 * asks, as `pds retire` does; `--yes` answers for the person.
 */
import type { Command } from 'commander';
import { ConfirmationRequired } from '../../core/errors.js';
import { listWorkflows, MAX_WORKFLOWS } from '../../tools/workflows.js';
import { cliErrorOf, clientOf } from '../client/api.js';
import { apiCommand, contextOf } from '../client/command.js';
import { CliError, usageError } from '../client/errors.js';
import { withWait } from '../client/execute.js';
import { forPeople, print } from '../client/output.js';
import { ago, state } from '../client/table.js';
import { cliWords } from '../client/words.js';
import { confirmed, plan } from './retire.js';
import { waitForWorkflow } from './wait.js';

function cancelCommand() {
  return apiCommand('cancel', 'stop a running or awaiting workflow')
    .argument('<workflow>', 'the workflow, e.g. deploy-service-x7k2p')
    .option('--reason <text>', 'why, for the tenant\'s event feed, e.g. "wrong tag"')
    .option('--force', 'on Kubernetes: terminate at once instead of stopping; skips the undo (exit handler), so the service may be left half-rolled')
    .action(async (name: string, o: { reason?: string; force?: boolean }, command: Command) => {
      // Loaded when used: every other command starts without these definitions.
      const { cancelWorkflow } = await import('../../tools/workflow-control.js');
      const { session, format } = await contextOf(command);
      const answer = await clientOf(session).call(cancelWorkflow, { name, ...(o.reason && { reason: o.reason }), ...(o.force && { force: true }) });
      print(format, answer, (a) => ({ head: ['workflow', 'phase', 'message'], rows: [[a.workflow, state(a.phase), cliWords(a.message)]] }));
    });
}

function retryCommand() {
  return withWait(
    apiCommand('retry', 'run a failed workflow again with its parameters')
      .argument('<workflow>', 'the failed workflow, e.g. deploy-service-x7k2p')
      .option('-y, --yes', 'do not ask when the operation needs confirmation'),
  ).action(async (name: string, o: { yes?: boolean; wait?: boolean; timeout: string }, command: Command) => {
    const { retryWorkflow } = await import('../../tools/workflow-control.js');
    const { session, format } = await contextOf(command);
    const client = clientOf(session);
    const retry = async (confirm?: string) => {
      const answer = await client.call(retryWorkflow, { name, ...(confirm && { confirm }) });
      if (!o.wait || forPeople(format)) {
        print(format, answer, (a) => ({
          head: ['workflow', 'retry of', 'operation', 'status', 'message'],
          rows: [[a.workflowName, a.retryOf, a.operation, a.status, cliWords(a.message)]],
        }));
      }
      if (o.wait) await waitForWorkflow(session, format, answer.workflowName, o.timeout);
      else process.stderr.write(`Follow it with: pds wait ${answer.workflowName} (or add --wait)\n`);
    };
    try {
      return await retry();
    } catch (err) {
      if (!(err instanceof ConfirmationRequired)) throw cliErrorOf(err);
      process.stderr.write(`${plan(err.message)}\n`);
      if (!o.yes && !(await confirmed(`Retry ${name}? This cannot be undone. [y/N] `))) throw new CliError(`not retried: nothing was changed`);
      await retry(err.confirm);
    }
  });
}

export function workflowsCommand() {
  return apiCommand('workflows', 'workflow history (--team, --service); cancel, retry')
    .addCommand(cancelCommand())
    .addCommand(retryCommand())
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
          state(w.phase),
          [w.parameters.team_name, w.parameters.component_name].filter(Boolean).join('/'),
          w.parameters.git_tag ?? w.parameters.target_tag ?? w.parameters.image_tag ?? '',
          ago(w.startedAt),
          w.userId,
        ]),
        empty: `no workflows${o.team ? ` in ${o.team}${o.service ? `/${o.service}` : ''}` : ''} yet — start one: pds deploy ${o.team ?? 'TEAM'}/${o.service ?? 'APP'} --tag X.Y.Z`,
      }));
    });
}
