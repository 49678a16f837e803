/**
 * What the operator commands (`pds token`, `pds console`) share: they sign with the server's secret for one user, so
 * both read `--user` and `--help` the same way and load the secret as `pds serve` does (`PDS_JWT_SECRET`, else the
 * one kept in `PDS_DATA_DIR`), with the server's base URL as issuer.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { loadOrCreateSecret } from '../auth/self-issued.js';
import { loadConfig, type Config } from '../config.js';

type Options = NonNullable<ParseArgsConfig['options']>;

/**
 * Parse `argv` with `--user`/`-u` and `--help`/`-h` beside `options`.
 * @returns the values with `user` set, or the exit code to return: 0 after printing `usage` for `--help`, 2 after
 *   saying `--user` is required.
 * @throws TypeError (node:util `parseArgs`) for an unknown option or a missing value, which the CLI's dispatch (`bin/cli.ts`) prints.
 */
export function operatorArgs(
  command: string,
  argv: string[],
  usage: string,
  options: Options,
): { user: string; values: Record<string, string | boolean | undefined> } | number {
  const all: Options = { ...options, user: { type: 'string', short: 'u' }, help: { type: 'boolean', short: 'h' } };
  const values = parseArgs({ args: argv, options: all }).values as Record<string, string | boolean | undefined>;
  if (values.help) {
    console.log(usage);
    return 0;
  }
  if (typeof values.user !== 'string' || !values.user) {
    console.error(`pds ${command}: --user is required\n\n${usage}`);
    return 2;
  }
  return { user: values.user, values };
}

/**
 * The server's configuration and signing secret, as `pds serve` with the same environment would have them.
 * @param config the configuration already read, else read from the environment now.
 */
export async function serverSecret(config: Config = loadConfig()): Promise<{ config: Config; secret: Uint8Array }> {
  return { config, secret: await loadOrCreateSecret(config.jwtSecret, config.dataDir) };
}
