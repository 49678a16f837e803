/**
 * The inventory: every capability pds offers, in one list (STYLE.md: "one central inventory"). REST routes, MCP tools
 * and the OpenAPI document are all generated from it.
 */
import type { AnyTool } from './define.js';
import { logTools } from './logs.js';
import { operationsTools } from './operations.js';
import { repoTools } from './repos.js';
import { resourceTools } from './resources.js';
import { scaffoldTools } from './scaffold.js';
import { serviceTools } from './services.js';
import { tenantTools } from './tenants.js';
import { workflowTools } from './workflows.js';

/** Every tool, in the order clients list them. */
export const allTools: readonly AnyTool[] = [
  ...tenantTools,
  ...serviceTools,
  ...logTools,
  ...resourceTools,
  ...workflowTools,
  ...repoTools,
  ...operationsTools,
  ...scaffoldTools,
];

/**
 * Check an inventory at start-up and return it.
 * @throws TypeError when a name is not `platform_<verb>_<noun>` or two tools share a name or a REST route (misuse
 *   fails fast, before the first request).
 */
export function checkedTools(tools: readonly AnyTool[] = allTools): readonly AnyTool[] {
  const names = new Set<string>();
  const routes = new Set<string>();
  for (const tool of tools) {
    if (!/^platform_[a-z]+(_[a-z]+)+$/.test(tool.name)) throw new TypeError(`tool name "${tool.name}" is not platform_<verb>_<noun>`);
    if (names.has(tool.name)) throw new TypeError(`two tools are named "${tool.name}"`);
    names.add(tool.name);
    if (tool.rest) {
      const route = `${tool.rest.method} ${tool.rest.path}`;
      if (routes.has(route)) throw new TypeError(`two tools claim ${route}`);
      routes.add(route);
    }
  }
  return tools;
}
