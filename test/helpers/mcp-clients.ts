/**
 * The MCP clients pds is tested with, behind one small interface, so a test runs each case with every one of them:
 * the v1 SDK client (`@modelcontextprotocol/sdk`, protocol 2025-11-25 — what the MCP Inspector 0.17 and most IDEs
 * ship) and the v2 client (`@modelcontextprotocol/client`) on 2025-11-25 (its default `initialize` handshake) and
 * pinned to 2026-07-28 (`server/discover`, no handshake, a `_meta` envelope per request).
 */
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport as StdioV1 } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport as HttpV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { Client as ClientV2, StreamableHTTPClientTransport as HttpV2 } from '@modelcontextprotocol/client';
import { StdioClientTransport as StdioV2 } from '@modelcontextprotocol/client/stdio';

/** A tool result as both SDKs return it. */
export interface ToolResult {
  isError?: boolean;
  content: { type: string; text?: string; uri?: string; name?: string; mimeType?: string }[];
  structuredContent?: any;
}

/** A completion request (MCP "Completion"). */
export interface CompleteParams {
  ref: { type: 'ref/resource'; uri: string } | { type: 'ref/prompt'; name: string };
  argument: { name: string; value: string };
  context?: { arguments?: Record<string, string> };
}

/** A listed tool as both SDKs return it. */
export interface ListedTool {
  name: string;
  title?: string;
  description?: string;
  inputSchema: { type: 'object'; properties?: Record<string, any>; required?: string[] };
  outputSchema?: { type: 'object'; properties?: Record<string, any> };
  annotations?: Record<string, unknown>;
  _meta?: Record<string, any>;
}

/** A connected MCP client of either SDK. */
export interface TestClient {
  /** Which client and protocol version, e.g. "v2 client, 2026-07-28". */
  readonly name: string;
  /** The protocol version the connection speaks. */
  readonly protocol: string;
  listTools(): Promise<{ tools: ListedTool[] }>;
  callTool(call: { name: string; arguments?: Record<string, unknown> }, options?: { onprogress?: (p: { progress: number; total?: number; message?: string }) => void }): Promise<ToolResult>;
  /** The server's self-description (name, title, version, icons). */
  serverInfo(): { name: string; title?: string; version: string; icons?: unknown[] } | undefined;
  /** The server's `instructions`. */
  instructions(): string | undefined;
  /** The server's declared capabilities. */
  capabilities(): Record<string, unknown> | undefined;
  listResources(): Promise<{ resources: { uri: string; name: string; mimeType?: string }[] }>;
  listResourceTemplates(): Promise<{ resourceTemplates: { uriTemplate: string; name: string }[] }>;
  readResource(params: { uri: string }): Promise<{ contents: { uri: string; mimeType?: string; text?: string; _meta?: Record<string, any> }[] }>;
  listPrompts(): Promise<{ prompts: { name: string; title?: string; arguments?: { name: string; required?: boolean }[] }[] }>;
  getPrompt(params: { name: string; arguments?: Record<string, string> }): Promise<{ messages: { role: string; content: { type: string; text?: string } }[] }>;
  complete(params: CompleteParams): Promise<{ completion: { values: string[]; total?: number; hasMore?: boolean } }>;
  close(): Promise<void>;
}

/** One of the clients, before connecting. */
export interface ClientKind {
  name: string;
  sdk: 'v1' | 'v2';
  protocol: '2025-11-25' | '2026-07-28';
}

/** Every client × protocol version pds serves, for `describe.each`. */
export const CLIENTS: readonly ClientKind[] = [
  { name: 'v1 client, 2025-11-25', sdk: 'v1', protocol: '2025-11-25' },
  { name: 'v2 client, 2025-11-25', sdk: 'v2', protocol: '2025-11-25' },
  { name: 'v2 client, 2026-07-28', sdk: 'v2', protocol: '2026-07-28' },
];

/** How to start `pds mcp` (or any stdio server). */
export interface StdioTarget {
  command: string;
  args: string[];
  env: Record<string, string>;
  /** Working directory of the child (default: this process's). */
  cwd?: string;
}

/** The MCP Apps extension as a host that renders Apps declares it (SEP-1865 "Client<>Server Capability Negotiation"). */
export const APPS_CAPABILITY = { extensions: { 'io.modelcontextprotocol/ui': { mimeTypes: ['text/html;profile=mcp-app'] } } };

/** Capabilities a test client may declare; `elicitation` gets an answering handler. */
export interface ClientOptions {
  /** Declare the MCP Apps extension ({@link APPS_CAPABILITY}), as a host that renders Apps does. */
  apps?: boolean;
  /** Answer elicitation requests (form mode) with this function. */
  onElicit?: (params: { message: string; requestedSchema: unknown }) => { action: 'accept' | 'decline' | 'cancel'; content?: Record<string, unknown> };
}

function wrap(kind: ClientKind, client: ClientV1 | ClientV2): TestClient {
  const c = client as any; // both SDKs have these methods; their types differ only in generics
  const v1 = kind.sdk === 'v1';
  return {
    name: kind.name,
    protocol: v1 ? kind.protocol : (c.getNegotiatedProtocolVersion() ?? kind.protocol),
    listTools: () => c.listTools(),
    callTool: (call, options) => (v1 ? c.callTool(call, undefined, options) : c.callTool(call, options)),
    serverInfo: () => c.getServerVersion(),
    instructions: () => c.getInstructions(),
    capabilities: () => c.getServerCapabilities(),
    listResources: () => c.listResources(),
    listResourceTemplates: () => c.listResourceTemplates(),
    readResource: (params) => c.readResource(params),
    listPrompts: () => c.listPrompts(),
    getPrompt: (params) => c.getPrompt(params),
    complete: (params) => c.complete(params),
    close: () => c.close(),
  };
}

function clientOf(kind: ClientKind, options: ClientOptions): ClientV1 | ClientV2 {
  const info = { name: `pds-test-${kind.sdk}`, version: '1.0.0' };
  const capabilities = { ...(options.onElicit && { elicitation: { form: {} } }), ...(options.apps && APPS_CAPABILITY) };
  if (kind.sdk === 'v1') {
    const client = new ClientV1(info, { capabilities });
    if (options.onElicit) {
      client.setRequestHandler(ElicitRequestSchema, async (request) => options.onElicit!(request.params as never));
    }
    return client;
  }
  const client = new ClientV2(info, {
    capabilities,
    ...(kind.protocol === '2026-07-28' && { versionNegotiation: { mode: { pin: '2026-07-28' } } }),
  });
  if (options.onElicit) client.setRequestHandler('elicitation/create', async (request) => options.onElicit!(request.params as never) as never);
  return client;
}

/**
 * Connect a client to pds's MCP endpoint over Streamable HTTP.
 * @param url the MCP URL, e.g. `http://127.0.0.1:8080/mcp?toolsets=all`.
 * @param headers sent with every request, e.g. `{ Authorization: 'Bearer …' }`.
 */
export async function connectHttp(kind: ClientKind, url: string, headers: Record<string, string>, options: ClientOptions = {}): Promise<TestClient> {
  const client = clientOf(kind, options);
  if (kind.sdk === 'v1') await (client as ClientV1).connect(new HttpV1(new URL(url), { requestInit: { headers } }));
  else await (client as ClientV2).connect(new HttpV2(new URL(url), { requestInit: { headers } }));
  return wrap(kind, client);
}

/** Start `target` as a child process and connect a client to it over stdio. */
export async function connectStdio(kind: ClientKind, target: StdioTarget, options: ClientOptions = {}): Promise<TestClient> {
  const client = clientOf(kind, options);
  const params = { command: target.command, args: target.args, env: target.env, cwd: target.cwd, stderr: 'ignore' as const };
  if (kind.sdk === 'v1') await (client as ClientV1).connect(new StdioV1(params));
  else await (client as ClientV2).connect(new StdioV2(params));
  return wrap(kind, client);
}

/** The text of a tool result's first content block. */
export function textOf(result: ToolResult): string {
  return result.content[0]?.text ?? '';
}
