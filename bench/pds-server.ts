/**
 * pds for the bench, in its own process: `startServer` with the configuration from the environment (the same
 * composition as `pds serve`). Reports its URL and start-up times over IPC; answers `rss` with its memory usage, `cpu` with its CPU time; `stop` ends it.
 *
 * `BENCH_HEAP_PROFILE=<file>`: from the end of start-up until `stop`, V8's sampling heap profiler records every
 * allocation, including objects already collected (what a request allocates, garbage included), and writes the
 * profile (`.heapprofile`, Chrome DevTools' format) to that file. `--heap-prof` keeps only the objects still alive.
 * With `BENCH_HEAP_PROFILE_PROMOTED=1` it leaves out what a scavenge collected: what remains was promoted to the old
 * generation (or is still young at the end), the garbage that makes full collections come often.
 * `BENCH_CPU_PROFILE=<file>`: a V8 CPU profile (`.cpuprofile`) of the same period, without start-up's module loading
 * and migrations (which `--cpu-prof`, `BENCH_PROFILE=1`, includes).
 */
import { writeFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { loadConfig } from '../config.js';
import { startServer } from '../server.js';

const before = performance.now();
const server = await startServer(loadConfig());
const { BENCH_HEAP_PROFILE: heapProfile, BENCH_CPU_PROFILE: cpuProfile } = process.env;
let post: ((method: string, params?: object) => Promise<unknown>) | undefined;
if (heapProfile || cpuProfile) {
  // Imported only when asked for, so the memory the bench reports is pds's own.
  const { Session } = await import('node:inspector/promises');
  const session = new Session();
  session.connect();
  // The collected-objects options are newer than @types/node's description of the method.
  post = session.post.bind(session) as (method: string, params?: object) => Promise<unknown>;
}
if (post && heapProfile) {
  await post('HeapProfiler.startSampling', { samplingInterval: 16_384, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: process.env.BENCH_HEAP_PROFILE_PROMOTED !== '1' });
}
if (post && cpuProfile) {
  await post('Profiler.enable');
  await post('Profiler.start');
}
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
    if (post && heapProfile) writeFileSync(heapProfile, JSON.stringify(((await post('HeapProfiler.stopSampling')) as { profile: unknown }).profile));
    if (post && cpuProfile) writeFileSync(cpuProfile, JSON.stringify(((await post('Profiler.stop')) as { profile: unknown }).profile));
    await server.close();
    process.exit(0);
  }
});
