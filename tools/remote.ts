/**
 * A {@link ToolCaller} that runs tools on a pds over its REST API: what `pds mcp` (stdio) uses, so an IDE's local
 * MCP server and the HTTP endpoint share one platform, one audit trail and one set of limits. The request is built
 * from the tool's own REST binding (operation tools post to `/api/v1/operations/{name}/execute` with `name` pinned);
 * a dispatching tool (`platform_execute_operation`, MCP only) is first resolved to the tool it stands for. A
 * `{ "error" }` answer comes back as the `PlatformError` of its status, so the agent sees the server's message
 * unchanged; a confirmation request comes back as `ConfirmationRequired` with its data (from the `PDS-Confirm*`
 * headers), so the MCP side can put the question to the person. Requests say `X-PDS-Door: mcp`: the answers'
 * messages then name tools and their arguments, as the agent behind this bridge reads them.
 */
import { ConfirmationRequired, HTTP_STATUS, PlatformError, Unavailable, type ErrorCode } from '../core/errors.js';
import { restRequest } from './define.js';
import { DOOR_HEADER } from './door.js';
import { parseInput } from './validation.js';
import type { ToolCaller } from './mcp.js';

const CODE_BY_STATUS = new Map<number, ErrorCode>(
  Object.entries(HTTP_STATUS).map(([code, status]) => [status, code as ErrorCode]),
);

/** The error a `{ "error" }` answer stands for: a confirmation request (its data in headers) or the status's code. */
function errorOf(response: Response, message: string): PlatformError {
  const confirm = response.headers.get('pds-confirm');
  if (response.status === 400 && confirm) {
    const expiresAt = response.headers.get('pds-confirm-expires') ?? '';
    return new ConfirmationRequired(message, { confirm, expiresAt, plan: response.headers.get('pds-confirm-plan') ?? '' });
  }
  return new PlatformError(CODE_BY_STATUS.get(response.status) ?? 'UPSTREAM', message);
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
    let input = (args ?? {}) as Record<string, unknown>;
    if (tool.dispatch) {
      const next = tool.dispatch(parseInput(tool.input, input));
      tool = next.tool;
      input = (next.input ?? {}) as Record<string, unknown>;
    }
    const request = restRequest(tool, input);
    let response: Response;
    try {
      response = await fetchImpl(new URL(baseUrl + request.target), {
        method: request.method,
        // The agent behind this bridge reads MCP words: messages name tools and their arguments, not paths.
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json', [DOOR_HEADER]: 'mcp' },
        body: request.body === undefined ? undefined : JSON.stringify(request.body),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (err) {
      throw new Unavailable(`cannot reach pds at ${baseUrl}: start it with "npm start" or set PDS_BASE_URL`, { cause: err });
    }
    const payload = (await response.json().catch(() => ({}))) as { error?: string };
    if (response.ok) return payload;
    throw errorOf(response, payload.error ?? `pds answered HTTP ${response.status}`);
  };
}
