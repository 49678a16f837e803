/** A tiny HTTP client for limit tests: keep-alive, and a chosen local (source) address such as 127.0.0.2. */
import { Agent, request } from 'node:http';

export interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  json(): any;
}

const agents = new Map<string, Agent>();
function agentFor(localAddress: string | undefined): Agent {
  const key = localAddress ?? '';
  let agent = agents.get(key);
  if (!agent) {
    agent = new Agent({ keepAlive: true, maxSockets: 16, ...(localAddress ? { localAddress } : {}) });
    agents.set(key, agent);
  }
  return agent;
}

/** Close every pooled connection (call in afterAll). */
export function closeAgents(): void {
  for (const agent of agents.values()) agent.destroy();
  agents.clear();
}

export interface SendOptions {
  method?: string;
  headers?: Record<string, string>;
  /** Sent as JSON, with `Content-Type: application/json`. */
  body?: unknown;
  /** Sent as it is, with only the headers given (garbage, another content type, a compressed body). */
  rawBody?: string | Buffer;
  /** The request target exactly as written (`//api/v1/%2e%2e/x;y`), which `fetch` and `new URL` would normalize. */
  rawPath?: string;
  /** Source address to bind, e.g. `127.0.0.2` (Linux routes all of 127.0.0.0/8 to lo). */
  from?: string;
  /** A connection of its own, closed after the answer (for requests the server may stop reading, e.g. over 1 MiB). */
  ownConnection?: boolean;
}

/** One request; the answer whatever its status. */
export function send(url: string, options: SendOptions = {}): Promise<Reply> {
  const json = options.body === undefined ? undefined : JSON.stringify(options.body);
  const payload = options.rawBody ?? json;
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: options.method ?? 'GET',
        agent: options.ownConnection ? new Agent({ keepAlive: false, ...(options.from ? { localAddress: options.from } : {}) }) : agentFor(options.from),
        ...(options.rawPath === undefined ? {} : { path: options.rawPath }),
        headers: { ...(json ? { 'content-type': 'application/json', accept: 'application/json, text/event-stream' } : {}), ...options.headers },
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body, json: () => JSON.parse(body) }));
      },
    );
    req.on('error', reject);
    // An answer that never comes fails the request (and so the test) with a reason instead of a test timeout.
    req.setTimeout(15_000, () => req.destroy(new Error(`no answer from ${url} within 15 s`)));
    req.end(payload);
  });
}

/** `n` requests, `concurrency` at a time; returns the statuses in completion order. */
export async function burst(n: number, one: () => Promise<Reply>, concurrency = 16): Promise<Reply[]> {
  const replies: Reply[] = [];
  let started = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, n) }, async () => {
      while (started < n) {
        started++;
        replies.push(await one());
      }
    }),
  );
  return replies;
}
