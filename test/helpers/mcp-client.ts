/** An MCP client (the SDK the repo depends on) connected to a test pds over Streamable HTTP with a bearer token. */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { TestServer } from './server.js';

/** A connected client calling `POST {pds.url}/mcp` as `user`; close it when done. */
export async function connectMcp(pds: TestServer, user: string, name = 'test'): Promise<Client> {
  const client = new Client({ name, version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${pds.url}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${await pds.token(user)}` } },
  });
  await client.connect(transport);
  return client;
}

/** The text of a tool result's first content block. */
export function resultText(result: unknown): string {
  const content = (result as { content?: unknown }).content as { type: string; text?: string }[] | undefined;
  return content?.[0]?.text ?? '';
}
