/**
 * A {@link ToolCaller} that runs tools on a pds over its REST API: what `pds mcp` (stdio) uses, so an IDE's local
 * MCP server and the HTTP endpoint share one platform, one audit trail and one set of limits. The request is built
 * from the tool's own REST binding (operation tools post to `/api/v1/operations/{name}/execute` with `name` pinned);
 * a dispatching tool (`platform_execute_operation`, MCP only) is first resolved to the tool it stands for. A
 * `{ "error" }` answer comes back as the `PlatformError` of its status, so the agent sees the server's message
 * unchanged.
 */
import { HTTP_STATUS, PlatformError, Unavailable, type ErrorCode } from '../core/errors.js';
import { fillPath, type AnyTool, type RestBinding } from './define.js';
import { parseInput } from './validation.js';
import type { ToolCaller } from './mcp.js';

const CODE_BY_STATUS = new Map<number, ErrorCode>(
  Object.entries(HTTP_STATUS).map(([code, status]) => [status, code as ErrorCode]),
);

/** The REST binding a tool is reached by. @throws TypeError for a tool without one. */
function bindingOf(tool: AnyTool): RestBinding {
  if (!tool.rest) throw new TypeError(`${tool.name} has no REST route`);
  return tool.rest;
}

/**
 * @param baseUrl pds base URL, e.g. `http://localhost:8080`.
 * @param token bearer token sent with every call.
 * @param fetchImpl injectable fetch (default global); each call times out after `timeoutMs` (default 30 000 ms).
 */
export function createRestToolCaller(
  baseUrl: string,
  token: string,
  fetchImpl: typeof fetch = fetch,
  timeoutMs = 30_000,
): ToolCaller {
  return async (requested, args) => {
    let tool = requested;
    let input = { ...((args ?? {}) as Record<string, unknown>) };
    if (tool.dispatch) {
      const parsed = parseInput(tool.input, input);
      const next = tool.dispatch(parsed);
      tool = next.tool;
      input = { ...((next.input ?? {}) as Record<string, unknown>) };
    }
    const binding = bindingOf(tool);
    const pinned = binding.pathValues ?? {};
    const path = fillPath(binding.path, (name) => {
      const value = Object.hasOwn(pinned, name) ? pinned[name] : input[name];
      delete input[name];
      return encodeURIComponent(String(value ?? ''));
    });
    const url = new URL(baseUrl + path);
    let body: string | undefined;
    if (binding.method === 'GET') {
      for (const [k, v] of Object.entries(input)) if (v !== undefined) url.searchParams.set(k, String(v));
    } else {
      body = JSON.stringify(binding.bodyField ? (input[binding.bodyField] ?? {}) : input);
    }
    let response: Response;
    try {
      response = await fetchImpl(url, {
        method: binding.method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json' },
        body,
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (err) {
      throw new Unavailable(`cannot reach pds at ${baseUrl}: start it with "npm start" or set PDS_BASE_URL`, { cause: err });
    }
    const payload = (await response.json().catch(() => ({}))) as { error?: string };
    if (response.ok) return payload;
    const code = CODE_BY_STATUS.get(response.status) ?? 'UPSTREAM';
    throw new PlatformError(code, payload.error ?? `pds answered HTTP ${response.status}`);
  };
}
