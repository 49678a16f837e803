/**
 * MCP Apps (issue 21 item 4; the `io.modelcontextprotocol/ui` extension, SEP-1865, stable 2026-01-26:
 * https://github.com/modelcontextprotocol/ext-apps/blob/main/specification/2026-01-26/apps.mdx): the views a host that
 * renders Apps shows beside a tool's result, and when pds offers them.
 *
 * - Views: `ui://pds/workflow` (a workflow's steps, live, until it settles) for `platform_get_workflow` and every tool
 *   that submits a workflow (the operation tools, `platform_execute_operation`); `ui://pds/service` (status, last
 *   workflows, roll back) for `platform_get_status`. A tool links its view in `_meta.ui.resourceUri` of its
 *   `tools/list` entry; `resources/read` of the URI answers one self-contained HTML file (`text/html;profile=mcp-app`)
 *   built from `console/mcp-apps/` (`npm run build`), which talks to nothing but its host (`_meta.ui.csp` declares no
 *   domain, and the page's own CSP forbids any connection).
 * - Negotiation: only for a client that declares the extension with the HTML type in its capabilities
 *   (`capabilities.extensions["io.modelcontextprotocol/ui"].mimeTypes`). On 2026-07-28 each request carries the
 *   client's capabilities; on 2025-11-25 only `initialize` does, so a stdio connection has them and a stateless HTTP
 *   request does not — there pds lists no Apps, as for any client that did not declare them. A client without Apps
 *   sees the listing and the `resources/list` it always saw; tool results are the same for every client (text and
 *   `structuredContent`).
 */
import { existsSync, readFileSync } from 'node:fs';
import { ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/server';
import type { ClientCapabilities, ReadResourceResult, Resource, Tool } from '@modelcontextprotocol/server';
import type { AnyTool } from './define.js';
import { submitsWorkflow, toolListing } from './mcp-listing.js';
import { getStatus } from './services.js';
import { getWorkflow } from './workflows.js';

/** The extension's identifier in `capabilities.extensions`. */
export const APPS_EXTENSION = 'io.modelcontextprotocol/ui';

/** The MIME type of an App's HTML (`resources/read` and `resources/list`). */
export const APP_MIME_TYPE = 'text/html;profile=mcp-app';

/** The views pds serves, by URI, with the built file each reads. */
export const APP_VIEWS = {
  workflow: {
    uri: 'ui://pds/workflow',
    file: 'workflow.html',
    listed: {
      uri: 'ui://pds/workflow',
      name: 'workflow-view',
      title: 'Workflow view',
      description: 'An MCP App: a workflow\'s steps as they run, until it settles (platform_get_workflow and the operation tools).',
      mimeType: APP_MIME_TYPE,
    },
  },
  service: {
    uri: 'ui://pds/service',
    file: 'service.html',
    listed: {
      uri: 'ui://pds/service',
      name: 'service-view',
      title: 'Service view',
      description: 'An MCP App: a service\'s status, its last workflows and a rollback to a tag it ran (platform_get_status).',
      mimeType: APP_MIME_TYPE,
    },
  },
} as const satisfies Record<string, { uri: string; file: string; listed: Resource }>;
export type AppView = keyof typeof APP_VIEWS;

/**
 * What every view's `resources/read` content declares (`_meta.ui`): no domain to connect to or load from — the
 * restrictive default a host applies — and a border, since a view is a card in the conversation.
 */
const VIEW_META = { ui: { csp: { connectDomains: [], resourceDomains: [] }, prefersBorder: true } };

/** Where the built views are: the dist folder beside `console/mcp-apps/build.ts` in a checkout, and its copy under dist/console/mcp-apps in a build. */
const VIEWS_DIR = new URL('../console/mcp-apps/dist/', import.meta.url);

/** The view `tool` links, if any: workflows for what submits or reads one, the service view for its status. */
export function viewOf(tool: AnyTool): AppView | undefined {
  if (tool.name === getWorkflow.name || submitsWorkflow(tool)) return 'workflow';
  if (tool.name === getStatus.name) return 'service';
  return undefined;
}

const appListings = new WeakMap<readonly AnyTool[], Tool[]>();
/**
 * The `tools/list` entries of `tools` for a client that renders Apps: {@link toolListing}'s, with
 * `_meta.ui.resourceUri` on each tool that has a view (only the stable nested key: the flat `ui/resourceUri` is
 * deprecated). Built once per tool set.
 */
export function appToolListing(tools: readonly AnyTool[]): Tool[] {
  let listing = appListings.get(tools);
  if (!listing) {
    const plain = toolListing(tools);
    listing = tools.map((tool, i) => {
      const view = viewOf(tool);
      return view ? { ...plain[i]!, _meta: { ui: { resourceUri: APP_VIEWS[view].uri } } } : plain[i]!;
    });
    appListings.set(tools, listing);
  }
  return listing;
}

/**
 * Whether a client with `capabilities` renders Apps: it declares the extension with the HTML type (the spec's
 * `mimeTypes` is required). `undefined` capabilities (a stateless 2025-11-25 request) never do.
 */
export function clientRendersApps(capabilities: ClientCapabilities | undefined): boolean {
  const extension = (capabilities as { extensions?: Record<string, { mimeTypes?: unknown } | undefined> } | undefined)?.extensions?.[APPS_EXTENSION];
  return Array.isArray(extension?.mimeTypes) && extension.mimeTypes.includes(APP_MIME_TYPE);
}

let built = false;
/**
 * Whether the views are built (`npm run build` writes them): without them pds offers no Apps rather than a link to
 * nothing. Once they are found, not checked again.
 */
export function viewsAvailable(): boolean {
  built ||= Object.values(APP_VIEWS).every((view) => existsSync(new URL(view.file, VIEWS_DIR)));
  return built;
}

/** `resources/list` entries of the views. */
export const APP_RESOURCES: readonly Resource[] = Object.values(APP_VIEWS).map((view) => view.listed);

const html = new Map<string, string>();
/**
 * `resources/read` of a view, or `undefined` when `uri` names none. Read from disk once per process.
 * @throws ProtocolError `-32603` when the views are not built (a pds run from sources without `npm run build`).
 */
export function readAppView(uri: string): ReadResourceResult | undefined {
  const view = Object.values(APP_VIEWS).find((v) => v.uri === uri);
  if (!view) return undefined;
  if (!viewsAvailable()) throw new ProtocolError(ProtocolErrorCode.InternalError, `the MCP App views are not built on this pds (npm run build writes them)`);
  let text = html.get(view.file);
  if (text === undefined) html.set(view.file, (text = readFileSync(new URL(view.file, VIEWS_DIR), 'utf8')));
  return { contents: [{ uri, mimeType: APP_MIME_TYPE, text, _meta: VIEW_META }] };
}
