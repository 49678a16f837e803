/**
 * `pds approvals [--team T] [--state S]`, `pds approvals approve ID [--comment …]`, `pds approvals reject ID --reason …`:
 * executions a tenant's policy holds for approval (issue 20 item 2; README "Governance"), through
 * `GET /api/v1/approvals` and `POST /api/v1/approvals/{id}/approve|reject`. A decision from the CLI counts as a person's
 * when signed in with `pds login` (a self-issued token); the server refuses PATs and the requester.
 */
import type { Command } from 'commander';
import { listApprovals, MAX_APPROVALS, reviewApproval } from '../../tools/approvals.js';
import { clientOf } from '../client/api.js';
import { apiCommand, contextOf } from '../client/command.js';
import { forPeople, print } from '../client/output.js';
import { ago, state } from '../client/table.js';

/** One approval as a table row. */
function row(a: any) {
  const target = [a.parameters?.team_name, a.parameters?.component_name].filter(Boolean).join('/');
  const tag = a.parameters?.git_tag ?? a.parameters?.target_tag ?? a.parameters?.image_tag ?? a.parameters?.canary_tag ?? '';
  // A promote of a rollout (issue 22 item 4) waits on no workflow of its own: workflowName is its release's.
  const what = a.subject === 'promote' ? 'promote' : a.operation;
  return [
    a.id,
    a.workflowName,
    `${what} ${target}${tag ? ` ${tag}` : ''}`,
    a.requestedBy,
    `${a.approvedBy.length}/${a.required}`,
    a.approvers.join(', '),
    state(a.state),
    a.state === 'pending' ? ago(a.expiresAt) : (a.decidedBy ?? ''),
    a.canDecide === undefined ? '' : a.canDecide ? 'yes' : 'no',
  ];
}
const HEAD = ['id', 'workflow', 'what', 'requested by', 'approved', 'approvers', 'state', 'expires / by', 'you decide'];

/** Decide one approval and print the answer; the server's message goes to stderr on a terminal. */
async function decide(command: Command, input: { id: string; decision: 'approve' | 'reject'; comment?: string; reason?: string }) {
  const { session, format } = await contextOf(command);
  const answer = await clientOf(session).call(reviewApproval, input);
  print(format, answer, (x) => ({ head: HEAD, rows: [row(x.approval)] }));
  if (forPeople(format)) process.stderr.write(`${answer.message}\n`);
}

export function approvalsCommand() {
  const approvals = apiCommand('approvals', 'executions waiting for approval: list, approve, reject')
    .option('--team <team>', 'only this tenant, e.g. acme')
    .option('--state <state>', 'pending (default), approved, rejected, expired, cancelled or all', 'pending')
    .option('--limit <n>', `how many, 1-${MAX_APPROVALS}`, '50')
    .action(async (o: { team?: string; state: string; limit: string }, command: Command) => {
      const { session, format } = await contextOf(command);
      const list = await clientOf(session).call(listApprovals, { team: o.team, state: o.state as never, limit: o.limit });
      print(format, list, (l) => ({
        head: HEAD,
        rows: l.items.map(row),
        empty: `no ${o.state === 'all' ? '' : `${o.state} `}approvals you may decide or requested${o.team ? ` in ${o.team}` : ''}`,
      }));
    });
  approvals.addCommand(
    apiCommand('approve', 'approve an execution (a person signed in with pds login; never your own)')
      .argument('<id>', 'the approval id, from pds approvals')
      .option('--comment <text>', 'a note for the record, e.g. "checked the diff"')
      .action((id: string, o: { comment?: string }, command: Command) => decide(command, { id, decision: 'approve', ...(o.comment ? { comment: o.comment } : {}) })),
  );
  approvals.addCommand(
    apiCommand('reject', 'reject an execution: it fails without running')
      .argument('<id>', 'the approval id, from pds approvals')
      .requiredOption('--reason <text>', 'why, e.g. "not during the sale"')
      .action((id: string, o: { reason: string }, command: Command) => decide(command, { id, decision: 'reject', reason: o.reason })),
  );
  return approvals;
}
