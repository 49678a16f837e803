/**
 * Answers for requests Koa never sees: those Node's HTTP parser refuses (header block over 16 KiB, a malformed request
 * line, a bad chunk) and `CONNECT` (which Node hands to a `connect` listener, or else drops the connection). They get
 * the same `{ "error" }` JSON every other refusal has, instead of Node's bodiless default or a hang-up (issue 7,
 * "every 4xx body is `{error}`"). Follows the `clientError` example of the Node.js `http` documentation.
 */
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';

/** Status and message per llhttp error code; anything else is a 400. */
function describe(code: string | undefined): { status: number; error: string } {
  if (code === 'HPE_HEADER_OVERFLOW') {
    return { status: 431, error: 'request headers (or the URL) too large: at most 16 KiB together; send large values in a JSON body' };
  }
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return { status: 408, error: 'the request did not arrive in time' };
  return { status: 400, error: `malformed HTTP request (${code ?? 'unparsable'})` };
}

/** Write a complete HTTP/1.1 error answer and close the connection; no body for a HEAD request. */
function answer(socket: Duplex, status: number, error: string, head: boolean, extra = ''): void {
  const body = head ? '' : JSON.stringify({ error });
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n${extra}` +
      `${head ? '' : `Content-Length: ${Buffer.byteLength(body)}\r\n`}Connection: close\r\n\r\n${body}`,
  );
}

/**
 * `server.on('connect', refuseConnect)`: pds is no proxy; a CONNECT request gets 405 `{ error }` with `Allow`.
 */
export function refuseConnect(_req: unknown, socket: Duplex): void {
  answer(socket, 405, 'method CONNECT is not allowed: pds is not a proxy', false, 'Allow: GET, HEAD, POST\r\n');
}

/**
 * `server.on('clientError', answerClientError)`: write a JSON error and close the connection.
 * @param err the parser error (`code` such as `HPE_HEADER_OVERFLOW`, `HPE_INVALID_METHOD`).
 */
export function answerClientError(err: NodeJS.ErrnoException & { rawPacket?: Buffer }, socket: Duplex): void {
  // A connection reset or already half-written answer has no one to read a reply.
  if (err.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const { status, error } = describe(err.code);
  // The answer to HEAD has no body (RFC 9110 §9.3.2); the request line, when it was read, says whether it was one.
  answer(socket, status, error, err.rawPacket?.subarray(0, 5).toString('latin1') === 'HEAD ');
}
