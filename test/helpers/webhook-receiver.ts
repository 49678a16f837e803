/**
 * A webhook receiver on 127.0.0.1 (plain HTTP; pds may send http only with PDS_OUTBOUND_ALLOW_PRIVATE=true): records
 * every request with its raw body, checks `X-PDS-Signature-256` as a receiver would (HMAC-SHA256 of the raw body with
 * the hook's secret, compared in constant time), and answers as the test scripts it. No vitest import.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request the receiver got. */
export interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  /** The body parsed as JSON. */
  json: any;
  /** Whether the signature matched the secret known for the path when it arrived (false when none is known). */
  signed: boolean;
  /** The status answered. */
  status: number;
}

/** What to answer the `n`th request (1-based) to `path`, given its headers: a status and optional headers. */
export type Script = (n: number, path: string, headers: http.IncomingHttpHeaders) => { status: number; headers?: Record<string, string> };

export interface Receiver {
  /** `http://127.0.0.1:<port>`. */
  url: string;
  readonly received: Received[];
  /** Set the secret signatures to `path` are checked with. */
  secret(path: string, secret: string): void;
  /** Resolve once `predicate` holds for the requests so far (checked at each request), or reject after `timeoutMs`. */
  until(what: string, predicate: (received: Received[]) => boolean, timeoutMs?: number): Promise<Received[]>;
  close(): Promise<void>;
}

/** True when `header` is `sha256=<hex HMAC-SHA256 of body with secret>`. */
export function verifySignature(secret: string, body: string, header: string | undefined): boolean {
  if (!header?.startsWith('sha256=')) return false;
  const expected = Buffer.from(`sha256=${createHmac('sha256', secret).update(body).digest('hex')}`);
  const got = Buffer.from(header);
  return got.length === expected.length && timingSafeEqual(got, expected);
}

/** Start a receiver answering by `script` (default: 200 to everything). */
export async function startReceiver(script: Script = () => ({ status: 200 })): Promise<Receiver> {
  const received: Received[] = [];
  const secrets = new Map<string, string>();
  const counts = new Map<string, number>();
  const waiters = new Set<() => void>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = req.url ?? '/';
      const body = Buffer.concat(chunks).toString('utf8');
      const n = (counts.get(path) ?? 0) + 1;
      counts.set(path, n);
      const answer = script(n, path, req.headers);
      const secret = secrets.get(path);
      let json: unknown;
      try {
        json = JSON.parse(body);
      } catch {
        json = undefined;
      }
      const header = req.headers['x-pds-signature-256'];
      received.push({
        path,
        headers: req.headers,
        body,
        json,
        signed: secret !== undefined && verifySignature(secret, body, Array.isArray(header) ? header[0] : header),
        status: answer.status,
      });
      res.writeHead(answer.status, answer.headers ?? {});
      res.end();
      for (const wake of waiters) wake();
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    received,
    secret: (path, secret) => void secrets.set(path, secret),
    until(what, predicate, timeoutMs = 30_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (!predicate(received)) return;
          finish();
          resolve(received);
        };
        const timer = setTimeout(() => {
          finish();
          reject(new Error(`receiver: timed out after ${timeoutMs} ms waiting for ${what}; got ${JSON.stringify(received.map((r) => [r.path, r.headers['x-pds-event'], r.status]))}`));
        }, timeoutMs);
        const finish = () => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
        check();
      });
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
