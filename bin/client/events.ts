/**
 * A server-sent event stream of the REST API as the `pds` command reads it (e.g. `GET /api/v1/workflows/{name}/events`):
 * the session's base URL and bearer token, one refresh and retry on 401, the server's `{ "error" }` before the stream
 * as an `PlatformError` (`errorFromResponse` of `core/errors.ts`), events parsed by eventsource-parser (WHATWG HTML "Server-sent events"), and a stream that
 * stays silent longer than `idleMs` (no event, no heartbeat) treated as lost.
 */
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { errorFromResponse, type PlatformError } from '../../core/errors.js';
import { CliError } from './errors.js';
import type { Session } from './session.js';

/** How long a stream may be silent before it counts as lost, milliseconds: three of the server's 15 s heartbeats. */
export const IDLE_MS = 45_000;

/**
 * Read the event stream at `path` until the server closes it, calling `onEvent` for each event in order.
 * @param path below the base URL, e.g. `/api/v1/workflows/deploy-service-x7k2p/events`.
 * @param signal stops reading at once (the promise then resolves).
 * @returns `true` when the server closed the stream, `false` when `signal` stopped it.
 * @throws PlatformError for a refusal before the stream (the server's `{ "error" }` and status); CliError when the server
 *   cannot be reached or the stream is lost (silent longer than `idleMs`, or cut).
 */
export async function readEvents(
  session: Session,
  path: string,
  onEvent: (event: EventSourceMessage) => void,
  { signal, idleMs = IDLE_MS }: { signal: AbortSignal; idleMs?: number },
): Promise<boolean> {
  const stop = new AbortController();
  const abort = () => stop.abort();
  signal.addEventListener('abort', abort, { once: true });
  let idle: NodeJS.Timeout | undefined;
  let silent = false;
  const touch = () => {
    clearTimeout(idle);
    idle = setTimeout(() => {
      silent = true;
      stop.abort();
    }, idleMs);
  };
  const open = async () =>
    fetch(session.server + path, {
      headers: { authorization: `Bearer ${await session.token()}`, accept: 'text/event-stream' },
      signal: stop.signal,
    });
  try {
    touch();
    let res = await open();
    if (res.status === 401 && (await session.renew())) res = await open();
    if (!res.ok) throw await refusal(res);
    const parser = createParser({ onEvent });
    const decoder = new TextDecoder();
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      touch();
      parser.feed(decoder.decode(chunk, { stream: true }));
    }
    return true;
  } catch (err) {
    if (signal.aborted) return false;
    if (err instanceof CliError) throw err;
    if (silent) throw new CliError(`lost the connection to ${session.server}: nothing heard for ${Math.round(idleMs / 1000)} s`);
    throw new CliError(`cannot reach pds at ${session.server}: ${(err as Error).message}`);
  } finally {
    clearTimeout(idle);
    signal.removeEventListener('abort', abort);
  }
}

/**
 * The server's `{ "error" }` of a refused request as the `PlatformError` it stands for (its code from
 * `PDS-Error-Code`), decoded as the shared REST client does (`tools/rest-client.ts`); `cliErrorOf` in
 * `bin/client/api.ts` words it for the person.
 */
async function refusal(res: Response): Promise<PlatformError> {
  const text = await res.text();
  let message = `pds answered HTTP ${res.status}`;
  try {
    const body = JSON.parse(text) as { error?: unknown };
    if (typeof body.error === 'string') message = body.error;
  } catch {
    // not JSON: keep the status
  }
  return errorFromResponse(res.status, res.headers, message);
}
