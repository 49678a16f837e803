/**
 * `pds policy get TEAM`, `pds policy set TEAM -f FILE`, `pds policy events TEAM`: a tenant's governance policy and its
 * event feed (README "Governance"; `GET`/`PUT /api/v1/tenants/{name}/policy`, `GET /api/v1/tenants/{name}/events`).
 * The file is YAML or JSON (YAML reads both); `-f -` reads standard input. The server validates the document.
 */
import { readFile } from 'node:fs/promises';
import { text as readAll } from 'node:stream/consumers';
import { Command } from 'commander';
import { parse } from 'yaml';
import { getTenantPolicy, listTenantEvents, setTenantPolicy } from '../../tools/governance.js';
import type { ToolInput } from '../../tools/rest-client.js';
import { clientOf } from '../client/api.js';
import { apiCommand, contextOf } from '../client/command.js';
import { usageError } from '../client/errors.js';
import { print, type TableView } from '../client/output.js';

/** One row per rule: approvals, each freeze window, promotion. */
function rules(policy: any): TableView {
  const rows: string[][] = [];
  if (policy.approvals) {
    const a = policy.approvals;
    rows.push(['approvals', `${a.operations.join(', ')}: ${a.required} of ${a.approvers.join(', ')}, expires after ${a.expiresAfter}`]);
  }
  (policy.freezeWindows ?? []).forEach((w: any, i: number) => {
    rows.push([`freeze ${w.name ?? `window-${i + 1}`}`, `${w.operations.join(', ')}: "${w.schedule}" for ${w.duration} (${w.timeZone}) — ${w.reason}`]);
  });
  if (policy.promotion) rows.push(['promotion', `from ${policy.promotion.from} after ${policy.promotion.minHealthy} healthy`]);
  return { head: ['rule', 'details'], rows };
}

/** The details column of one feed event. */
function eventDetails(e: any): string {
  if (e.type === 'freeze.overridden') return `${e.data.workflowName} past window ${e.data.window}: ${e.data.reason}`;
  // A promote held for approval names its release's workflow (issue 22 item 4).
  const subject = e.data?.subject === 'promote' ? `promote of ${e.data.workflowName}` : e.data?.workflowName;
  if (e.type === 'approval.requested') {
    return `${subject} needs ${e.data.required} of ${e.data.approvers.join(', ')} until ${e.data.expiresAt}`;
  }
  if (e.type === 'approval.decided') return `${subject} ${e.data.decision}${e.data.comment ? `: ${e.data.comment}` : ''}`;
  if (e.type === 'workflow.cancelled') return `${e.data.workflowName} (${e.data.operation})${e.data.reason ? `: ${e.data.reason}` : ''}`;
  if (e.type === 'rollout.promoted' || e.type === 'rollout.aborted') {
    const approved = e.data.approvedBy?.length ? `, approved by ${e.data.approvedBy.join(', ')}` : '';
    return `${e.data.service} ${e.data.canaryTag} (stable ${e.data.stableTag}), ${e.data.workflowName}${approved}`;
  }
  return '';
}

/** The document in `file` as sent: the server validates it, so a wrong one is refused with the server's message. */
async function readDocument(file: string): Promise<ToolInput<typeof setTenantPolicy>['policy']> {
  let text: string;
  try {
    text = file === '-' ? await readAll(process.stdin) : await readFile(file, 'utf8');
  } catch (err) {
    throw usageError(`cannot read ${file}: ${(err as Error).message}`);
  }
  try {
    return (parse(text) ?? {}) as ToolInput<typeof setTenantPolicy>['policy'];
  } catch (err) {
    throw usageError(`${file} is not YAML or JSON: ${(err as Error).message}`);
  }
}

export function policyCommand() {
  const get = apiCommand('get', "show a tenant's policy")
    .argument('<team>', 'the tenant, e.g. acme')
    .action(async (team: string, _o, command) => {
      const { session, format } = await contextOf(command);
      const answer = await clientOf(session).call(getTenantPolicy, { name: team });
      print(format, answer.policy, rules);
    });
  const set = apiCommand('set', "replace a tenant's policy (tenant admins)")
    .argument('<team>', 'the tenant, e.g. acme')
    .requiredOption('-f, --file <file>', 'the policy as YAML or JSON; - reads standard input')
    .action(async (team: string, o: { file: string }, command) => {
      const { session, format } = await contextOf(command);
      const answer = await clientOf(session).call(setTenantPolicy, { name: team, policy: await readDocument(o.file) });
      for (const warning of answer.warnings ?? []) process.stderr.write(`Warning: ${warning}\n`);
      print(format, answer.policy, rules);
    });
  const events = apiCommand('events', 'what happened in a tenant besides executions, newest first')
    .argument('<team>', 'the tenant, e.g. acme')
    .option('--limit <n>', 'how many (1 to 200)', '50')
    .action(async (team: string, o: { limit: string }, command) => {
      const { session, format } = await contextOf(command);
      const list = await clientOf(session).call(listTenantEvents, { name: team, limit: o.limit });
      print(format, list, (l) => ({
        head: ['time', 'user', 'event', 'details'],
        rows: l.items.map((e: any) => [
          e.timestamp,
          e.userId,
          e.type,
          eventDetails(e),
        ]),
      }));
    });
  return new Command('policy').summary("a tenant's governance policy and event feed").addCommand(get).addCommand(set).addCommand(events);
}
