/**
 * pds for the bench, in its own process: `startServer` with the configuration from the environment (the same
 * composition as `pds serve`). Reports its URL over IPC; answers `rss` with its memory usage, `cpu` with its CPU time; `stop` ends it.
 */
import { loadConfig } from '../config.js';
import { startServer } from '../server.js';

const server = await startServer(loadConfig());
process.send!({ url: server.url });
process.on('message', async (msg: { type: string }) => {
  if (msg.type === 'rss') process.send!(process.memoryUsage());
  if (msg.type === 'cpu') process.send!(process.cpuUsage());
  if (msg.type === 'stop') {
    await server.close();
    process.exit(0);
  }
});
