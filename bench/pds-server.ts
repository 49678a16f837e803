/**
 * pds for the bench, in its own process: `startServer` with the configuration from the environment (the same
 * composition as `pds serve`). Reports its URL and start-up times over IPC; answers `rss` with its memory usage, `cpu` with its CPU time; `stop` ends it.
 */
import { performance } from 'node:perf_hooks';
import { loadConfig } from '../config.js';
import { startServer } from '../server.js';

const before = performance.now();
const server = await startServer(loadConfig());
// `startMs`: startServer alone (platform and records opened, listening), without Node's start and module loading.
process.send!({ url: server.url, startMs: performance.now() - before, uptimeMs: process.uptime() * 1000 });
process.on('message', async (msg: { type: string }) => {
  if (msg.type === 'rss') process.send!(process.memoryUsage());
  if (msg.type === 'heap') {
    globalThis.gc?.();
    process.send!(process.memoryUsage());
  }
  if (msg.type === 'cpu') process.send!(process.cpuUsage());
  if (msg.type === 'stop') {
    await server.close();
    process.exit(0);
  }
});
