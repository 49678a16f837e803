/** `pds serve`: start the API and MCP endpoint (what `npm start` runs). */
import { parseArgs } from 'node:util';
import { loadConfig } from '../../config.js';
import type { RunningServer } from '../../server.js';

export const summary = 'run the pds server (REST /api/v1, MCP /mcp)';

/**
 * Runs until SIGINT/SIGTERM, then shuts down gracefully (`RunningServer.shutdown`: in-flight requests finish within
 * `PDS_SHUTDOWN_S`); a second signal stops at once. Returns 0 after the shutdown.
 */
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
  server.log.info(
    {
      backend: config.backend,
      readOnly: config.readOnly,
      baseUrl: base,
      listen: `${config.host}:${server.port}`,
      rest: `${base}/api/v1`,
      docs: `${base}/docs`,
      openapi: `${base}/openapi.yaml`,
      mcp: `${base}/mcp`,
      state: config.backend === 'sandbox' ? config.dataDir : 'in the cluster',
      ...(config.metricsPort && { metrics: `${config.host}:${config.metricsPort}/metrics` }),
      admins: config.admins,
    },
    `pds is running at ${base} (backend ${config.backend}${config.readOnly ? ', read-only' : ''}); tokens: npx pds token --user <you>` +
      // The sandbox has no identity provider of its own: the console's one-time sign-in URL stands in (issue 21).
      (config.backend === 'sandbox' ? `; web console: ${base}/ (sign in: npx pds console --user <you>)` : `; web console: ${base}/`) +
      (config.admins.length ? '' : '; set PDS_ADMINS=<you> to create tenants (or run `pds dev`: the sandbox with you as admin)'),
  );
  await runUntilSignal(server);
  return 0;
}

/**
 * Serve until SIGINT or SIGTERM, then shut down gracefully (`RunningServer.shutdown`: in-flight requests finish within
 * `PDS_SHUTDOWN_S`); a second signal stops at once with exit code 1. Shared by `pds serve` and `pds dev`.
 */
export async function runUntilSignal(server: RunningServer): Promise<void> {
  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  server.log.info({ signal, graceSeconds: server.config.shutdownSeconds }, 'shutting down: no new connections; finishing requests in flight');
  const force = () => {
    server.log.warn('second signal: stopping at once');
    void server.close().finally(() => process.exit(1));
  };
  process.once('SIGINT', force);
  process.once('SIGTERM', force);
  const { unfinished } = await server.shutdown();
  server.log.info({ unfinished }, 'pds stopped');
}
