/**
 * The MCP face of the tools (DESIGN.md; MCP spec 2025-06-18 "Tools"): every tool in the inventory is listed with its
 * title, description, JSON Schemas (converted once, at start-up) and annotations, and `tools/call` runs it through the
 * caller-supplied `call` (invoke() in-process, or REST for `pds mcp` on stdio).
 *
 * We use the SDK's low-level `Server` rather than `McpServer.registerTool` for two reasons: argument validation must
 * be invoke()'s, so an agent gets the very message REST gives (McpServer would answer first with its own), and the
 * stateless Streamable HTTP transport needs a server per request, which must not redo schema conversion.
 *
 * Errors: a `PlatformError` becomes a tool result with `isError: true` and its message (the agent can correct itself);
 * anything else is logged and reported as `internal error` without detail.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv-provider.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  CallToolRequestSchema,
  ListToolsRequestSchema,
  type CallToolResult,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import { isPlatformError, type PlatformError } from '../core/errors.js';
import { silentLogger, type Logger } from '../core/logger.js';
import type { AnyTool } from './define.js';
import { outputJson } from './invoke.js';

/** Runs one tool with raw MCP arguments; returns the tool output or throws a PlatformError. */
export type ToolCaller = (tool: AnyTool, args: unknown) => Promise<unknown>;

/** Name and version announced in `initialize`. */
export const SERVER_INFO = { name: 'pds', version: '0.1.0' } as const;

const INSTRUCTIONS =
  'pds is a team deployment platform. Read tools (platform_get_*, platform_list_*) change nothing. Operation tools ' +
  '(platform_deploy_service, platform_rollback_service, …) submit a workflow and return its name at once: poll ' +
  'platform_get_workflow until the status is succeeded or failed, then check platform_get_status. Retire and delete ' +
  'need a confirmation value that the first call returns. To prepare a repository, use platform_scaffold_repository.';

// The SDK would build an Ajv instance per Server (about 150 µs); stateless HTTP makes a Server per request, so share one.
const schemaValidator = new AjvJsonSchemaValidator();

const listings = new WeakMap<readonly AnyTool[], Tool[]>();
/**
 * The `tools/list` entries for a set of tools (MCP spec "Tools": name, title, description, `inputSchema`,
 * `outputSchema` as JSON Schema 2020-12, annotations), converted once per tool set and cached.
 */
export function toolListing(tools: readonly AnyTool[]): Tool[] {
  let listing = listings.get(tools);
  if (!listing) {
    listing = tools.map((tool) => ({
      name: tool.name,
      title: tool.title,
      description: tool.description,
      inputSchema: z.toJSONSchema(tool.input, { io: 'input' }) as Tool['inputSchema'],
      outputSchema: z.toJSONSchema(tool.output, { io: 'output' }) as Tool['outputSchema'],
      annotations: { title: tool.title, ...tool.annotations },
    }));
    listings.set(tools, listing);
  }
  return listing;
}

/** Render a thrown error as a tool result an agent can read. */
export function errorResult(err: unknown, log: Logger = silentLogger): CallToolResult {
  if (isPlatformError(err)) return { isError: true, content: [{ type: 'text', text: err.message }] };
  log.error({ err }, 'unexpected error in a tool call');
  return { isError: true, content: [{ type: 'text', text: 'internal error' }] };
}

const indexes = new WeakMap<readonly AnyTool[], Map<string, AnyTool>>();
/** Tools by name, built once per tool set. */
function toolIndex(tools: readonly AnyTool[]): Map<string, AnyTool> {
  let index = indexes.get(tools);
  if (!index) indexes.set(tools, (index = new Map(tools.map((t) => [t.name, t]))));
  return index;
}

const readTools = new WeakMap<readonly AnyTool[], AnyTool[]>();
/** The `read` tools of a set, computed once per set (so its listing is cached too). */
function readOnlyView(tools: readonly AnyTool[]): AnyTool[] {
  let view = readTools.get(tools);
  if (!view) readTools.set(tools, (view = tools.filter((t) => t.kind === 'read')));
  return view;
}

/**
 * The JSON-RPC answer for an MCP request that was refused before it reached a tool (the 300/min route limit): a single
 * `tools/call` request gets a tool result with `isError: true` and the refusal (which says when to retry), so an agent
 * can read it; anything else (`tools/list`, `initialize`, notifications) returns `undefined` and the HTTP error stands.
 * @param body the parsed HTTP body.
 */
export function refusedToolCall(body: unknown, err: PlatformError): { jsonrpc: '2.0'; id: string | number; result: CallToolResult } | undefined {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return undefined;
  const message = body as { jsonrpc?: unknown; id?: unknown; method?: unknown };
  if (message.jsonrpc !== '2.0' || message.method !== 'tools/call') return undefined;
  if (typeof message.id !== 'string' && typeof message.id !== 'number') return undefined;
  return { jsonrpc: '2.0', id: message.id, result: errorResult(err) };
}

/**
 * An MCP server (one per connection or, for stateless HTTP, per request) that lists `tools` and calls them through
 * `call`. With `readOnly`, write tools are not listed; a call to one still reaches `call`, whose invoke() refuses it
 * with the read-only message. Cheap to construct: no schema work happens here.
 */
export function createMcpServer(
  tools: readonly AnyTool[],
  call: ToolCaller,
  options: { readOnly?: boolean; log?: Logger } = {},
): Server {
  const byName = toolIndex(tools);
  const listing = toolListing(options.readOnly ? readOnlyView(tools) : tools);
  const server = new Server(SERVER_INFO, {
    capabilities: { tools: { listChanged: false } },
    instructions: INSTRUCTIONS,
    jsonSchemaValidator: schemaValidator,
  });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: listing }));
  server.setRequestHandler(CallToolRequestSchema, async (request): Promise<CallToolResult> => {
    const tool = byName.get(request.params.name);
    if (!tool) {
      return { isError: true, content: [{ type: 'text', text: `unknown tool "${request.params.name}"; see tools/list` }] };
    }
    try {
      const output = (await call(tool, request.params.arguments ?? {})) as Record<string, unknown>;
      return { content: [{ type: 'text', text: outputJson(output) }], structuredContent: output };
    } catch (err) {
      return errorResult(err, options.log);
    }
  });
  return server;
}

/**
 * Serve one Streamable HTTP request statelessly with JSON responses (MCP spec "Streamable HTTP"; no sessions, so
 * any replica can answer). The caller has already authenticated the request.
 * @param body the parsed JSON-RPC body.
 */
export async function handleMcpHttpRequest(
  server: Server,
  req: IncomingMessage,
  res: ServerResponse,
  body: unknown,
): Promise<void> {
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  res.on('close', () => {
    void transport.close();
    void server.close();
  });
  await server.connect(transport);
  await transport.handleRequest(req, res, body);
}

/** Serve MCP over stdio until the input closes (`pds mcp`). */
export async function serveMcpStdio(server: Server): Promise<void> {
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => {
    transport.onclose = resolve;
  });
  await server.connect(transport);
  await closed;
}
