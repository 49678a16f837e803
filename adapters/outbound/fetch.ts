/**
 * The one fetch for every outbound request a caller can steer (issue 17 item 6): Client ID Metadata Documents and a
 * registered client's `jwks_uri` (`auth/oauth/provider.ts`), and webhook deliveries (`adapters/webhooks/dispatcher.ts`).
 *
 * The rule, checked before any connection is opened:
 * - the host is resolved once, and every address it resolves to must be public unicast ({@link refusedRange}); an IP
 *   literal in any spelling (`127.1`, `2130706433`, `0x7f000001`, `[::ffff:127.0.0.1]`) is checked as the address
 *   WHATWG URL parsing makes of it;
 * - the socket connects to the address that was checked: the check runs inside the connection's own `lookup`
 *   (node's `net.connect` option), so a DNS answer cannot change between check and connect (DNS rebinding);
 * - no redirect is ever followed: a 3xx is returned as it is, and the caller decides (oidc-provider refuses it);
 * - the whole exchange has a deadline and the response body a size cap.
 *
 * `PDS_OUTBOUND_ALLOW_PRIVATE=true` (`allowPrivate`) is the operator's one switch that lifts the address rule (an
 * on-premise identity provider); deadline, size cap and the no-redirect rule stay.
 */
import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions, type LookupOneOptions } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import { Readable } from 'node:stream';
import { Forbidden, InvalidParams, Upstream } from '../../core/errors.js';
import { refusedRange } from './address.js';

/** Default deadline of one outbound exchange (connect, request, whole response), milliseconds. */
export const OUTBOUND_TIMEOUT_MS = 5_000;
/** Default cap on a response body, bytes (1 MiB). */
export const OUTBOUND_MAX_BYTES = 1024 * 1024;

/** `dns.lookup` with `all: true`, the form the guard resolves with (inject one in tests to map a name to an address). */
export type ResolveAll = (hostname: string, options: LookupAllOptions, callback: (err: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void) => void;

/** How the outbound fetch behaves. */
export interface OutboundOptions {
  /** `PDS_OUTBOUND_ALLOW_PRIVATE`: reach loopback, private and other non-public addresses too. */
  allowPrivate: boolean;
  /** Deadline of one exchange, milliseconds (default {@link OUTBOUND_TIMEOUT_MS}). */
  timeoutMs?: number;
  /** Largest response body read, bytes (default {@link OUTBOUND_MAX_BYTES}); a larger one errors the body stream. */
  maxBytes?: number;
  /** Name resolution (default `dns.lookup`). */
  resolve?: ResolveAll;
}

/** What {@link createOutboundFetch}'s fetch accepts of `RequestInit`; other fields are ignored. */
export interface OutboundInit {
  method?: string;
  headers?: HeadersInit;
  /** A request body: text or bytes (JSON webhooks send text). */
  body?: string | Uint8Array | URLSearchParams | null;
  signal?: AbortSignal | null;
  /** Accepted for `fetch` compatibility; redirects are never followed whatever it says. */
  redirect?: RequestRedirect;
}

/** A `fetch` under the outbound rule: same call shape for the URL forms pds uses, a WHATWG `Response` back. */
export type OutboundFetch = (input: string | URL, init?: OutboundInit) => Promise<Response>;

/**
 * 403: the destination is an address the outbound rule refuses. `address` is what the host resolved to and
 * `range` the refused range it falls in.
 */
export class OutboundRefused extends Forbidden {
  readonly address: string;
  readonly range: string;
  constructor(host: string, address: string, range: string) {
    super(
      `outbound requests may only reach public addresses: ${host} is ${address === host ? '' : `${address}, `}${range}` +
        ' (an operator can allow private addresses with PDS_OUTBOUND_ALLOW_PRIVATE=true)',
    );
    this.address = address;
    this.range = range;
  }
}

/** Statuses whose response has no body (Fetch standard "null body status"). */
const NULL_BODY = new Set([101, 103, 204, 205, 304]);

/**
 * Build the guarded fetch.
 * @returns a fetch that rejects with {@link OutboundRefused} (no connection made) for a refused address,
 *   `InvalidParams` for a URL that is not `http:`/`https:`, `Upstream` for a failed connection or a passed deadline;
 *   the body stream of its `Response` errors with `Upstream` past `maxBytes`.
 * @example
 * const outbound = createOutboundFetch({ allowPrivate: config.outboundAllowPrivate });
 * const res = await outbound('https://client.example.com/metadata.json', { headers: { accept: 'application/json' } });
 */
export function createOutboundFetch(options: OutboundOptions): OutboundFetch {
  const timeoutMs = options.timeoutMs ?? OUTBOUND_TIMEOUT_MS;
  const maxBytes = options.maxBytes ?? OUTBOUND_MAX_BYTES;
  const resolve: ResolveAll = options.resolve ?? ((hostname, opts, callback) => dnsLookup(hostname, opts, callback));

  // net.connect calls this for a host name (never for an IP literal, which is checked before the request instead),
  // and connects to exactly the addresses it hands back.
  const guardedLookup = (
    hostname: string,
    opts: LookupOneOptions | LookupAllOptions,
    callback: (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void,
  ): void => {
    resolve(hostname, { ...opts, all: true }, (err, addresses) => {
      if (err) return callback(err, []);
      if (!options.allowPrivate) {
        for (const { address } of addresses) {
          const range = refusedRange(address);
          // Any refused answer refuses the name: a mixed answer is what a rebinding attacker would serve.
          if (range) return callback(new OutboundRefused(hostname, address, range), []);
        }
      }
      if (addresses.length === 0) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), []);
      if (opts.all) callback(null, addresses);
      else callback(null, addresses[0]!.address, addresses[0]!.family);
    });
  };

  return (input, init = {}) =>
    new Promise<Response>((resolvePromise, reject) => {
      const url = new URL(String(input));
      if (url.protocol !== 'http:' && url.protocol !== 'https:') {
        return reject(new InvalidParams(`outbound requests use http: or https: URLs, not ${url.protocol}`));
      }
      const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
      if (isIP(host) && !options.allowPrivate) {
        const range = refusedRange(host);
        if (range) return reject(new OutboundRefused(url.hostname, host, range));
      }
      const signals = [AbortSignal.timeout(timeoutMs), ...(init.signal ? [init.signal] : [])];
      const signal = AbortSignal.any(signals);
      const headers: Record<string, string> = {};
      new Headers(init.headers).forEach((value, name) => (headers[name] = value));
      const body = init.body instanceof URLSearchParams ? init.body.toString() : (init.body ?? undefined);
      if (init.body instanceof URLSearchParams) headers['content-type'] ??= 'application/x-www-form-urlencoded;charset=UTF-8';
      const method = (init.method ?? 'GET').toUpperCase();
      const request = (url.protocol === 'https:' ? https : http).request(
        url,
        // agent: false — a fresh socket per exchange, so no pooled socket to an earlier address is ever reused.
        { method, headers, agent: false, lookup: guardedLookup as never, signal },
        (res) => {
          const declared = Number(res.headers['content-length']);
          if (Number.isFinite(declared) && declared > maxBytes) {
            res.destroy();
            return reject(new Upstream(`${url.origin} answered ${declared} bytes; at most ${maxBytes} are read`));
          }
          let received = 0;
          res.on('data', (chunk: Buffer) => {
            received += chunk.length;
            if (received > maxBytes) res.destroy(new Upstream(`${url.origin} answered more than ${maxBytes} bytes; at most ${maxBytes} are read`));
          });
          const responseHeaders = new Headers();
          for (const [name, value] of Object.entries(res.headers)) {
            for (const v of Array.isArray(value) ? value : value === undefined ? [] : [value]) responseHeaders.append(name, v);
          }
          const status = res.statusCode ?? 0;
          if (status < 200 || status > 599) {
            res.destroy();
            return reject(new Upstream(`${url.origin} answered status ${status}, which is not a response`));
          }
          const noBody = NULL_BODY.has(status) || method === 'HEAD';
          if (noBody) res.resume();
          resolvePromise(
            new Response(noBody ? null : (Readable.toWeb(res) as ReadableStream<Uint8Array>), {
              status,
              statusText: res.statusMessage,
              headers: responseHeaders,
            }),
          );
        },
      );
      request.on('error', (err) => {
        if (err instanceof OutboundRefused) return reject(err);
        const reason = signal.aborted && !init.signal?.aborted ? `no answer within ${timeoutMs} ms` : err.message;
        reject(new Upstream(`outbound request to ${url.origin} failed: ${reason}`, { cause: err }));
      });
      request.end(body);
    });
}
