/**
 * The two doors a caller comes through (issue 11 item 10, "words for each door"): messages that say what to call next
 * name a {@link NextCall} (a tool and its arguments), and the caller's door words it — an MCP client reads the tool and
 * its arguments, a REST client the method and path of the same call, derived from the tool's own REST binding.
 *
 * The door travels in the call (`ToolContext.door`), chosen by the edge: MCP for `POST /mcp`, REST for `/api/v1/*`
 * unless the request says `X-PDS-Door: mcp` (what `pds mcp` on stdio sends, because its agent reads MCP words).
 */
import type { Door, NextCall } from '../core/operations/index.js';
import { restRequest, type AnyTool } from './define.js';

/** The request header with which a REST caller asks for MCP words (`pds mcp` forwards MCP calls over REST). */
export const DOOR_HEADER = 'x-pds-door';

/** MCP words: `platform_get_status {"team":"acme","app":"web"}`. */
export const MCP_DOOR: Door = Object.freeze({
  kind: 'mcp' as const,
  name: (call: NextCall) => `${call.tool} ${JSON.stringify(call.arguments)}`,
});

/**
 * REST words for the tools in `tools`: `GET /api/v1/status/acme/web`, `POST /api/v1/operations/create-tenant/execute
 * {"team_name":"acme"}`. A tool without a REST binding (`platform_execute_operation`) keeps its MCP words.
 */
export function restDoor(tools: readonly AnyTool[]): Door {
  const byName = new Map(tools.map((t) => [t.name, t]));
  return Object.freeze({
    kind: 'rest' as const,
    name(call: NextCall): string {
      const tool = byName.get(call.tool);
      if (!tool?.rest) return MCP_DOOR.name(call);
      const request = restRequest(tool, call.arguments);
      const body = request.body && Object.keys(request.body).length ? ` ${JSON.stringify(request.body)}` : '';
      return `${request.method} ${request.target}${body}`;
    },
  });
}

/** The doors of one tool inventory, built once by the composition root. */
export interface Doors {
  mcp: Door;
  rest: Door;
}

/** {@link MCP_DOOR} and {@link restDoor} for `tools`. */
export function doorsFor(tools: readonly AnyTool[]): Doors {
  return { mcp: MCP_DOOR, rest: restDoor(tools) };
}
