/** `pds token`: print a self-issued HS256 token for a user (`docs/api.md#authentication`, self-issued form). */
import { parseArgs } from 'node:util';
import { issueSelfToken, loadOrCreateSecret } from '../../auth/self-issued.js';
import { loadConfig } from '../../config.js';
import { durationSeconds } from '../../tools/logs.js';

export const summary = 'mint a token with the server secret (operators)';

const USAGE = `usage: pds token --user <id> [--groups a,b] [--ttl 1h]

Prints a JWT signed with PDS_JWT_SECRET (or the secret kept in PDS_DATA_DIR), issuer PDS_BASE_URL.
  --user     user id (becomes "sub"), e.g. alice
  --groups   comma-separated groups, e.g. platform-admins
  --ttl      lifetime: s, m, h or d, e.g. 30m, 12h, 7d (default 1h, at most 365d)
Run it with the same PDS_BASE_URL/PORT and PDS_DATA_DIR as the server.`;

/** Print one token to stdout; returns 0, or 2 for a missing --user or a bad --ttl. */
export async function run(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      user: { type: 'string', short: 'u' },
      groups: { type: 'string', short: 'g', default: '' },
      ttl: { type: 'string', default: '1h' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  if (!values.user) {
    console.error(`pds token: --user is required\n\n${USAGE}`);
    return 2;
  }
  const ttl = durationSeconds(values.ttl!);
  if (!ttl || ttl > 365 * 86400) {
    console.error(`pds token: --ttl must be a duration like 30m, 12h or 7d, at most 365d (got "${values.ttl}")`);
    return 2;
  }
  const config = loadConfig();
  const secret = await loadOrCreateSecret(config.jwtSecret, config.dataDir);
  const groups = values.groups!.split(',').map((g) => g.trim()).filter(Boolean);
  console.log(await issueSelfToken(secret, config.baseUrl, { sub: values.user, groups }, ttl));
  // Said on a terminal only, so `$(npx pds token …)` stays clean: the issuer must be the server's base URL.
  if (process.stderr.isTTY) console.error(`pds token: for ${config.baseUrl} (PDS_BASE_URL, else http://localhost:$PORT, as pds serve)`);
  return 0;
}
