#!/usr/bin/env node
// The `pds` command. Loads the TypeScript sources through tsx so a fresh clone runs with `npm ci` and nothing else.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('./cli.ts');
process.exitCode = await main(process.argv.slice(2));
