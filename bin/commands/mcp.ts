/**
 * `pds mcp`: the same tools over MCP stdio (protocol 2025-11-25 or 2026-07-28, as the client opens), for IDEs that
 * start a local process. Each tool call goes to the running pds at PDS_BASE_URL over REST with PDS_TOKEN, so there is
 * one platform and one audit trail. Exits 0 when its input ends (after answering what it read).
 */
import { parseArgs } from 'node:util';
import { loadConfig } from '../../config.js';
import { createLogger } from '../../core/logger.js';
import { createMcpServer } from '../../tools/mcp.js';
import { serveMcpStdio } from '../../tools/mcp-stdio.js';
import { checkedTools } from '../../tools/registry.js';
import { createRestToolCaller } from '../../tools/remote.js';
import { selectToolsets, toolsIn } from '../../tools/toolsets.js';

export const summary = 'MCP over stdio, calling the pds at PDS_BASE_URL';

/** Serve until stdin ends; returns 0, or 2 without PDS_TOKEN or with an unknown toolset. */
export async function run(argv: string[]): Promise<number> {
  const { values } = parseArgs({ args: argv, options: { help: { type: 'boolean', short: 'h' }, toolsets: { type: 'string' } } });
  if (values.help) {
    console.log(
      'usage: PDS_TOKEN=<token> [PDS_BASE_URL=http://localhost:8080] pds mcp [--toolsets observe,deploy,…|all]\n\n' +
        'Speaks MCP on stdin/stdout; every tool call goes to the running pds over REST.\n' +
        'Toolsets: observe, deploy, repos, scaffold (the default), tenants, catalog, or all (within PDS_TOOLSETS).',
    );
    return 0;
  }
  const config = loadConfig();
  if (!config.token) {
    console.error('pds mcp: set PDS_TOKEN to a bearer token (e.g. PDS_TOKEN=$(npx pds token --user <you>))');
    return 2;
  }
  let tools;
  let sets;
  const inventory = checkedTools();
  try {
    sets = selectToolsets(config.toolsets, values.toolsets);
    tools = toolsIn(inventory, sets);
  } catch (err) {
    console.error(`pds mcp: ${(err as Error).message}`);
    return 2;
  }
  const call = createRestToolCaller(config.baseUrl, config.token);
  // A sealed state (of a question put to the person) only ever comes back to this process: a random key is enough.
  const stateSecret = crypto.getRandomValues(new Uint8Array(32));
  // stdout carries the protocol: anything we say goes to stderr.
  const log = createLogger({ level: config.logLevel, destination: process.stderr });
  console.error(`pds mcp: serving over stdio; tool calls go to ${config.baseUrl}`);
  await serveMcpStdio(
    () =>
      createMcpServer(tools, call, {
        readOnly: config.readOnly,
        log,
        baseUrl: config.baseUrl,
        caller: 'stdio',
        stateSecret,
        toolsets: { inventory, selected: sets, allowed: config.toolsets, howToSelect: (s) => `pds mcp --toolsets ${s}` },
      }),
    { log },
  );
  return 0;
}
