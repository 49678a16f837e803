#!/usr/bin/env node
// `npm run bench`: loads bench/run.ts through tsx, like bin/pds.js does for the CLI.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../bench/run.ts');
process.exitCode = await main(process.argv.slice(2));
