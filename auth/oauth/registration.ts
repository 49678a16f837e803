/**
 * The rules for clients that register themselves (RFC 7591 Dynamic Client Registration, `POST /oauth/register`; issue
 * 17 items 7 and 10). Registration is open (no initial access token), so what one address can make pds store is
 * bounded here and in `rest/auth-limit.ts` (per-minute and per-day budgets):
 *
 * - **Size**: the metadata as sent is at most {@link CLIENT_METADATA_MAX_BYTES} bytes of JSON (an MCP client's is well
 *   under 1 KiB); larger is refused `400 invalid_client_metadata`.
 * - **Redirect URIs**: `https://`, a custom scheme of a native app, or `http://` only on a loopback host (`127.0.0.1`,
 *   `[::1]`, `localhost`; RFC 8252 §7.3 and §8.3). An `http://` URI to any other host would carry the authorization
 *   code in clear text; it is refused `400 invalid_redirect_uri`.
 * - **Expiry**: a registered client is kept {@link CLIENT_IDLE_TTL} seconds after its last *use*, which is a successful
 *   authorization (a code issued) or a successful token request (code, refresh token or device code exchanged). Looking
 *   a client up (an authorize request that fails, the consent page) is not use. An unused client then disappears, and
 *   its client_id is answered as unknown (`invalid_client`).
 *
 * Clients of Client ID Metadata Documents and the built-in `pds-cli` are not stored, so none of this applies to them.
 */

/** Most bytes of JSON a registration's metadata may have. */
export const CLIENT_METADATA_MAX_BYTES = 8 * 1024;
/** Seconds a dynamically registered client is kept after its last use: 30 days (the refresh-token lifetime). */
export const CLIENT_IDLE_TTL = 30 * 86_400;
/**
 * A use extends the client's life only when its expiry is at least this many seconds older than a fresh one, so a
 * busy client costs at most one write a day.
 */
export const CLIENT_TOUCH_SLACK = 86_400;

/** Hosts on which a registered `http://` redirect URI is allowed (RFC 8252 §7.3; WHATWG URL `hostname` spelling). */
const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost']);

/**
 * What is wrong with a registration request's metadata, in the words of RFC 7591's error description, or `undefined`
 * when these rules allow it (oidc-provider then checks the rest of the metadata).
 * @param body the parsed JSON body of `POST /oauth/register`.
 * @returns a description starting with `redirect_uris` for a refused redirect URI (oidc-provider answers it as
 *   `invalid_redirect_uri`), otherwise one for `invalid_client_metadata`.
 */
export function registrationProblem(body: unknown): string | undefined {
  const size = Buffer.byteLength(JSON.stringify(body ?? {}));
  if (size > CLIENT_METADATA_MAX_BYTES) {
    return `client metadata is ${size} bytes of JSON; at most ${CLIENT_METADATA_MAX_BYTES} are accepted`;
  }
  const uris = (body as { redirect_uris?: unknown } | undefined)?.redirect_uris;
  for (const uri of Array.isArray(uris) ? uris : []) {
    if (typeof uri !== 'string') continue; // oidc-provider refuses it with its own message
    const parsed = URL.canParse(uri) ? new URL(uri) : undefined;
    if (parsed?.protocol === 'http:' && !LOOPBACK_HOSTS.has(parsed.hostname)) {
      return `redirect_uris: ${JSON.stringify(uri)} uses http:// on a host that is not the loopback; register an https:// URI, or http:// only on 127.0.0.1, [::1] or localhost (RFC 8252)`;
    }
  }
  return undefined;
}
