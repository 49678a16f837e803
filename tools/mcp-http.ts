/**
 * MCP over Streamable HTTP, stateless (MCP spec 2025-11-25 and 2026-07-28 "Transports"): every POST is answered by a
 * fresh server from {@link createMcpServer}, so any replica can answer any request. The caller (`rest/`) has already
 * authenticated the request, checked its Origin and parsed its body.
 *
 * Routing by protocol era, as the SDK classifies it (`classifyInboundRequest`, the same predicate `createMcpHandler`
 * uses):
 * - 2025-11-25 and earlier (no per-request `_meta` envelope): one JSON-RPC request that can only be answered with
 *   JSON goes through {@link JsonExchangeTransport} (`mcp-json-exchange.ts`: the SDK's `Server` on a Node transport
 *   of ours, without the WHATWG `Request`/`Response` round trip). Everything else — `initialize`, notifications, a
 *   progress token (answered as SSE, so progress notifications can flow), headers the SDK refuses — goes through a
 *   per-request `NodeStreamableHTTPServerTransport`. Both were measured faster than `createMcpHandler`'s legacy leg
 *   (BENCHMARKS.md), which always streams and converts every request into a WHATWG `Request`.
 * - 2026-07-28 (and every request the SDK's validation ladder refuses): `createMcpHandler` in strict mode, which owns
 *   `server/discover`, the SEP-2243 header checks and `input_required`; it answers JSON and switches to SSE when a
 *   handler sends a notification before its result.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { NodeStreamableHTTPServerTransport, toNodeHandler } from '@modelcontextprotocol/node';
import { classifyInboundRequest, createMcpHandler, type AuthInfo } from '@modelcontextprotocol/server';
import { silentLogger, type Logger } from '../core/logger.js';
import type { McpServerBuilder } from './mcp.js';
import { JsonExchangeTransport, jsonExchangeMessage } from './mcp-json-exchange.js';

/** Serves one authenticated MCP POST; see {@link createMcpHttpHandler}. */
export type McpHttpHandler = (req: IncomingMessage, res: ServerResponse, body: unknown, build: McpServerBuilder) => Promise<void>;

/** Where the builder of a 2026-07-28 request travels through `createMcpHandler` to its factory. */
const BUILDER = 'pds.mcpServerBuilder';

/** Whether a JSON-RPC request asks for progress (`params._meta.progressToken`), so it must be answerable as SSE. */
function wantsProgress(body: unknown): boolean {
  const params = (body as { params?: { _meta?: { progressToken?: unknown } } } | null)?.params;
  return params?._meta?.progressToken !== undefined;
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * The stateless MCP endpoint. Built once at start-up (the 2026-07-28 handler holds no per-request state; nothing
 * expensive happens per request beyond the server itself).
 * @param log receives errors the SDK reports while serving (never shown to the client).
 */
export function createMcpHttpHandler(log: Logger = silentLogger): McpHttpHandler {
  const onerror = (err: Error) => log.debug({ err }, 'MCP request refused or failed');
  const modern = toNodeHandler(
    createMcpHandler(({ authInfo }) => (authInfo!.extra![BUILDER] as McpServerBuilder)(), { legacy: 'reject', onerror }),
    { onerror },
  );
  return async (req, res, body, build) => {
    const route = classifyInboundRequest({
      httpMethod: 'POST',
      protocolVersionHeader: header(req, 'mcp-protocol-version'),
      mcpMethodHeader: header(req, 'mcp-method'),
      mcpNameHeader: header(req, 'mcp-name'),
      body,
    });
    if (route.kind !== 'legacy') {
      // toNodeHandler hands `req.auth` to the factory: the only per-request channel createMcpHandler has.
      const auth: AuthInfo = { token: '', clientId: 'pds', scopes: [], extra: { [BUILDER]: build } };
      (req as IncomingMessage & { auth?: AuthInfo }).auth = auth;
      await modern(req, res, body);
      return;
    }
    const server = build();
    server.onerror = onerror;
    const message = jsonExchangeMessage(req, body);
    if (message) {
      const exchange = new JsonExchangeTransport(res);
      await server.connect(exchange);
      await exchange.handle(message);
      return;
    }
    const transport = new NodeStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: !wantsProgress(body) });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  };
}
