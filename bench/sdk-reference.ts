/**
 * The MCP reference for the bench (issue 13 §6): a bare server on the official MCP SDK v2, in its own process like pds,
 * serving one tool whose result is exactly pds's answer to the bench's `tools/call` (read from the JSON file named by
 * `BENCH_MCP_RESULT`). It does what the SDK's documentation does for a stateless Streamable HTTP server on Node: a
 * plain `node:http` server, per POST an `McpServer` with the tool and a `NodeStreamableHTTPServerTransport` answering
 * JSON. No authentication, limits, validation or logging: only the protocol layer pds builds on. Reports its URL over
 * IPC; answers `cpu` with its CPU time.
 */
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { NodeStreamableHTTPServerTransport } from '@modelcontextprotocol/node';
import { McpServer, type CallToolResult } from '@modelcontextprotocol/server';

const result = JSON.parse(readFileSync(process.env.BENCH_MCP_RESULT!, 'utf8')) as CallToolResult;
const toolName = process.env.BENCH_MCP_TOOL ?? 'platform_list_operations';

const server = createServer((req, res) => {
  if (req.method !== 'POST') {
    res.writeHead(405).end();
    return;
  }
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    void (async () => {
      const body: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      const mcp = new McpServer({ name: 'bench-reference', version: '1.0.0' });
      mcp.registerTool(toolName, { description: 'The same result pds answers.' }, async () => result);
      const transport = new NodeStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      res.on('close', () => {
        void transport.close();
        void mcp.close();
      });
      await mcp.connect(transport);
      await transport.handleRequest(req, res, body);
    })().catch(() => {
      if (!res.headersSent) res.writeHead(500).end();
    });
  });
});
server.listen(0, '127.0.0.1');
await once(server, 'listening');
process.send!({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp` });
process.on('message', (msg: { type: string }) => {
  if (msg.type === 'stop') server.close(() => process.exit(0));
  if (msg.type === 'cpu') process.send!(process.cpuUsage());
  if (msg.type === 'rss') process.send!(process.memoryUsage());
});
