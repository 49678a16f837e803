import { once } from 'node:events';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { InflightResponses } from '../../rest/inflight.js';

/** A real HTTP server on a free loopback port that tracks every response and answers only when told. */
async function holdingServer() {
  const inflight = new InflightResponses();
  const arrived: ServerResponse[] = [];
  const waiters: Array<() => void> = [];
  const server = http.createServer((_req: IncomingMessage, res: ServerResponse) => {
    inflight.add(res);
    arrived.push(res);
    for (const wake of waiters.splice(0)) wake();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  /** Resolves once `count` requests in all have reached the handler. */
  const arrivals = async (count: number) => {
    while (arrived.length < count) await new Promise<void>((resolve) => waiters.push(resolve));
  };
  return { server, inflight, arrived, url, arrivals };
}

let server: http.Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
  server = undefined;
});

describe('InflightResponses', () => {
  it('counts and lists the responses in flight, and is emptied once every one is answered', { timeout: 10_000 }, async () => {
    const held = await holdingServer();
    server = held.server;
    await expect(held.inflight.emptied()).resolves.toBeUndefined();
    const agent = new http.Agent({ keepAlive: true, maxSockets: 3 });
    const answers = [1, 2, 3].map(() => fetchText(held.url, agent));
    await held.arrivals(3);
    expect(held.inflight.size).toBe(3);
    expect(new Set(held.inflight)).toEqual(new Set(held.arrived));

    let emptied = false;
    const whenEmptied = held.inflight.emptied().then(() => (emptied = true));
    held.arrived[0]!.end('a');
    held.arrived[1]!.end('b');
    expect(await Promise.all(answers.slice(0, 2))).toEqual(['a', 'b']);
    await waitFor(() => held.inflight.size === 1);
    expect([...held.inflight]).toEqual([held.arrived[2]]);
    expect(emptied).toBe(false);
    held.arrived[2]!.end('c');
    await whenEmptied;
    expect(await answers[2]).toBe('c');
    expect(held.inflight.size).toBe(0);
    expect([...held.inflight]).toEqual([]);

    // The freed slots are taken again by the next requests on the same keep-alive connections.
    const again = [1, 2].map(() => fetchText(held.url, agent));
    await held.arrivals(5);
    expect(new Set(held.inflight)).toEqual(new Set(held.arrived.slice(3)));
    for (const res of held.arrived.slice(3)) res.end('d');
    expect(await Promise.all(again)).toEqual(['d', 'd']);
    await held.inflight.emptied();
    agent.destroy();
  });

  it('lets go of a response whose client went away before the answer', { timeout: 10_000 }, async () => {
    const held = await holdingServer();
    server = held.server;
    const req = http.get(held.url);
    req.on('error', () => undefined);
    await held.arrivals(1);
    expect(held.inflight.size).toBe(1);
    req.destroy();
    await held.inflight.emptied();
    expect([...held.inflight]).toEqual([]);
  });
});

function fetchText(url: string, agent: http.Agent): Promise<string> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { agent }, (res) => {
        let body = '';
        res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve(body)).on('error', reject);
      })
      .on('error', reject);
  });
}

/** Polls `condition` every 5 ms; fails after 5 s. */
async function waitFor(condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met within 5 s');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
