/** Process entry of the `pds` command: `node dist/bin/main.js <command>` (compiled) or through `bin/pds.js` (tsx). */
import { main } from './cli.js';

process.exitCode = await main(process.argv.slice(2));
