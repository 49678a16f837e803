/**
 * `pds console --user alice [--no-browser]`: a one-time sign-in URL for the web console on a sandbox without an
 * identity provider (issue 21 item 2). An operator command, like `pds token`: it signs with the server secret, so run
 * it with the server's `PDS_BASE_URL`/`PORT` and `PDS_DATA_DIR`. The URL is valid 10 minutes and works once; its code
 * travels in the fragment (`#code=`), which browsers never send to a server, and the page exchanges it by a POST.
 */
import { CONSOLE_CODE_TTL, issueConsoleCode } from '../../auth/console-code.js';
import { loadConfig } from '../../config.js';
import { operatorArgs, serverSecret } from '../operator.js';

export const summary = 'print a one-time web console sign-in URL (sandbox; operators)';

const USAGE = `usage: pds console --user <id> [--no-browser]

Prints a sign-in URL for the web console, signed with PDS_JWT_SECRET (or the secret kept in PDS_DATA_DIR), valid
${CONSOLE_CODE_TTL / 60} minutes and for one sign-in, and opens it in the browser on a desktop. Sandbox backend only: with an identity
provider, people sign in at ${'<base URL>'}/ through it.
  --user        the person to sign in, e.g. alice
  --no-browser  print the URL only
Run it with the same PDS_BASE_URL/PORT and PDS_DATA_DIR as the server.`;

/** Print the URL on stdout; returns 0, 2 for a usage error, 1 on a backend other than the sandbox. */
export async function run(argv: string[]): Promise<number> {
  const args = operatorArgs('console', argv, USAGE, { 'no-browser': { type: 'boolean' } });
  if (typeof args === 'number') return args;
  const { user } = args;
  const config = loadConfig();
  if (config.backend !== 'sandbox') {
    console.error('pds console: one-time sign-in URLs are for the sandbox backend only; on this pds, open its base URL and sign in');
    return 1;
  }
  const { secret } = await serverSecret(config);
  const url = `${config.baseUrl}/console/sign-in#code=${await issueConsoleCode(secret, config.baseUrl, user)}`;
  console.log(url);
  if (process.stderr.isTTY) console.error(`pds console: sign-in for ${user}, valid ${CONSOLE_CODE_TTL / 60} minutes, once`);
  if (!args.values['no-browser'] && process.stdout.isTTY) {
    const { default: open } = await import('open');
    await open(url).catch(() => console.error('pds console: could not open a browser; open the URL above'));
  }
  return 0;
}
