/**
 * The baseline: a bare Koa 3 server on 127.0.0.1, in its own process like pds. `GET /` answers "hello";
 * `GET /json?bytes=N` answers a prebuilt JSON document of N bytes (to separate the cost of moving pds's response
 * bodies from pds's own work). Reports its URL over IPC; answers `cpu` with its CPU time.
 */
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';

const documents = new Map<number, object>();
const app = new Koa();
app.use((ctx) => {
  if (ctx.path === '/json') {
    const bytes = Number(ctx.query.bytes ?? 0);
    let doc = documents.get(bytes);
    if (!doc) documents.set(bytes, (doc = { filler: 'x'.repeat(Math.max(0, bytes - 13)) }));
    ctx.body = doc; // serialised per request, as Koa does for pds
    return;
  }
  ctx.body = 'hello';
});
const server = app.listen(0, '127.0.0.1');
await once(server, 'listening');
process.send!({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` });
process.on('message', (msg: { type: string }) => {
  if (msg.type === 'stop') server.close(() => process.exit(0));
  if (msg.type === 'cpu') process.send!(process.cpuUsage());
  if (msg.type === 'rss') process.send!(process.memoryUsage());
});
