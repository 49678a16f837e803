/** Process entry of the `pds` command: `node dist/bin/main.js <command>` compiled (bin/pds.js), or the sources through tsx (bin/pds-src.js, `npm run dev`). */
import { EXIT } from './client/errors.js';

const argv = process.argv.slice(2);
if (argv[0] === 'serve') {
  // The server straight away, as the CLI's dispatch would run it (same exit codes, same message on a failure), without
  // loading the people commands first: their HTTP client, openid-client and terminal widgets would stay in the
  // server's memory unused (issue 23 item 1).
  try {
    process.exitCode = await (await import('./commands/serve.js')).run(argv.slice(1));
  } catch (err) {
    process.stderr.write(`pds serve: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = EXIT.failed;
  }
} else {
  const { main } = await import('./cli.js');
  process.exitCode = await main(argv);
}
