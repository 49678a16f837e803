/**
 * The MCP face of the tools (DESIGN.md; MCP spec 2025-11-25 and 2026-07-28 "Tools"): the selected tools are listed
 * as `tools/mcp-listing.ts` builds them (title, description, JSON Schemas, annotations), and `tools/call` runs one
 * through the caller-supplied `call` (invoke() in-process, or REST for `pds mcp` on stdio). `tools/mcp-http.ts` and
 * `tools/mcp-stdio.ts` serve the server built here; both protocol versions use the same instance.
 *
 * We build on the SDK's low-level `Server` (`@modelcontextprotocol/server` 2.x), not `McpServer.registerTool`:
 * argument validation must be invoke()'s, so an agent gets the very message REST gives (McpServer validates first and
 * answers with its own), and a stateless request builds a server per request, which must not redo schema conversion.
 *
 * Errors: a `PlatformError` becomes a tool result with `isError: true` and its message (the agent can correct itself),
 * its code in `_meta` ({@link ERROR_CODE_META}), and its data (a confirmation request) as `structuredContent` where the listed output schema admits it; anything
 * else is logged and reported as `internal error` without detail. An {@link InputRequired} thrown by a handler — or by
 * `confirmingCaller`, which puts a confirmation request to the person — becomes MCP's `input_required` result
 * (2026-07-28 multi-round-trip; the SDK's shim serves it to 2025-11-25 stdio clients). Operation results link their
 * workflow (`resource_link`).
 *
 * Beside tools the server offers resources, prompts and completions (`mcp-resources.ts`, `mcp-prompts.ts`,
 * `mcp-completions.ts`), read through the same `call` as the caller, whatever toolsets were selected; and, to a client
 * that renders MCP Apps, the views its tools link (`mcp-apps.ts`).
 */
import {
  CLIENT_CAPABILITIES_META_KEY,
  inputRequired,
  inputResponse,
  Server,
  type CallToolResult,
  type ClientCapabilities,
  type Implementation,
  type InputRequiredResult,
  type ServerContext,
} from '@modelcontextprotocol/server';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/server/validators/ajv';
import { isPlatformError } from '../core/errors.js';
import { createRequestStateCodec, type RequestStateCodec } from './request-state.js';
import { silentLogger, type Logger } from '../core/logger.js';
import { confirmingCaller } from './confirm-with-person.js';
import type { AnyTool } from './define.js';
import { InputRequired, type Answer, type CallInteraction } from './interaction.js';
import { outputJson } from './invoke.js';
import type { JsonExchangeTransport } from './mcp-json-exchange.js';
import { ERROR_CODE_META, ICON_PATH, SERVER_INFO } from './mcp-edge.js';
import { complete } from './mcp-completions.js';
import { getPrompt, PROMPTS } from './mcp-prompts.js';
import { readResource, RESOURCE_TEMPLATES, RESOURCES, workflowLink } from './mcp-resources.js';
import { APP_RESOURCES, APPS_EXTENSION, APP_MIME_TYPE, appToolListing, clientRendersApps, readAppView, viewsAvailable } from './mcp-apps.js';
import { unknownToolMessage, type ToolsetSelection } from './toolsets.js';
import { readOnlyView, submitsWorkflow, toolListing } from './mcp-listing.js';

export { toolListing } from './mcp-listing.js';

/** Builds the MCP server for one request or connection (closing over the caller, its tools and its limits). */
export type McpServerBuilder = () => Server;

/**
 * Runs one tool with raw MCP arguments; returns the tool output or throws a PlatformError (or {@link InputRequired}).
 * `interaction` carries progress, cancellation and the previous round's answers for this call.
 */
export type ToolCaller = (tool: AnyTool, args: unknown, interaction: CallInteraction) => Promise<unknown>;

/**
 * Name, title, version and icon announced in `initialize` (2025-11-25) and on every 2026-07-28 result.
 * @param baseUrl the pds base URL the icon is served from, e.g. `https://pds.example.com`.
 */
export function serverInfo(baseUrl: string): Implementation {
  return {
    ...SERVER_INFO,
    title: 'pds — Platform Deployment Service',
    icons: [{ src: `${baseUrl}${ICON_PATH}`, mimeType: 'image/svg+xml', sizes: ['any'] }],
  };
}

/** What an agent reads first (`instructions`): the order of work and the tools that do it. */
export const INSTRUCTIONS =
  'pds deploys a team\'s services. Read tools (platform_get_*, platform_list_*) change nothing. Operation tools ' +
  '(platform_deploy_service, platform_rollback_service, …) check what they can at once, submit a workflow and return ' +
  'its name (and a resource link to it); with wait_seconds (up to 45) they answer when it settles instead, sending ' +
  'step progress if you pass a progress token. Follow a workflow with platform_get_workflow and wait_seconds (call ' +
  'again while "settled" is false), then check the service with platform_get_status, or platform_diagnose_service ' +
  'when it is unhealthy. To onboard ' +
  'a repository: platform_scaffold_repository for the build file and CI job, platform_grant_repo_access and ' +
  'platform_sync_repos so pds can see it, then platform_deploy_service with action=onboard (the prompt ' +
  'onboard-repository walks through it). Retire and delete ask the person to confirm when the client supports ' +
  'elicitation; otherwise the first call returns a "confirm" value to send back. Resources: pds://workflows/{name}, ' +
  'pds://services/{team}/{app}/status and /logs, pds://operations, pds://templates. Tools come in toolsets ' +
  '(?toolsets= on the MCP URL): observe, deploy, repos, scaffold (the default), tenants, catalog, or all.';

// The SDK would build an Ajv instance per Server (about 150 µs); stateless HTTP makes a Server per request, so share one.
const schemaValidator = new AjvJsonSchemaValidator();

/**
 * Render a thrown error as a tool result an agent can read: its message, and its data (a confirmation request's
 * `{ confirm, expiresAt, plan }`) as `structuredContent` — unless `tool` lists an output schema that does not admit
 * it (see `listedOutputSchema` in `tools/mcp-listing.ts`), because the v1 SDK client validates error results against it and would throw.
 */
export function errorResult(err: unknown, log: Logger = silentLogger, tool?: AnyTool): CallToolResult {
  if (isPlatformError(err)) {
    const admitted = err.data && (!tool || !submitsWorkflow(tool) || tool.errorOutput);
    return {
      isError: true,
      content: [{ type: 'text', text: err.message }],
      ...(admitted && { structuredContent: { ...err.data } }),
      _meta: { [ERROR_CODE_META]: err.code },
    };
  }
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

/** What the sealed `requestState` of an `input_required` answer carries: the call it belongs to and the handler's state. */
interface SealedState {
  tool: string;
  caller: string;
  state: unknown;
}

/**
 * Seals and opens `requestState` (`tools/request-state.ts`: encrypted and authenticated, 10 minutes), so the client
 * can neither read the confirm value inside nor change it; one per secret, shared by every per-request server.
 */
const codecs = new WeakMap<Uint8Array, RequestStateCodec<SealedState>>();
function stateCodec(secret: Uint8Array): RequestStateCodec<SealedState> {
  let codec = codecs.get(secret);
  if (!codec) codecs.set(secret, (codec = createRequestStateCodec<SealedState>(secret)));
  return codec;
}


/** Options of {@link createMcpServer}. */
export interface McpServerOptions {
  /** Hide write tools from `tools/list` (a call to one still reaches `call`, whose invoke() refuses it). */
  readOnly?: boolean;
  log?: Logger;
  /** pds base URL, for the icon in the server info. */
  baseUrl: string;
  /** Who is calling (the user id), so a sealed `requestState` is only accepted back from the same caller. */
  caller: string;
  /** Key (≥ 32 bytes) that seals `requestState` of `input_required` answers; the same on every replica. */
  stateSecret: Uint8Array;
  /**
   * How this session's toolsets were selected, so a call to a tool of another set names that set and how to select
   * it (issue 19 item 5); without it, such a call is answered like any unknown tool.
   */
  toolsets?: ToolsetSelection;
}

/** What the client of one request declared it can do. */
function clientCapabilities(server: Server, ctx: ServerContext): ClientCapabilities | undefined {
  // 2026-07-28 declares them in each request's envelope; 2025-11-25 once, in `initialize` (none on stateless HTTP).
  const envelope = ctx.mcpReq.envelope as Record<string, ClientCapabilities | undefined> | undefined;
  return envelope?.[CLIENT_CAPABILITIES_META_KEY] ?? server.getClientCapabilities();
}

/** Whether this request's client renders MCP Apps and pds has its views to offer (`tools/mcp-apps.ts`). */
function offersApps(server: Server, ctx: ServerContext): boolean {
  return clientRendersApps(clientCapabilities(server, ctx)) && viewsAvailable();
}

/** The {@link CallInteraction} of one `tools/call`, over the SDK's request context. */
function interactionOf(server: Server, ctx: ServerContext, sealed: SealedState | undefined): CallInteraction {
  const progressToken = ctx.mcpReq._meta?.progressToken;
  const capabilities = clientCapabilities(server, ctx);
  return {
    signal: ctx.mcpReq.signal,
    wantsProgress: progressToken !== undefined,
    progress: async (progress, total, message) => {
      if (progressToken === undefined) return;
      await ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken, progress, total, message } });
    },
    canAsk: capabilities?.elicitation !== undefined,
    answer: (key) => {
      const view = inputResponse(ctx.mcpReq.inputResponses, key);
      return (view.kind === 'missing' || view.kind === 'elicit' ? view : { kind: 'other' }) as Answer;
    },
    state: sealed?.state,
  };
}

/**
 * An MCP server (one per connection or, for stateless HTTP, per request) that lists `tools` and calls them through
 * `call`. A name outside `tools` is an unknown tool; one of another toolset is answered with that set and how to
 * select it (`options.toolsets`). Cheap to construct: no schema work happens here.
 */
export function createMcpServer(tools: readonly AnyTool[], call: ToolCaller, options: McpServerOptions): Server {
  const byName = toolIndex(tools);
  const listed = options.readOnly ? readOnlyView(tools) : tools;
  const listing = toolListing(listed);
  const codec = stateCodec(options.stateSecret);
  const server = new Server(serverInfo(options.baseUrl), {
    capabilities: {
      tools: { listChanged: false },
      resources: {},
      prompts: {},
      completions: {},
      // MCP Apps (SEP-1724 extensions): offered; a tool links its view only for a client that declares them too.
      extensions: { [APPS_EXTENSION]: { mimeTypes: [APP_MIME_TYPE] } },
    },
    instructions: INSTRUCTIONS,
    jsonSchemaValidator: schemaValidator,
    requestState: { verify: (state) => codec.verify(state) },
  });
  // Destructive operations ask the person when the client can be asked (tools/confirm-with-person.ts).
  const run = confirmingCaller(call);
  server.setRequestHandler('tools/list', async (_request, ctx) => ({ tools: offersApps(server, ctx) ? appToolListing(listed) : listing }));
  // Resources, prompts and completions are not toolsets' business: they read through the read tools, as the caller.
  server.setRequestHandler('resources/list', async (_request, ctx) => ({
    resources: offersApps(server, ctx) ? [...RESOURCES, ...APP_RESOURCES] : [...RESOURCES],
  }));
  server.setRequestHandler('resources/templates/list', async () => ({ resourceTemplates: [...RESOURCE_TEMPLATES] }));
  server.setRequestHandler('resources/read', async (request, ctx) => {
    // A view is the same page for every caller and holds no data (it asks for that through the host), so any client
    // that found its URI may read it.
    const view = readAppView(request.params.uri);
    return view ?? readResource(request.params.uri, call, interactionOf(server, ctx, undefined), options.log);
  });
  server.setRequestHandler('prompts/list', async () => ({ prompts: [...PROMPTS] }));
  server.setRequestHandler('prompts/get', async (request) => getPrompt(request.params.name, request.params.arguments));
  server.setRequestHandler('completion/complete', (request, ctx) => complete(request.params, call, interactionOf(server, ctx, undefined)));
  server.setRequestHandler('tools/call', async (request, ctx): Promise<CallToolResult | InputRequiredResult> => {
    const tool = byName.get(request.params.name);
    if (!tool) {
      return { isError: true, content: [{ type: 'text', text: unknownToolMessage(request.params.name, options.toolsets) }] };
    }
    const sealed = ctx.mcpReq.requestState<SealedState>();
    if (sealed && (sealed.tool !== tool.name || sealed.caller !== options.caller)) {
      return { isError: true, content: [{ type: 'text', text: 'the answers belong to another call; call the tool again' }] };
    }
    try {
      const output = (await run(tool, request.params.arguments ?? {}, interactionOf(server, ctx, sealed))) as Record<string, unknown>;
      const json = outputJson(output);
      // A JSON exchange (tools/mcp-json-exchange.ts) writes `structuredContent` from this text instead of serialising
      // the output twice; other transports have no such method.
      (server.transport as Partial<Pick<JsonExchangeTransport, 'noteStructuredOutput'>> | undefined)?.noteStructuredOutput?.(output, json);
      const content: CallToolResult['content'] = [{ type: 'text', text: json }];
      if (submitsWorkflow(tool) && typeof output.workflowName === 'string') content.push(workflowLink(output.workflowName));
      return { content, structuredContent: output };
    } catch (err) {
      if (!(err instanceof InputRequired)) return errorResult(err, options.log, tool);
      const inputRequests = Object.fromEntries(
        Object.entries(err.questions).map(([key, question]) => [key, inputRequired.elicit(question)]),
      );
      const requestState = await codec.mint({ tool: tool.name, caller: options.caller, state: err.state });
      return inputRequired({ inputRequests, requestState });
    }
  });
  return server;
}
