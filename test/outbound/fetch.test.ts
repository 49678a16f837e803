/**
 * The outbound rule (issue 17 item 6) against a real listener on loopback that records every connection it accepts:
 * for each refused spelling, no connection is ever accepted.
 */
import { once } from 'node:events';
import { createServer, type Server, type Socket } from 'node:net';
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refusedRange } from '../../adapters/outbound/address.js';
import { loadConfig } from '../../config.js';
import { createOutboundFetch, OutboundRefused, type ResolveAll } from '../../adapters/outbound/fetch.js';

/** A TCP listener on 127.0.0.1 and ::1 that counts the connections it accepts and answers HTTP 200 "hi". */
async function recordingListener(): Promise<{ port: number; accepted: Socket[]; close(): Promise<void> }> {
  const accepted: Socket[] = [];
  const answer = (socket: Socket) => {
    accepted.push(socket);
    socket.on('error', () => {});
    socket.once('data', () => socket.end('HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nhi'));
  };
  const v4 = createServer(answer);
  v4.listen(0, '127.0.0.1');
  await once(v4, 'listening');
  const port = (v4.address() as { port: number }).port;
  const servers: Server[] = [v4];
  const v6 = createServer(answer);
  v6.on('error', () => {}); // no IPv6 loopback on this machine: the IPv4 listener alone
  v6.listen(port, '::1');
  await Promise.race([once(v6, 'listening').then(() => servers.push(v6)), once(v6, 'error')]);
  return {
    port,
    accepted,
    close: async () => {
      for (const s of servers) {
        s.close();
        for (const socket of accepted) socket.destroy();
      }
    },
  };
}

/** A resolver that answers `names` from the table and nothing else (no DNS in tests). */
const table =
  (names: Record<string, string[]>): ResolveAll =>
  (hostname, _options, callback) => {
    const addresses = names[hostname];
    if (!addresses) return callback(Object.assign(new Error(`no ${hostname}`), { code: 'ENOTFOUND' }), []);
    callback(null, addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })));
  };

let listener: Awaited<ReturnType<typeof recordingListener>>;
beforeAll(async () => {
  listener = await recordingListener();
});
afterAll(() => listener.close());

describe('refusedRange', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['::1', 'unspecified, loopback or IPv4-compatible'],
    ['::', 'unspecified, loopback or IPv4-compatible'],
    ['0.0.0.0', 'unspecified or "this network"'],
    ['10.0.0.1', 'private (RFC 1918)'],
    ['172.31.255.255', 'private (RFC 1918)'],
    ['192.168.1.1', 'private (RFC 1918)'],
    ['100.64.0.1', 'shared address space (CGNAT, RFC 6598)'],
    ['169.254.169.254', 'link-local'],
    ['fe80::1', 'link-local'],
    ['fd00::1', 'unique-local'],
    ['fc00::1', 'unique-local'],
    ['224.0.0.1', 'multicast'],
    ['ff02::1', 'multicast'],
    ['255.255.255.255', 'reserved or broadcast'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['[::ffff:a00:1]', 'private (RFC 1918)'],
    ['::ffff:169.254.169.254', 'link-local'],
    ['64:ff9b::7f00:1', 'NAT64 (may reach an internal IPv4 address)'],
    ['::ffff:0:7f00:1', 'IPv4-translated (may reach an internal IPv4 address)'],
    ['fe80::1%eth0', 'link-local'],
    ['localhost', 'not an IP address'],
  ])('%s is refused as %s', (address, range) => {
    expect(refusedRange(address)).toBe(range);
  });

  it.each(['93.184.215.14', '8.8.8.8', '2606:4700:4700::1111', '::ffff:8.8.8.8', '172.32.0.1', '100.128.0.1'])('%s is public', (address) => {
    expect(refusedRange(address)).toBeUndefined();
  });
});

describe('createOutboundFetch', () => {
  const guarded = (resolve?: ResolveAll) => createOutboundFetch({ allowPrivate: false, resolve, timeoutMs: 5000 });

  it.each(['127.0.0.1', '127.1', '2130706433', '0x7f000001', '017700000001', '0.0.0.0', '[::ffff:127.0.0.1]', '[::1]', '[::]', 'localhost', '127.0.0.1.'])(
    'http://%s:<port>/ is refused and the listener accepts no connection',
    async (host) => {
      const before = listener.accepted.length;
      const err = await guarded()(`http://${host}:${listener.port}/`).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(OutboundRefused);
      expect((err as OutboundRefused).code).toBe('FORBIDDEN');
      const https = await guarded()(`https://${host}:${listener.port}/`).catch((e: unknown) => e);
      expect(https).toBeInstanceOf(OutboundRefused);
      expect(listener.accepted.length).toBe(before);
    },
  );

  it('refuses a DNS name that resolves to loopback, and one whose answer mixes a public and a private address', async () => {
    const resolve = table({ 'rebind.test': ['127.0.0.1'], 'mixed.test': ['93.184.215.14', '10.0.0.7'], 'v6.test': ['::ffff:127.0.0.1'] });
    for (const name of ['rebind.test', 'mixed.test', 'v6.test']) {
      const err = await guarded(resolve)(`http://${name}:${listener.port}/`).catch((e: unknown) => e);
      expect(err, name).toBeInstanceOf(OutboundRefused);
    }
    expect(listener.accepted.length).toBe(0);
  });

  it('connects to the very address it checked: a resolver that changes its answer (DNS rebinding) is asked once', async () => {
    let asked = 0;
    // The first answer stands for the checked address (loopback, with the switch on, so the test needs no internet);
    // a second lookup would get another address. Only the first is ever used.
    const rebinding: ResolveAll = (_hostname, _options, callback) => {
      asked += 1;
      callback(null, [{ address: asked === 1 ? '127.0.0.1' : '10.9.9.9', family: 4 }]);
    };
    const open = createOutboundFetch({ allowPrivate: true, resolve: rebinding });
    const before = listener.accepted.length;
    const res = await open(`http://rebinding.test:${listener.port}/`);
    expect(await res.text()).toBe('hi');
    expect(asked).toBe(1);
    expect(listener.accepted.length).toBe(before + 1);
  });

  it('follows no redirect: a 302 from an allowed address to loopback is the answer, and loopback is never reached', async () => {
    const target = await recordingListener();
    const redirector = http.createServer((_req, res) => res.writeHead(302, { location: `http://127.0.0.1:${target.port}/` }).end());
    redirector.listen(0, '127.0.0.1');
    await once(redirector, 'listening');
    const port = (redirector.address() as { port: number }).port;
    try {
      // "allowed.test" stands for a public host: the switch lets this test reach it on loopback.
      const open = createOutboundFetch({ allowPrivate: true, resolve: table({ 'allowed.test': ['127.0.0.1'] }) });
      for (const redirect of ['follow', 'manual', undefined] as const) {
        const res = await open(`http://allowed.test:${port}/`, { redirect });
        expect(res.status).toBe(302);
      }
      expect(target.accepted.length).toBe(0);
    } finally {
      redirector.close();
      await target.close();
    }
  });

  it('reaches loopback only with the operator switch on', async () => {
    const open = createOutboundFetch({ allowPrivate: true });
    const res = await open(`http://127.1:${listener.port}/`);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('hi');
  });

  it('caps the response body and bounds the exchange with a deadline', async () => {
    const big = http.createServer((req, res) => {
      if (req.url === '/slow') return; // never answers
      res.writeHead(200); // no content-length: the cap must count
      res.end(Buffer.alloc(64 * 1024, 'x'));
    });
    big.listen(0, '127.0.0.1');
    await once(big, 'listening');
    const port = (big.address() as { port: number }).port;
    try {
      const open = createOutboundFetch({ allowPrivate: true, maxBytes: 1024, timeoutMs: 300 });
      const res = await open(`http://127.0.0.1:${port}/`);
      await expect(res.arrayBuffer()).rejects.toThrow();
      const slow = await open(`http://127.0.0.1:${port}/slow`).catch((e: unknown) => e);
      expect((slow as { code?: string }).code).toBe('UPSTREAM');
    } finally {
      big.closeAllConnections();
      big.close();
    }
  });

  it('refuses a scheme other than http and https', async () => {
    const err = await guarded()('file:///etc/passwd').catch((e: unknown) => e);
    expect((err as { code?: string }).code).toBe('INVALID_PARAMS');
  });
});

describe('PDS_OUTBOUND_ALLOW_PRIVATE', () => {
  it('is off unless the operator says true, and a value that is not a boolean stops start-up naming it', () => {
    expect(loadConfig({}).outboundAllowPrivate).toBe(false);
    expect(loadConfig({ PDS_OUTBOUND_ALLOW_PRIVATE: 'true' }).outboundAllowPrivate).toBe(true);
    expect(() => loadConfig({ PDS_OUTBOUND_ALLOW_PRIVATE: 'sometimes' })).toThrow(/PDS_OUTBOUND_ALLOW_PRIVATE/);
  });
});
