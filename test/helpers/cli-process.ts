/**
 * The `pds` CLI as a real process against a test server (`test/helpers/server.ts`): the source entry
 * `bin/pds-src.js`, its own config home, the server's URL and a signed token for one user. For the CLI on a
 * pseudo-terminal (colours, prompts, spinners) see `test/cli/wait-terminal.test.ts`.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import type { TestServer } from './server.js';

/** The CLI's source entry, run with the test's Node. */
export const PDS_CLI = path.resolve('bin/pds-src.js');

/** How a `pds` process ended. */
export interface CliResult {
  /** Exit code; -1 when it was killed by a signal. */
  code: number;
  stdout: string;
  stderr: string;
}

/** Who runs the CLI and what it reads. */
export interface CliRun {
  /** The user whose token is in `PDS_TOKEN`. */
  user: string;
  /** Groups in that token, e.g. `['sre']`. */
  groups?: string[];
  /** Standard input, then closed; closed at once when absent (a question is then answered no). */
  stdin?: string;
}

/**
 * Run `pds args…` to its end against `server`, with `XDG_CONFIG_HOME=home` and `NO_COLOR=1`.
 * @returns its exit code and everything it printed (UTF-8).
 */
export async function runCli(server: TestServer, home: string, args: string[], run: CliRun): Promise<CliResult> {
  const token = await server.token(run.user, run.groups);
  const env = { ...process.env, XDG_CONFIG_HOME: home, NO_COLOR: '1', PDS_BASE_URL: server.url, PDS_TOKEN: token };
  const child = spawn(process.execPath, [PDS_CLI, ...args], { env, stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  child.stdin.end(run.stdin ?? '');
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}
