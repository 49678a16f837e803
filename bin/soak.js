#!/usr/bin/env node
// `npm run soak` (after `npm run build`): the soak and the pds it starts run compiled, as the image does.
const { main } = await import('../dist/bench/soak.js');
process.exitCode = await main();
