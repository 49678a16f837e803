/**
 * Starting a bench entry in a child process: compiled JavaScript as the image runs it (`npm run bench` runs
 * dist/bench/), or the TypeScript through tsx when the bench itself runs from the sources.
 */
import { fork, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
/** Whether this bench runs compiled. */
const compiled = import.meta.url.endsWith('.js');

/**
 * Fork `bench/<entry>` with an IPC channel.
 * @param entry file name without extension, e.g. `pds-server`.
 */
export function forkEntry(
  entry: string,
  options: { env?: Record<string, string>; execArgv?: string[]; args?: string[]; stdio?: 'inherit' | 'pipe' | 'ignore' | number } = {},
): ChildProcess {
  const file = `${entry}${compiled ? '.js' : '.ts'}`;
  return fork(path.join(here, file), options.args ?? [], {
    env: { ...process.env, ...options.env },
    execArgv: [...(compiled ? [] : ['--import', 'tsx']), ...(options.execArgv ?? [])],
    // 'ignore' drops stdout (a server's log lines, still written by it) and keeps stderr; a number is a file descriptor
    // stdout goes to.
    stdio: ['ignore', options.stdio ?? 'inherit', options.stdio === 'pipe' ? 'pipe' : 'inherit', 'ipc'],
  });
}
