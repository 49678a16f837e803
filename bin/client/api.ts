/**
 * The REST API as the `pds` command calls it: JSON in and out, the session's bearer token, one refresh and retry on
 * 401, a timeout per call, and the server's `{ "error" }` as a {@link CliError} with its status and headers (the
 * `PDS-Confirm` headers of a confirmation request among them).
 */
import { CliError, EXIT } from './errors.js';
import type { Session } from './session.js';

/** A refused call: the server's message, status and response headers. */
export class ApiError extends CliError {
  constructor(
    message: string,
    readonly status: number,
    readonly headers: Headers,
  ) {
    super(message, status === 401 ? EXIT.signedOut : EXIT.failed);
    this.name = 'ApiError';
  }
}

/**
 * Call the API.
 * @param path below the base URL, with its query, e.g. `/api/v1/services?team=acme`.
 * @returns the parsed JSON body of a 2xx answer.
 * @throws ApiError for any other answer; CliError when the server cannot be reached.
 */
export async function callApi<T = any>(session: Session, method: 'GET' | 'POST' | 'PUT', path: string, body?: unknown, timeoutMs = 30_000): Promise<T> {
  const send = async () => {
    try {
      return await fetch(session.server + path, {
        method,
        headers: { authorization: `Bearer ${await session.token()}`, accept: 'application/json', ...(body !== undefined && { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (err) {
      if (err instanceof CliError) throw err;
      throw new CliError(`cannot reach pds at ${session.server}: ${(err as Error).message}`);
    }
  };
  let res = await send();
  if (res.status === 401 && (await session.renew())) res = await send();
  const text = await res.text();
  let payload: any;
  try {
    payload = text ? JSON.parse(text) : undefined;
  } catch {
    payload = undefined;
  }
  if (res.ok) return payload as T;
  const message = typeof payload?.error === 'string' ? payload.error : `pds answered HTTP ${res.status}`;
  const hint = res.status === 401 ? ' (run "pds login")' : '';
  throw new ApiError(message + hint, res.status, res.headers);
}
