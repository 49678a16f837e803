/**
 * The REST API as the `pds` command calls it: the shared client (`tools/rest-client.ts`) with the session's bearer
 * token, refreshed and retried once on a 401. A call names the tool and its input, so the command never spells a
 * path or a parameter the tool's binding already states; a refusal is the `PlatformError` the server threw, which
 * {@link cliErrorOf} turns into what the person reads and the exit code.
 */
import { isPlatformError, type PlatformError } from '../../core/errors.js';
import { createRestClient, type RestClient } from '../../tools/rest-client.js';
import { CliError, EXIT } from './errors.js';
import type { Session } from './session.js';

/** The REST client of a session. */
export function clientOf(session: Session): RestClient {
  return createRestClient({ baseUrl: session.server, token: () => session.token(), renew: () => session.renew() });
}

/**
 * A server's refusal as the CLI reports it: its message (with `run "pds login"` for a 401) and exit code 3 when not
 * signed in, 1 otherwise. Anything else is returned unchanged.
 */
export function cliErrorOf(err: unknown): unknown {
  if (!isPlatformError(err)) return err;
  const refused = err as PlatformError;
  if (refused.code === 'UNAUTHENTICATED') return new CliError(`${refused.message} (run "pds login")`, EXIT.signedOut);
  return new CliError(refused.message, EXIT.failed);
}
