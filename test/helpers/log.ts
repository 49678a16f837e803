/** A real pino logger whose lines land in memory, so a test can assert on what pds logged (level and message). */
import { Writable } from 'node:stream';
import { pino } from 'pino';
import type { Logger } from '../../core/logger.js';

/** One logged line as pino wrote it (JSON), with the level as its name. */
export interface LoggedLine {
  level: string;
  msg: string;
  [field: string]: unknown;
}

export interface RecordingLogger {
  log: Logger;
  lines: LoggedLine[];
  /** Lines of `level` whose message matches `pattern`. */
  count(level: string, pattern: RegExp): number;
}

/** A pino logger at `level` (default `debug`) that records every line it writes. */
export function recordingLogger(level = 'debug'): RecordingLogger {
  const lines: LoggedLine[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      for (const text of String(chunk).split('\n')) if (text) lines.push(JSON.parse(text) as LoggedLine);
      done();
    },
  });
  const log = pino({ level, formatters: { level: (label) => ({ level: label }) } }, sink);
  return {
    log,
    lines,
    count: (lvl, pattern) => lines.filter((l) => l.level === lvl && pattern.test(l.msg)).length,
  };
}
