/**
 * `pds logs TEAM/APP [--since 1h] [--lines 100] [-f]`: a service's log lines (`GET /api/v1/logs/{team}/{app}`);
 * `-f` asks again every 2 s and prints the lines not printed yet, until interrupted.
 */
import { InvalidArgumentError } from 'commander';
import { apiCommand, contextOf, teamApp } from '../client/command.js';
import { getLogs, MAX_LOG_LINES } from '../../tools/logs.js';
import { clientOf } from '../client/api.js';
import { print } from '../client/output.js';

/** Seconds between two reads with `-f`. */
const FOLLOW_SECONDS = 2;

/** `--lines`, checked by the tool's own schema (its message names the limit). */
function lineCount(value: string): number {
  const parsed = getLogs.input.shape.lines.safeParse(value);
  if (!parsed.success) throw new InvalidArgumentError(parsed.error.issues.map((i) => i.message).join('; '));
  return parsed.data;
}

export function logsCommand() {
  return apiCommand('logs', "a service's log lines (-f to follow)")
    .argument('<team/app>', 'the service, e.g. acme/web')
    .option('--since <duration>', 'how far back, e.g. 15m, 1h, 24h', '1h')
    .option('--lines <n>', `at most this many lines, 1 to ${MAX_LOG_LINES}`, lineCount, 100)
    .option('-f, --follow', 'keep printing new lines until interrupted')
    .action(async (target: string, options: { since: string; lines: number; follow?: boolean }, command) => {
      const { session, format } = await contextOf(command);
      const client = clientOf(session);
      const read = (since: string) => client.call(getLogs, { ...teamApp(target), lines: options.lines, since });
      const seen = new Set<string>();
      const show = (lines: { timestamp: string; line: string; labels: Record<string, string> }[]) => {
        for (const l of lines) {
          const key = `${l.timestamp} ${l.line}`;
          if (seen.has(key)) continue;
          seen.add(key);
          // Followed lines stream: text on a terminal, one JSON object per line otherwise.
          process.stdout.write(format === 'table' ? `${l.timestamp}  ${l.line}\n` : JSON.stringify(l) + '\n');
        }
      };
      const first = await read(options.since);
      if (!options.follow) {
        print(format, first, (r) => ({ head: ['time', 'line'], rows: r.lines.map((l: any) => [l.timestamp, l.line]) }));
        return;
      }
      show(first.lines);
      for (;;) {
        await new Promise((resolve) => setTimeout(resolve, FOLLOW_SECONDS * 1000));
        show((await read('1m')).lines);
      }
    });
}
