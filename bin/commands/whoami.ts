/**
 * `pds whoami`: who the server takes you for. The token is checked with the server (an authenticated read); the user,
 * scopes and expiry are read from it when it is a pds token (a GitHub token says none of that about itself).
 */
import { decodeJwt } from 'jose';
import { apiCommand, contextOf } from '../client/command.js';
import { listOperations } from '../../tools/operations/catalog.js';
import { clientOf } from '../client/api.js';
import { print } from '../client/output.js';

export function whoamiCommand() {
  return apiCommand('whoami', 'show who you are signed in as').action(async (_options, command) => {
    const { session, format } = await contextOf(command);
    const token = await session.token();
    await clientOf(session).call(listOperations, {}); // refused (401) when the server does not accept the token
    let claims: { sub?: string; scope?: string; exp?: number; iss?: string } = {};
    try {
      claims = decodeJwt(await session.token());
    } catch {
      // a PAT: nothing to read from it
    }
    const who = {
      server: session.server,
      user: claims.sub ?? '(a GitHub token: its owner)',
      scopes: claims.scope === undefined ? 'every scope your roles allow' : claims.scope,
      expires: claims.exp ? new Date(claims.exp * 1000).toISOString() : undefined,
      source: process.env.PDS_TOKEN ? 'PDS_TOKEN' : 'pds login',
      tokenKind: token.startsWith('ghp_') ? 'GitHub PAT' : 'JWT',
    };
    print(format, who, (w) => ({ head: ['server', 'user', 'scopes', 'expires', 'from'], rows: [[w.server, w.user, w.scopes, w.expires, w.source]] }));
  });
}
