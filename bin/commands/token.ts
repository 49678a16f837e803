/** `pds token`: print a self-issued HS256 token for a user (`docs/api.md#authentication`, self-issued form). */
import { issueSelfToken } from '../../auth/self-issued.js';
import { durationSeconds } from '../../tools/logs.js';
import { operatorArgs, serverSecret } from '../operator.js';

export const summary = 'mint a token with the server secret (operators)';

const USAGE = `usage: pds token --user <id> [--groups a,b] [--ttl 1h]

Prints a JWT signed with PDS_JWT_SECRET (or the secret kept in PDS_DATA_DIR), issuer PDS_BASE_URL.
  --user     user id (becomes "sub"), e.g. alice
  --groups   comma-separated groups, e.g. platform-admins
  --ttl      lifetime: s, m, h or d, e.g. 30m, 12h, 7d (default 1h, at most 365d)
Run it with the same PDS_BASE_URL/PORT and PDS_DATA_DIR as the server.`;

/** Print one token to stdout; returns 0, or 2 for a missing --user or a bad --ttl. */
export async function run(argv: string[]): Promise<number> {
  const args = operatorArgs('token', argv, USAGE, {
    groups: { type: 'string', short: 'g', default: '' },
    ttl: { type: 'string', default: '1h' },
  });
  if (typeof args === 'number') return args;
  const { user } = args;
  const values = args.values as { groups: string; ttl: string };
  const ttl = durationSeconds(values.ttl);
  if (!ttl || ttl > 365 * 86400) {
    console.error(`pds token: --ttl must be a duration like 30m, 12h or 7d, at most 365d (got "${values.ttl}")`);
    return 2;
  }
  const { config, secret } = await serverSecret();
  const groups = values.groups.split(',').map((g) => g.trim()).filter(Boolean);
  console.log(await issueSelfToken(secret, config.baseUrl, { sub: user, groups }, ttl));
  // Said on a terminal only, so `$(npx pds token …)` stays clean: the issuer must be the server's base URL.
  if (process.stderr.isTTY) console.error(`pds token: for ${config.baseUrl} (PDS_BASE_URL, else http://localhost:$PORT, as pds serve)`);
  return 0;
}
