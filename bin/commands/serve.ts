/** `pds serve`: start the API and MCP endpoint (what `npm start` runs). */
import { parseArgs } from 'node:util';
import { loadConfig } from '../../config.js';

export const summary = 'run the pds server (REST /api/v1, MCP /mcp)';

/** Runs until SIGINT/SIGTERM; returns 0 after a clean shutdown. */
export async function run(argv: string[]): Promise<number> {
  const { values } = parseArgs({ args: argv, options: { help: { type: 'boolean', short: 'h' } } });
  if (values.help) {
    console.log('usage: pds serve\n\nConfigured by environment variables; see README.md "Configuration".');
    return 0;
  }
  const config = loadConfig();
  // Loaded here, not at the top: every other `pds` command would otherwise load the whole server to start.
  const { startServer } = await import('../../server.js');
  const server = await startServer(config);
  const base = config.baseUrl;
  console.log(
    [
      `pds is running (backend: ${config.backend}${config.readOnly ? ', read-only' : ''})`,
      `  base URL   ${base}   (listening on ${config.host}:${server.port})`,
      `  REST       ${base}/api/v1   docs ${base}/docs   OpenAPI ${base}/openapi.yaml`,
      `  MCP        ${base}/mcp   (Streamable HTTP, bearer token)`,
      `  state      ${config.backend === 'sandbox' ? config.dataDir : 'in the cluster'}`,
      `  token      npx pds token --user <you>        (admins: ${config.admins.length ? config.admins.join(', ') : 'set PDS_ADMINS=<you> to create tenants'})`,
    ].join('\n'),
  );
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  console.log('pds: shutting down');
  await server.close();
  return 0;
}
