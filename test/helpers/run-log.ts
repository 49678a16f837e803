/**
 * The logger of test servers: the production logger (`createLogger`, its redaction) at `trace`, appending to this
 * worker's file in the run's log directory (`runLogDir`, provided by vitest.config.ts). `test/ops/run-log-scan.test.ts`
 * searches the whole directory for secrets after every other test has run.
 */
import path from 'node:path';
import { pino } from 'pino';
import { inject } from 'vitest';
import { createLogger, silentLogger, type Logger } from '../../core/logger.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Directory of the run's log files, one per test worker. */
    runLogDir: string;
  }
}

let shared: Logger | undefined;

/** The run's logger (one per test worker); silent outside a vitest run that provides `runLogDir`. */
export function runLogger(): Logger {
  if (shared) return shared;
  let dir: string | undefined;
  try {
    dir = inject('runLogDir');
  } catch {
    dir = undefined;
  }
  shared = dir
    ? createLogger({ level: 'trace', pretty: false, destination: pino.destination({ dest: path.join(dir, `worker-${process.pid}-${process.env.VITEST_POOL_ID ?? 0}.log`), append: true, sync: true, mkdir: true }) })
    : silentLogger;
  return shared;
}
