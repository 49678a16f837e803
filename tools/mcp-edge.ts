/**
 * What the MCP edge (`rest/mcp.ts`, `rest/app.ts`, `tools/mcp-stdio.ts`) decides before a request reaches the SDK, and
 * the names pages share with the MCP server: none of it imports the MCP SDK, so a pds that has not yet served an MCP
 * request has not loaded it (issue 23 item 1; `rest/mcp.ts` imports the SDK's side, `tools/mcp.ts` and
 * `tools/mcp-http.ts`, at the first `POST /mcp`).
 *
 * Answers built here follow the MCP spec's `tools/call` result (2025-11-25 and 2026-07-28 "Tools"; a 2026-07-28 result
 * carries `resultType`).
 */
import type { CallToolResult } from '@modelcontextprotocol/server';
import { InsufficientScope, type ErrorCode, type PlatformError } from '../core/errors.js';
import type { Identity } from '../auth/identity.js';
import type { AnyTool } from './define.js';
import { requireScopes } from './scopes.js';
import { parseInput } from './validation.js';

/** Name and version of this MCP server (also the OpenAPI `info.version`). */
export const SERVER_INFO = { name: 'pds', version: '0.1.0' } as const;

/**
 * The `_meta` key of an `isError` tool result that carries the error's stable code (`PlatformError.code`, e.g.
 * `NOT_FOUND`): the code REST sends in `PDS-Error-Code`, the same over HTTP and stdio.
 */
export const ERROR_CODE_META = 'pds/errorCode';

/** The pds icon (an SVG served at `/icon.svg`). */
export const ICON_PATH = '/icon.svg';

/**
 * The `_meta` key naming a 2026-07-28 request's protocol version: the SDK's `PROTOCOL_VERSION_META_KEY`, written out so
 * this module does not load the SDK (`test/tools/mcp-edge.test.ts` checks that the two agree).
 */
export const PROTOCOL_VERSION_META_KEY = 'io.modelcontextprotocol/protocolVersion';

type JsonRpcId = string | number;
/** A JSON-RPC response carrying a tool result. */
export interface ToolCallAnswer {
  jsonrpc: '2.0';
  id: JsonRpcId;
  result: CallToolResult & { resultType?: 'complete' };
}

/**
 * A `tools/call` answered with an `isError` result without reaching the SDK, or `undefined` when `body` is not a
 * single `tools/call` request. A 2026-07-28 request (its `_meta` names the protocol version) gets the `resultType`
 * that revision requires; the server identity `_meta` is a SHOULD and is left out.
 */
function toolCallAnswer(body: unknown, message: string, code: ErrorCode): ToolCallAnswer | undefined {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return undefined;
  const request = body as { jsonrpc?: unknown; id?: unknown; method?: unknown; params?: { _meta?: Record<string, unknown> } };
  if (request.jsonrpc !== '2.0' || request.method !== 'tools/call') return undefined;
  if (typeof request.id !== 'string' && typeof request.id !== 'number') return undefined;
  const modern = typeof request.params?._meta?.[PROTOCOL_VERSION_META_KEY] === 'string';
  const result: ToolCallAnswer['result'] = { isError: true, content: [{ type: 'text', text: message }], _meta: { [ERROR_CODE_META]: code } };
  return { jsonrpc: '2.0', id: request.id, result: modern ? { ...result, resultType: 'complete' } : result };
}

/**
 * The JSON-RPC answer for an MCP request that was refused before it reached a tool (the 300/min route limit): a single
 * `tools/call` request gets a tool result with `isError: true` and the refusal (which says when to retry), so an agent
 * can read it; anything else (`tools/list`, `initialize`, notifications) returns `undefined` and the HTTP error stands.
 * @param body the parsed HTTP body.
 */
export function refusedToolCall(body: unknown, err: PlatformError): ToolCallAnswer | undefined {
  return toolCallAnswer(body, err.message, err.code);
}

/** Where `value` holds a `__proto__` key, as a dotted path (`parameters.__proto__`), or `undefined`. Iterative. */
function protoKeyPath(value: unknown): string | undefined {
  const pending: [unknown, string][] = [[value, '']];
  while (pending.length) {
    const [current, path] = pending.pop()!;
    if (current === null || typeof current !== 'object') continue;
    for (const key of Object.keys(current)) {
      const here = path ? `${path}.${key}` : key;
      if (key === '__proto__') return here;
      pending.push([(current as Record<string, unknown>)[key], here]);
    }
  }
  return undefined;
}

/**
 * The answer to a `tools/call` whose arguments hold a `__proto__` key (as `JSON.parse` keeps it), or `undefined`.
 * Checked before the SDK parses the message, because object assignment there turns the key into a prototype and
 * invoke() would never see it: the agent gets an `isError` result naming the field, as for any other bad parameter.
 */
export function protoKeyToolCall(body: unknown): ToolCallAnswer | undefined {
  const path = protoKeyPath((body as { params?: { arguments?: unknown } } | null)?.params?.arguments);
  return path === undefined ? undefined : toolCallAnswer(body, `invalid parameters: ${path}: "__proto__" is not allowed as a parameter name`, 'INVALID_PARAMS');
}

/**
 * The scope refusal for a `tools/call` the caller's token cannot make, or `undefined` (issue 12, MCP "step-up").
 * Checked at the HTTP edge, before the SDK runs the tool, because a client asks the person for more scopes only on an
 * HTTP 403 with `WWW-Authenticate: Bearer error="insufficient_scope"`, never on a tool result. A dispatching tool
 * (`platform_execute_operation`) is checked as the operation it names; a call that does not name a valid tool is left
 * to the SDK and invoke(), which answer it as they always do.
 * @param tools the tools the request may call (its toolsets).
 */
export function insufficientScopeForCall(
  tools: readonly AnyTool[],
  body: unknown,
  identity: Identity,
  resourceMetadata: string,
): InsufficientScope | undefined {
  if (!identity.scopes) return undefined;
  const message = body as { method?: unknown; params?: { name?: unknown; arguments?: unknown } } | null;
  if (message?.method !== 'tools/call' || typeof message.params?.name !== 'string') return undefined;
  let tool = tools.find((t) => t.name === message.params!.name);
  if (tool?.dispatch) {
    try {
      tool = tool.dispatch(parseInput(tool.input, message.params.arguments ?? {})).tool;
    } catch {
      return undefined;
    }
  }
  if (!tool) return undefined;
  try {
    requireScopes(tool, identity, resourceMetadata);
    return undefined;
  } catch (err) {
    if (err instanceof InsufficientScope) return err;
    throw err;
  }
}
