/**
 * The inventory: every capability pds offers, in one list (STYLE.md: "one central inventory"). REST routes, MCP tools
 * and the OpenAPI document are all generated from it.
 */
import { approvalTools } from './approvals.js';
import type { AnyStream, AnyTool } from './define.js';
import { diagnoseTools } from './diagnose.js';
import { governanceTools } from './governance.js';
import { webhookTools } from './webhooks.js';
import { logTools } from './logs.js';
import { operationsTools } from './operations/index.js';
import { repoTools } from './repos.js';
import { resourceTools } from './resources.js';
import { rolloutTools } from './rollouts.js';
import { scaffoldTools } from './scaffold.js';
import { serviceTools } from './services.js';
import { tenantTools } from './tenants.js';
import { workflowControlTools } from './workflow-control.js';
import { workflowStreams, workflowTools } from './workflows.js';

/** Every tool, in the order clients list them. */
export const allTools: readonly AnyTool[] = [
  ...tenantTools,
  ...governanceTools,
  ...approvalTools,
  ...webhookTools,
  ...serviceTools,
  ...logTools,
  ...resourceTools,
  ...workflowTools,
  ...workflowControlTools,
  ...diagnoseTools,
  ...repoTools,
  ...operationsTools,
  ...rolloutTools,
  ...scaffoldTools,
];

/**
 * Check an inventory at start-up and return it.
 * @throws TypeError when a name is not `platform_<verb>_<noun>`, two tools share a name, two tools claim one REST
 *   route without distinct `pathValues`, a tool's `readOnlyHint` disagrees with its `kind`, or an operation tool's
 *   input is not its contract's parameters (misuse fails fast, before the first request).
 */
export function checkedTools(tools: readonly AnyTool[] = allTools): readonly AnyTool[] {
  const names = new Set<string>();
  const routes = new Map<string, AnyTool[]>();
  for (const tool of tools) {
    if (!/^platform_[a-z]+(_[a-z]+)+$/.test(tool.name)) throw new TypeError(`tool name "${tool.name}" is not platform_<verb>_<noun>`);
    if (names.has(tool.name)) throw new TypeError(`two tools are named "${tool.name}"`);
    names.add(tool.name);
    if (tool.annotations.readOnlyHint !== (tool.kind === 'read')) {
      throw new TypeError(`${tool.name}: readOnlyHint must be ${tool.kind === 'read'} for a ${tool.kind} tool`);
    }
    if (!tool.rest) continue;
    const route = `${tool.rest.method} ${tool.rest.path}`;
    const sharing = routes.get(route) ?? [];
    for (const other of sharing) {
      const a = JSON.stringify(tool.rest.pathValues ?? null);
      if (!tool.rest.pathValues || !other.rest!.pathValues || a === JSON.stringify(other.rest!.pathValues)) {
        throw new TypeError(`${tool.name} and ${other.name} both claim ${route}; tools may share a route only with distinct pathValues`);
      }
    }
    routes.set(route, [...sharing, tool]);
  }
  return tools;
}

/**
 * Every stream (`text/event-stream` answers, `tools/define.ts` StreamDefinition): REST and OpenAPI only, not MCP.
 */
export const allStreams: readonly AnyStream[] = [...workflowStreams];
