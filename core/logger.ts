/**
 * The one logger of pds (STYLE.md "One logger, injected"): pino. The composition root builds it (`PDS_LOG_LEVEL`,
 * redaction of secrets) and hands it down; library code takes a {@link Logger} and never writes to the console.
 *
 * Call shape is pino's: an object of fields first, then the message — `log.warn({ err, workflow }, 'step failed')`.
 * Put an error under `err` so pino's serializer keeps its message, stack and `cause`.
 */
import { pino, type DestinationStream, type Logger as PinoLogger } from 'pino';
import { PinoPretty } from 'pino-pretty';

/** pino's logger; `child({ component: 'sandbox' })` adds fields to every line. */
export type Logger = PinoLogger;

/** A logger that drops everything: the default for library code constructed without one (tests, tools). */
export const silentLogger: Logger = pino({ level: 'silent' });

/** Levels `PDS_LOG_LEVEL` accepts. */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/**
 * Fields whose values never reach a log line, wherever they appear (top level, one or two levels down): bearer
 * tokens and `Authorization` headers, cookies, confirmation values, `env_vars` (service environment; only keys are ever
 * shown, see `redactEnvVars` in `core/operations/parameters.ts`), secrets and passwords. pino replaces them with
 * `[redacted]`; `test/ops/logging.test.ts` and the run-wide scan (`test/helpers/run-log.ts`, read by
 * `test/ops/run-log-scan.test.ts`) hold every test run's log to it.
 */
export const REDACTED_PATHS = [
  'authorization',
  'token',
  'access_token',
  'refresh_token',
  'confirm',
  'env_vars',
  'secret',
  'password',
  'cookie',
  '*.authorization',
  '*.token',
  '*.access_token',
  '*.refresh_token',
  '*.confirm',
  '*.env_vars',
  '*.secret',
  '*.password',
  '*.cookie',
  '*.headers.authorization',
  '*.headers.cookie',
  '*.parameters.env_vars',
  '*.parameters.confirm',
  '*.arguments.env_vars',
  '*.arguments.confirm',
];

/** Options of {@link createLogger}. */
export interface LoggerOptions {
  /** `PDS_LOG_LEVEL` (default `info`). */
  level?: LogLevel;
  /** Where lines go (default stdout); tests pass a stream or a file destination. */
  destination?: DestinationStream | NodeJS.WritableStream;
  /**
   * Human-readable colored lines instead of JSON (pino-pretty, in-process). Default: when `destination` is stdout and
   * stdout is a terminal, so a person running `pds serve` reads lines and a container's log collector gets JSON.
   */
  pretty?: boolean;
}

/**
 * The process logger: JSON lines on stdout (one object per line, `time` in epoch milliseconds, `level` as pino's
 * number) or pretty lines on a terminal; secrets redacted either way (redaction happens before formatting).
 */
export function createLogger(options: LoggerOptions = {}): Logger {
  const destination = options.destination ?? process.stdout;
  const pretty = options.pretty ?? (destination === process.stdout && process.stdout.isTTY === true);
  return pino(
    {
      level: options.level ?? 'info',
      base: { service: 'pds' },
      redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    },
    pretty ? PinoPretty({ destination: destination as NodeJS.WritableStream, colorize: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname,service' }) : destination,
  );
}
