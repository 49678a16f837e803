/** `pds logout`: revoke the stored refresh token at the server (RFC 7009, best effort) and forget the sign-in. */
import { Command } from 'commander';
import * as oidc from 'openid-client';
import { configFile, readConfig, removeConfig } from '../client/config-file.js';
import { authorizationServer } from '../client/session.js';

export function logoutCommand() {
  return new Command('logout').summary('sign out and revoke the stored sign-in').action(async () => {
    const stored = await readConfig();
    if (!stored) {
      process.stderr.write(`Not signed in (no ${configFile()}).\n`);
      return;
    }
    if (stored.refreshToken) {
      // Revoking ends the whole refresh-token family at the server; when the server is unreachable the local copy goes anyway.
      await authorizationServer(stored.server)
        .then((as) => oidc.tokenRevocation(as, stored.refreshToken!))
        .catch(() => process.stderr.write(`(could not revoke the sign-in at ${stored.server}; it expires by itself)\n`));
    }
    await removeConfig();
    process.stderr.write(`Signed out of ${stored.server}.\n`);
  });
}
