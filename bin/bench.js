#!/usr/bin/env node
// `npm run bench` (after `npm run build`): the bench and the servers it starts run compiled, as the image does.
const { main } = await import('../dist/bench/run.js');
process.exitCode = await main(process.argv.slice(2));
