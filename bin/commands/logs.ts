/**
 * `pds logs TEAM/APP [--since 1h] [--lines 100] [-f]`: a service's log lines (`GET /api/v1/logs/{team}/{app}`);
 * `-f` asks again every 2 s and prints the lines not printed yet, until interrupted.
 */
import { InvalidArgumentError } from 'commander';
import { apiCommand, contextOf, servicePath, teamApp } from '../client/command.js';
import { callApi } from '../client/api.js';
import { forPeople, print } from '../client/output.js';

/** Seconds between two reads with `-f`. */
const FOLLOW_SECONDS = 2;

function lineCount(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 1000) throw new InvalidArgumentError('a whole number from 1 to 1000');
  return n;
}

export function logsCommand() {
  return apiCommand('logs', "a service's log lines (-f to follow)")
    .argument('<team/app>', 'the service, e.g. acme/web')
    .option('--since <duration>', 'how far back, e.g. 15m, 1h, 24h', '1h')
    .option('--lines <n>', 'at most this many lines, 1 to 1000', lineCount, 100)
    .option('-f, --follow', 'keep printing new lines until interrupted')
    .action(async (target: string, options: { since: string; lines: number; follow?: boolean }, command) => {
      const { session, format } = await contextOf(command);
      const path = (since: string) => `${servicePath('logs', teamApp(target))}?lines=${options.lines}&since=${encodeURIComponent(since)}`;
      const seen = new Set<string>();
      const show = (lines: { timestamp: string; line: string; labels: Record<string, string> }[]) => {
        for (const l of lines) {
          const key = `${l.timestamp} ${l.line}`;
          if (seen.has(key)) continue;
          seen.add(key);
          // Followed lines stream: text on a terminal, one JSON object per line otherwise.
          process.stdout.write(forPeople(format) ? `${l.timestamp}  ${l.line}\n` : JSON.stringify(l) + '\n');
        }
      };
      const first = await callApi(session, 'GET', path(options.since));
      if (!options.follow) {
        print(format, first, (r) => ({ head: ['time', 'line'], rows: r.lines.map((l: any) => [l.timestamp, l.line]) }));
        return;
      }
      show(first.lines);
      for (;;) {
        await new Promise((resolve) => setTimeout(resolve, FOLLOW_SECONDS * 1000));
        show((await callApi(session, 'GET', path('1m'))).lines);
      }
    });
}
