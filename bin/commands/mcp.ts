/**
 * `pds mcp`: the same tools over MCP stdio, for IDEs that start a local process. Each tool call goes to the running
 * pds at PDS_BASE_URL over REST with PDS_TOKEN, so there is one platform and one audit trail.
 */
import { parseArgs } from 'node:util';
import { loadConfig } from '../../config.js';
import { createMcpServer, serveMcpStdio } from '../../tools/mcp.js';
import { checkedTools } from '../../tools/registry.js';
import { createRestToolCaller } from '../../tools/remote.js';

export const summary = 'serve the MCP tools over stdio, calling the pds at PDS_BASE_URL with PDS_TOKEN';

/** Serve until stdin closes; returns 0, or 2 without PDS_TOKEN. */
export async function run(argv: string[]): Promise<number> {
  const { values } = parseArgs({ args: argv, options: { help: { type: 'boolean', short: 'h' } } });
  if (values.help) {
    console.log(
      'usage: PDS_TOKEN=<token> [PDS_BASE_URL=http://localhost:8080] pds mcp\n\n' +
        'Speaks MCP on stdin/stdout; every tool call goes to the running pds over REST.',
    );
    return 0;
  }
  const config = loadConfig();
  if (!config.token) {
    console.error('pds mcp: set PDS_TOKEN to a bearer token (e.g. PDS_TOKEN=$(npx pds token --user <you>))');
    return 2;
  }
  const server = createMcpServer(checkedTools(), createRestToolCaller(config.baseUrl, config.token), {
    readOnly: config.readOnly,
  });
  // stdout carries the protocol: anything we say goes to stderr.
  console.error(`pds mcp: serving over stdio; tool calls go to ${config.baseUrl}`);
  await serveMcpStdio(server);
  return 0;
}
