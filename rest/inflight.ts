/**
 * The responses a server is still answering, for the graceful drain in `server.ts`: once draining, each one that has
 * not sent its headers yet is told to close its connection, and the drain waits until none is left.
 *
 * **Why not a `Set<ServerResponse>`** (issue 23, BENCHMARKS.md "The drain's `Set` of responses in flight"): a `Set`
 * that grows and shrinks with the requests in flight rehashes into a new table every few requests. An outgrown table
 * that had already been moved to V8's old generation keeps pointing at the responses it held, and V8's scavenges treat
 * old objects as alive until the next full collection. So every response in flight
 * at a rehash, with its request, its Koa context and its headers, survived the next two scavenges and was promoted:
 * about 700 KB per scavenge on a REST read that waits on Redis, and a full collection every few hundred milliseconds.
 * Here the slots are one array that only grows to the most requests ever in flight at once; a finished response's
 * slot is cleared and reused, so no discarded structure keeps a response.
 */
import type { ServerResponse } from 'node:http';

/**
 * The responses in flight of one server: {@link InflightResponses.add} each from the server's `request` event; each
 * leaves on its `close`.
 * @example
 * const inflight = new InflightResponses();
 * server.on('request', (_req, res) => inflight.add(res));
 * // draining:
 * for (const res of inflight) if (!res.headersSent) res.setHeader('Connection', 'close');
 * await inflight.emptied();
 */
export class InflightResponses {
  readonly #slots: Array<ServerResponse | undefined> = [];
  readonly #free: number[] = [];
  #size = 0;
  #emptied: Array<() => void> = [];

  /** Track `res` until it emits `close` (answered, or its connection went away). */
  add(res: ServerResponse): void {
    const slot = this.#free.pop() ?? this.#slots.length;
    this.#slots[slot] = res;
    this.#size++;
    res.once('close', () => {
      this.#slots[slot] = undefined;
      this.#free.push(slot);
      if (--this.#size > 0) return;
      const waiting = this.#emptied;
      this.#emptied = [];
      for (const resolve of waiting) resolve();
    });
  }

  /** How many responses are in flight. */
  get size(): number {
    return this.#size;
  }

  /** The responses in flight, in no particular order. */
  *[Symbol.iterator](): IterableIterator<ServerResponse> {
    for (const res of this.#slots) if (res) yield res;
  }

  /** Resolves once no response is in flight: at once when none is. Never rejects. */
  emptied(): Promise<void> {
    if (this.#size === 0) return Promise.resolve();
    return new Promise((resolve) => this.#emptied.push(resolve));
  }
}
