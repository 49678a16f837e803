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

/**
 * @param from source address to bind, e.g. `127.0.0.2` (Linux routes all of 127.0.0.0/8 to lo).
 */
export function send(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: unknown; from?: string } = {},
): Promise<Reply> {
  const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: options.method ?? 'GET',
        agent: agentFor(options.from),
        headers: { ...(payload ? { 'content-type': 'application/json', accept: 'application/json, text/event-stream' } : {}), ...options.headers },
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body, json: () => JSON.parse(body) }));
      },
    );
    req.on('error', reject);
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
