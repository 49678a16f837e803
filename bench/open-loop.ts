/**
 * Latency at a fixed offered load, for the bench's warm reads (issue 23 item 3).
 *
 * autocannon drives a closed loop: each of its connections sends its next request when the last is answered, so at
 * full speed its latency is the queue of its own connections (Little's law: connections ÷ requests per second) plus
 * whatever the shared CPUs do, not what one read costs. Its `overallRate` does not give a steady rate either: each
 * connection sends its share of the second as fast as it can as soon as the second starts
 * (`node_modules/autocannon/lib/httpClient.js`, `reqsMadeThisSecond`), so every second starts with a closed-loop burst.
 *
 * {@link openLoop} sends request i at `start + i / rate` (on a 1 ms tick) whether or not earlier ones were answered,
 * over at most `connections` keep-alive sockets (Node's `http.Agent` queues the rest). Each request is timed from the
 * moment it is handed to the agent, so the wait for a busy socket counts, as wrk2 counts it
 * (https://github.com/giltene/wrk2#readme). {@link openLoopInChild} runs it in a process of its own, so the bench
 * process's garbage collections and timers (it holds a platform of its own) are not taken for pds's latency; how late
 * the generator's own ticks came is reported beside the figures.
 */
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { forkEntry } from './child.js';

/** What {@link openLoop} sends: GET `url`, or `url` + `suffixes[i mod n]` for request i (e.g. rotating over names). */
export interface OpenLoopOptions {
  url: string;
  suffixes?: string[];
  headers: Record<string, string>;
  /** Requests per second, offered whatever the answers do. */
  rate: number;
  /** How long to send, seconds. */
  seconds: number;
  /** Most keep-alive sockets at once (default 10, as the bench's autocannon rows). */
  connections?: number;
}

/** Latencies in milliseconds (fractions kept), each from the request's send to the end of its answer. */
export interface OpenLoopResult {
  sent: number;
  /** Answers with a 2xx status; only these enter the percentiles. */
  ok: number;
  non2xx: number;
  /** Requests that failed without an answer (connection refused or reset). */
  errors: number;
  p50: number;
  p99: number;
  max: number;
  /** The latest a request was sent after its scheduled time, milliseconds: the generator's own stalls. */
  worstLag: number;
}

/**
 * Send `rate × seconds` GET requests on schedule, then wait for the last answer.
 * @example
 * const r = await openLoop({ url: `${base}/api/v1/status/team7/svc0`, headers: { authorization }, rate: 1000, seconds: 10 });
 * // r.p99: milliseconds from a request's send to the end of its answer
 */
export async function openLoop(options: OpenLoopOptions): Promise<OpenLoopResult> {
  const { url, suffixes, rate, seconds, headers } = options;
  const agent = new http.Agent({ keepAlive: true, maxSockets: options.connections ?? 10 });
  const total = Math.floor(rate * seconds);
  const latencies: number[] = [];
  let non2xx = 0;
  let errors = 0;
  let worstLag = 0;
  const one = (i: number, due: number) =>
    new Promise<void>((resolve) => {
      const sentAt = performance.now();
      worstLag = Math.max(worstLag, sentAt - due);
      const req = http.get(suffixes?.length ? url + suffixes[i % suffixes.length] : url, { agent, headers }, (res) => {
        res.resume();
        res.on('end', () => {
          const status = res.statusCode ?? 0;
          if (status >= 200 && status < 300) latencies.push(performance.now() - sentAt);
          else non2xx++;
          resolve();
        });
      });
      req.on('error', () => {
        errors++;
        resolve();
      });
    });
  const answers: Array<Promise<void>> = [];
  const start = performance.now();
  await new Promise<void>((resolve) => {
    const tick = setInterval(() => {
      const due = Math.min(total, Math.floor(((performance.now() - start) / 1000) * rate) + 1);
      for (let i = answers.length; i < due; i++) answers.push(one(i, start + (i / rate) * 1000));
      if (answers.length >= total) {
        clearInterval(tick);
        resolve();
      }
    }, 1);
  });
  await Promise.all(answers);
  agent.destroy();
  latencies.sort((a, b) => a - b);
  const at = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))] ?? Number.NaN;
  return { sent: answers.length, ok: latencies.length, non2xx, errors, p50: at(50), p99: at(99), max: latencies.at(-1) ?? Number.NaN, worstLag };
}

/**
 * {@link openLoop} in a child process of its own (this file, forked with `child`), with Node's default flags.
 * @throws Error when the child exits without an answer.
 */
export async function openLoopInChild(options: OpenLoopOptions): Promise<OpenLoopResult> {
  const child = forkEntry('open-loop', { args: ['child'] });
  try {
    child.send(options);
    // An exit after the answer (the child's own, or the kill below) rejects a settled promise: no effect.
    return await new Promise<OpenLoopResult>((resolve, reject) => {
      child.once('message', (result: OpenLoopResult) => resolve(result));
      child.once('exit', (code) => reject(new Error(`open-loop child exited (code ${code}) without an answer`)));
    });
  } finally {
    if (child.exitCode === null) child.kill();
  }
}

if (process.argv[2] === 'child' && process.send) {
  process.once('message', (options: OpenLoopOptions) => {
    void openLoop(options).then((result) => process.send!(result, () => process.exit(0)));
  });
}
