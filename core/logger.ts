/**
 * The one logger of pds (STYLE.md "One logger, injected"): pino. The composition root builds it (`PDS_LOG_LEVEL`,
 * redaction of secrets) and hands it down; library code takes a {@link Logger} and never writes to the console.
 *
 * Call shape is pino's: an object of fields first, then the message — `log.warn({ err, workflow }, 'step failed')`.
 * Put an error under `err` so pino's serializer keeps its message, stack and `cause`.
 */
import { pino, type Logger as PinoLogger } from 'pino';

/** pino's logger; `child({ component: 'sandbox' })` adds fields to every line. */
export type Logger = PinoLogger;

/** A logger that drops everything: the default for library code constructed without one (tests, tools). */
export const silentLogger: Logger = pino({ level: 'silent' });

/** Levels `PDS_LOG_LEVEL` accepts. */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/**
 * Fields whose values never reach a log line, wherever they appear: bearer tokens and `Authorization` headers,
 * confirmation values, and `env_vars` (service environment; only keys are ever shown, see `core/redact.ts`).
 * pino replaces them with `[redacted]`.
 */
export const REDACTED_PATHS = [
  'authorization',
  'token',
  'confirm',
  'env_vars',
  '*.authorization',
  '*.token',
  '*.confirm',
  '*.env_vars',
  'req.headers.authorization',
  'headers.authorization',
  '*.parameters.env_vars',
  '*.parameters.confirm',
];

/**
 * The process logger: JSON lines on stdout (one object per line, `time` in epoch milliseconds), secrets redacted.
 * @param options.level `PDS_LOG_LEVEL` (default `info`).
 * @param options.destination where lines go (default stdout); tests pass a stream.
 */
export function createLogger(options: { level?: LogLevel; destination?: NodeJS.WritableStream } = {}): Logger {
  return pino(
    {
      level: options.level ?? 'info',
      base: { service: 'pds' },
      redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    },
    options.destination ?? process.stdout,
  );
}
