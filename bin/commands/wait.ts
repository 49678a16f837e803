/**
 * `pds wait WORKFLOW [--timeout 30m]`: follow a workflow until it settles, through the REST wait
 * (`GET /api/v1/workflows/{name}?wait_seconds=`, issue 11 item 2), showing its steps as they run (an ora spinner on a
 * terminal, one line per finished step otherwise, both on stderr). Prints the workflow when it settles. Exit 0 when it
 * succeeded, 1 when it failed (with the failed step and its log tail), 4 when the timeout came first.
 */
import ora from 'ora';
import type { ToolOutput } from '../../tools/rest-client.js';
import { getWorkflow } from '../../tools/workflows.js';
import { clientOf } from '../client/api.js';
import { apiCommand, contextOf } from '../client/command.js';
import { CliError, EXIT, usageError } from '../client/errors.js';
import { print } from '../client/output.js';

/** One REST wait while showing progress, seconds: short, so the step display follows the workflow. */
const SLICE_SECONDS = 5;

/** The workflow as `platform_get_workflow` (`GET /api/v1/workflows/{name}`) answers it. */
type WorkflowView = ToolOutput<typeof getWorkflow>;

/** `30m` → 1800; units s, m, h. @throws CliError (usage) for anything else. */
export function timeoutSeconds(text: string): number {
  const m = /^([1-9]\d{0,5})([smh])$/.exec(text);
  if (!m) throw usageError(`--timeout must be a duration like 90s, 30m or 2h (got "${text}")`);
  return Number(m[1]) * { s: 1, m: 60, h: 3600 }[m[2] as 's' | 'm' | 'h'];
}

export function waitCommand() {
  return apiCommand('wait', 'wait for a workflow, showing its steps; exit 0 if it succeeded')
    .argument('<workflow>', 'the workflow name a deploy printed, e.g. deploy-service-x7k2p')
    .option('--timeout <duration>', 'give up after this long (exit 4), e.g. 10m', '30m')
    .action(async (name: string, o: { timeout: string }, command) => {
      const limit = timeoutSeconds(o.timeout);
      const { session, format } = await contextOf(command);
      const client = clientOf(session);
      const deadline = Date.now() + limit * 1000;
      const spinner = ora({ text: `waiting for ${name}`, stream: process.stderr });
      if (spinner.isEnabled) spinner.start();
      const shown = new Set<string>();
      const show = (view: WorkflowView) => {
        view.steps.forEach((step, i) => {
          const key = `${i}:${step.status}`;
          if (shown.has(key) || !['succeeded', 'failed', 'skipped'].includes(step.status)) return;
          shown.add(key);
          const line = `step ${i + 1}/${view.steps.length}: ${step.name}`;
          if (step.status === 'succeeded') spinner.succeed(line);
          else if (step.status === 'failed') spinner.fail(line);
          else spinner.info(`${line} (skipped)`);
        });
        const running = view.steps.findIndex((s) => s.status === 'running' || s.status === 'pending');
        if (!view.settled && spinner.isEnabled) {
          spinner.start(running >= 0 ? `step ${running + 1}/${view.steps.length}: ${view.steps[running]!.name}` : `${view.phase}: ${name}`);
        }
      };
      let view: WorkflowView;
      for (;;) {
        const left = Math.ceil((deadline - Date.now()) / 1000);
        const wait = Math.max(0, Math.min(SLICE_SECONDS, left));
        view = await client.call(getWorkflow, { name, wait_seconds: wait });
        show(view);
        if (view.settled || Date.now() >= deadline) break;
      }
      spinner.stop();
      print(format, view, (v: WorkflowView) => ({
        head: ['step', 'status', 'started', 'finished'],
        rows: v.steps.map((s) => [s.name, s.status, s.startedAt, s.finishedAt]),
      }));
      if (!view.settled) throw new CliError(`${name} is still ${view.phase} after ${o.timeout}; wait again with: pds wait ${name}`, EXIT.timedOut);
      if (view.audit.status === 'failed') {
        const step = view.failedStep;
        const tail = step?.logTail.length ? `\n${step.logTail.map((l) => `  ${l}`).join('\n')}` : '';
        throw new CliError(`${name} failed${step ? ` at ${step.name}` : ''}: ${view.audit.message}${tail}`);
      }
      process.stderr.write(`${name} succeeded${view.host ? `: https://${view.host}` : ''}\n`);
    });
}
