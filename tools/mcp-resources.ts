/**
 * MCP resources (issue 11 item 7; MCP spec "Resources"): what an agent can read by URI instead of a tool call — a
 * workflow's progress, a service's status and logs, the operation catalog and the scaffolding templates. Each resource
 * is read through the read tool that serves the same data (`call`, so invoke() applies the same validation and access
 * checks as for the tool, over HTTP and over the REST bridge of `pds mcp`): a resource the caller may not see is an
 * error, never data.
 *
 * URIs: `pds://workflows/{name}`, `pds://services/{team}/{app}/status`, `pds://services/{team}/{app}/logs`,
 * `pds://operations/{name}`, and the fixed `pds://operations` and `pds://templates`.
 */
import {
  ProtocolError,
  ProtocolErrorCode,
  ResourceNotFoundError,
  UriTemplate,
  type ReadResourceResult,
  type Resource,
  type ResourceLink,
  type ResourceTemplateType,
} from '@modelcontextprotocol/server';
import { isPlatformError } from '../core/errors.js';
import { silentLogger, type Logger } from '../core/logger.js';
import type { AnyTool } from './define.js';
import type { CallInteraction } from './interaction.js';
import { outputJson } from './invoke.js';
import { getLogs } from './logs.js';
import { getOperation, listOperations } from './operations/catalog.js';
import { listTemplates } from './scaffold.js';
import { getStatus } from './services.js';
import { getWorkflow } from './workflows.js';

/** Runs a read tool for the caller (the server's `call`). */
type ReadCaller = (tool: AnyTool, args: Record<string, unknown>, interaction: CallInteraction) => Promise<unknown>;

/** A family of resources: a URI template and the read tool whose arguments are its variables. */
interface TemplateEntry {
  template: UriTemplate;
  listed: ResourceTemplateType;
  tool: AnyTool;
}

const JSON_TYPE = 'application/json';

function templateOf(uriTemplate: string, name: string, title: string, description: string, tool: AnyTool): TemplateEntry {
  return { template: new UriTemplate(uriTemplate), listed: { uriTemplate, name, title, description, mimeType: JSON_TYPE }, tool };
}

/** The resource templates, in listing order (MCP `resources/templates/list`). */
const TEMPLATES: readonly TemplateEntry[] = [
  templateOf('pds://workflows/{name}', 'workflow', 'Workflow progress', 'A submitted operation: its audit entry (submitted, succeeded or failed) and the engine\'s note; as platform_get_workflow.', getWorkflow),
  templateOf('pds://services/{team}/{app}/status', 'service-status', 'Service status', 'Sync and health of a service as Argo CD reports them, with its image tag and host; as platform_get_status.', getStatus),
  templateOf('pds://services/{team}/{app}/logs', 'service-logs', 'Service logs', 'The newest 100 log lines of the last hour; as platform_get_logs.', getLogs),
  templateOf('pds://operations/{name}', 'operation', 'Operation', 'One operation: its parameters, risk, confirmation and who may run it; as platform_get_operation.', getOperation),
];

/** Resources with a fixed URI (MCP `resources/list`). */
const FIXED: readonly { listed: Resource; tool: AnyTool }[] = [
  {
    listed: { uri: 'pds://operations', name: 'operations', title: 'Operation catalog', description: 'Every operation with its parameters; as platform_list_operations.', mimeType: JSON_TYPE },
    tool: listOperations,
  },
  {
    listed: { uri: 'pds://templates', name: 'templates', title: 'Scaffolding templates', description: 'The repository templates and deploy trigger patterns; as platform_list_templates.', mimeType: JSON_TYPE },
    tool: listTemplates,
  },
];

/** `resources/list`: the fixed resources. */
export const RESOURCES: readonly Resource[] = FIXED.map((f) => f.listed);

/** `resources/templates/list`: the URI templates. */
export const RESOURCE_TEMPLATES: readonly ResourceTemplateType[] = TEMPLATES.map((t) => t.listed);

/** The URI of a workflow's resource, e.g. `pds://workflows/deploy-service-x7k2p`. */
export function workflowUri(name: string): string {
  return `pds://workflows/${encodeURIComponent(name)}`;
}

/** The `resource_link` an operation result carries to its workflow (MCP "Tool result: resource links"). */
export function workflowLink(name: string): ResourceLink {
  return {
    type: 'resource_link',
    uri: workflowUri(name),
    name,
    title: `Workflow ${name}`,
    description: 'Progress of the submitted workflow (as platform_get_workflow)',
    mimeType: JSON_TYPE,
  };
}

/** The read tool and its arguments for `uri`, or `undefined` when no resource has that URI. */
function resolve(uri: string): { tool: AnyTool; args: Record<string, unknown> } | undefined {
  const fixed = FIXED.find((f) => f.listed.uri === uri);
  if (fixed) return { tool: fixed.tool, args: {} };
  for (const entry of TEMPLATES) {
    const vars = entry.template.match(uri);
    if (vars) return { tool: entry.tool, args: Object.fromEntries(Object.entries(vars).map(([k, v]) => [k, Array.isArray(v) ? v[0] : v])) };
  }
  return undefined;
}

/**
 * `resources/read`: the JSON the matching read tool answers, for this caller.
 * @throws ResourceNotFoundError (`-32602` with `data.uri`) for a URI no resource has, or what does not exist.
 * @throws ProtocolError `-32602` with `data.code` (`FORBIDDEN`, `INVALID_PARAMS`, …) and the tool's message for any
 *   other refusal: an error, never data; `-32603` `internal error` for a bug (logged).
 */
export async function readResource(uri: string, call: ReadCaller, interaction: CallInteraction, log: Logger = silentLogger): Promise<ReadResourceResult> {
  const target = resolve(uri);
  if (!target) throw new ResourceNotFoundError(uri, `no pds resource has the URI ${uri}; see resources/list and resources/templates/list`);
  try {
    const output = await call(target.tool, target.args, interaction);
    return { contents: [{ uri, mimeType: JSON_TYPE, text: outputJson(output) }] };
  } catch (err) {
    if (!isPlatformError(err)) {
      log.error({ err, uri }, 'unexpected error reading a resource');
      throw new ProtocolError(ProtocolErrorCode.InternalError, 'internal error');
    }
    if (err.code === 'NOT_FOUND') throw new ResourceNotFoundError(uri, err.message);
    throw new ProtocolError(ProtocolErrorCode.InvalidParams, err.message, { code: err.code, uri });
  }
}
