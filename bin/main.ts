/** Process entry of the `pds` command: `node dist/bin/main.js <command>` compiled (bin/pds.js), or the sources through tsx (bin/pds-src.js, `npm run dev`). */
import { main } from './cli.js';

process.exitCode = await main(process.argv.slice(2));
