/**
 * The shape of a capability (DESIGN.md "One capability, one definition"). A tool is defined once; `rest/` exposes it
 * at its REST path, `tools/mcp.ts` registers it on an MCP server, and both call {@link invoke} in `tools/invoke.ts`.
 */
import type { z } from 'zod';
import type { ToolAnnotations } from '@modelcontextprotocol/server';
import type { Identity } from '../auth/identity.js';
import type { MemberRole } from '../core/model.js';
import type { AnyOperationContract, Door, PlatformNamespaces } from '../core/operations/index.js';
import type { Platform } from '../core/ports.js';
import type { CallInteraction } from './interaction.js';
import type { Toolset } from './toolsets.js';

/**
 * Who may call a tool: anyone (`public`), any authenticated caller, platform admins (`admin`), or callers with at
 * least `role` in the tenant the input names (`viewer` < `member` < `admin`). Platform admins pass every check.
 */
export type Access<I> = 'public' | 'authenticated' | 'admin' | { tenant: (input: I) => string; role: MemberRole };

/**
 * How a tool is exposed over REST. `path` is in OpenAPI form (`/api/v1/status/{team}/{app}`); every `{param}` is an
 * input field, unless `pathValues` pins it. For GET the remaining input fields are query parameters; for POST the JSON
 * body is the input, or, with `bodyField`, the body becomes that one input field. With `pathValues`, several tools
 * share one path (each operation tool binds `/api/v1/operations/{name}/execute` with its own `name`) and the router
 * chooses the tool by those values; pinned parameters are not input fields.
 */
export interface RestBinding {
  /** `PUT` replaces a whole document (a tenant's policy); its body is read as a POST's. */
  method: 'GET' | 'POST' | 'PUT';
  path: string;
  bodyField?: string;
  pathValues?: Record<string, string>;
  /**
   * Input fields of a POST read from the query string, not the body: how the call is made rather than what it
   * submits (`wait_seconds` on the execute path, which is no operation parameter).
   */
  query?: readonly string[];
  /** When the route answers 409 (`CONFLICT`): what the state was, for OpenAPI (e.g. "the workflow has settled"). */
  conflict?: string;
}

const PATH_PARAM = /\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/** Names of the `{params}` of an OpenAPI-form path, in order: `/api/v1/status/{team}/{app}` → `['team', 'app']`. */
export function pathParams(path: string): string[] {
  return [...path.matchAll(PATH_PARAM)].map((m) => m[1]!);
}

/** An OpenAPI-form path with each `{name}` replaced by `fill(name)`, e.g. Koa's `:name` or a URL-encoded value. */
export function fillPath(path: string, fill: (name: string) => string): string {
  return path.replace(PATH_PARAM, (_match, name: string) => fill(name));
}

/** One call of a tool as a REST request: what `pds mcp` sends, and how REST messages name a call. */
export interface RestRequest {
  method: 'GET' | 'POST' | 'PUT';
  /** The path with its parameters filled in (URL-encoded), and for GET the query string, e.g. `/api/v1/services?team=acme`. */
  target: string;
  /** The JSON body of a POST or PUT. */
  body?: unknown;
}

/**
 * The REST request that runs `tool` with `input` (its {@link RestBinding}): path parameters from `pathValues` or the
 * input, the rest as the query (GET) or the body (POST, or its `bodyField`).
 * @throws TypeError for a tool without a REST binding.
 */
export function restRequest(tool: AnyTool, input: Readonly<Record<string, unknown>>): RestRequest {
  const binding = tool.rest;
  if (!binding) throw new TypeError(`${tool.name} has no REST route`);
  const rest: Record<string, unknown> = { ...input };
  const pinned = binding.pathValues ?? {};
  const path = fillPath(binding.path, (name) => {
    const value = Object.hasOwn(pinned, name) ? pinned[name] : rest[name];
    delete rest[name];
    return encodeURIComponent(String(value ?? ''));
  });
  const query = new URLSearchParams();
  if (binding.method !== 'GET') {
    for (const name of binding.query ?? []) {
      if (rest[name] !== undefined) query.set(name, String(rest[name]));
      delete rest[name];
    }
    const search = query.toString();
    return { method: binding.method, target: search ? `${path}?${search}` : path, body: binding.bodyField ? (rest[binding.bodyField] ?? {}) : rest };
  }
  for (const [k, v] of Object.entries(rest)) if (v !== undefined) query.set(k, String(v));
  const search = query.toString();
  return { method: 'GET', target: search ? `${path}?${search}` : path };
}

/** Per-user write budget (20/min; `docs/api.md#limits`). Supplied by `rest/`/`auth/` wiring; never exempts loopback. */
export interface WriteLimiter {
  /** @throws RateLimited when the caller has no write left in the current window. */
  consume(identity: Identity): Promise<void>;
}

/** The settings handlers read: only these, never the whole configuration (which holds secrets). */
export interface ToolSettings {
  /** `PDS_BASE_URL`, e.g. `https://pds.example.com` (scaffolded deploy jobs call it). */
  baseUrl: string;
  /** `PDS_DOMAIN`: service hosts are `<team>-<service>.<domain>`. */
  domain: string;
  /** `PDS_WORKFLOW_NAMESPACE` and `PDS_ARGOCD_NAMESPACE` (reserved for tenant names). */
  namespaces: PlatformNamespaces;
}

/** What a handler receives besides its input. */
export interface ToolContext {
  identity: Identity;
  platform: Platform;
  settings: ToolSettings;
  /** Secret for confirmation values of `requiresConfirm` operations (HMAC-SHA256). */
  confirmSecret: Uint8Array;
  /** Progress, cancellation and questions to the person, when the call came over MCP (`tools/interaction.ts`). */
  interaction?: CallInteraction;
  /** The caller's door (MCP or REST): messages name the next call in its words (`tools/door.ts`). */
  door: Door;
}

/** Tool annotations as declared: `readOnlyHint` is not declared but derived from `kind` ({@link defineTool}). */
export type DeclaredAnnotations = Omit<ToolAnnotations, 'readOnlyHint' | 'title'>;

/** One capability. `I` is the zod input object, `O` the zod output schema. */
export interface ToolDefinition<I extends z.ZodObject = z.ZodObject, O extends z.ZodType = z.ZodType> {
  /** `platform_<verb>_<noun>`. */
  name: string;
  title: string;
  /** Written for an agent: what it does, when to use it, what comes back, what it will not do, limits. */
  description: string;
  input: I;
  output: O;
  /**
   * The `structuredContent` of this tool's `isError` results that carry data (a confirmation request), when it has
   * one. It is listed beside {@link output} in the MCP output schema, because clients that validate error results
   * against the output schema (the v1 SDK client does) would otherwise refuse them; an error whose data the tool does
   * not declare is sent as text only.
   */
  errorOutput?: z.ZodObject;
  /**
   * The output schema MCP lists, when narrower than {@link output}: the fields every result has. Listed output schemas
   * never forbid additional properties, so results with more (an operation's wait outcome) still conform; the tool
   * description and OpenAPI name the rest. Keeps the default toolsets' `tools/list` within its budget (issue 11).
   */
  listedOutput?: z.ZodObject;
  rest?: RestBinding;
  access: Access<z.output<I>>;
  /**
   * `write` counts against the write limit, is refused in read-only mode, and is hidden from read-only MCP; the MCP
   * `readOnlyHint` is derived from it, never declared.
   */
  kind: 'read' | 'write';
  /** The MCP toolset the tool is listed in (`tools/toolsets.ts`); a client that did not select it cannot call it. */
  toolset: Toolset;
  /** MCP annotations: `title` is the tool's, `readOnlyHint` is `kind === 'read'`. */
  annotations: ToolAnnotations;
  /** The operation an operation tool executes (`core/operations/`). */
  operation?: AnyOperationContract;
  /**
   * For a generic tool that stands for others (`platform_execute_operation`): pick the tool and its raw input.
   * invoke() then runs the chosen tool from the start — its own validation, access, limits and handler — so a
   * dispatching tool never counts twice and never bypasses a check. `handler` is not called when this is set.
   * @throws NotFound when the input names no tool.
   */
  dispatch?: (input: z.output<I>) => { tool: AnyTool; input: unknown };
  handler: (input: z.output<I>, ctx: ToolContext) => Promise<z.output<O>>;
}

/**
 * Define a tool; see {@link ToolDefinition}. The MCP annotations get `title` from the tool and `readOnlyHint` from
 * `kind`, so they can never disagree with what invoke() enforces.
 */
export function defineTool<I extends z.ZodObject, O extends z.ZodType>(
  tool: Omit<ToolDefinition<I, O>, 'annotations'> & { annotations: DeclaredAnnotations },
): ToolDefinition<I, O> {
  return { ...tool, annotations: { title: tool.title, readOnlyHint: tool.kind === 'read', ...tool.annotations } };
}

/** A tool of any input and output type, for registries and adapters. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyTool = ToolDefinition<any, any>;

/** One server-sent event: `event` names its kind (the SSE `event:` field), `data` is its JSON payload. */
export interface StreamEvent<D = unknown> {
  event: string;
  data: D;
}

/** What a stream's handler receives besides its input: a {@link ToolContext} and the caller's going away. */
export interface StreamContext extends ToolContext {
  /** Aborted when the caller disconnects or pds shuts down: the handler's events then end. */
  signal: AbortSignal;
}

/**
 * A read capability whose REST answer is a stream of server-sent events (`text/event-stream`, WHATWG HTML "Server-sent
 * events") instead of one JSON body, e.g. a workflow's step changes (`GET /api/v1/workflows/{name}/events`). Defined
 * like a tool — input, access, REST binding, OpenAPI — and run through `invokeStream()` in `tools/invoke.ts` with the
 * same parsing, scopes and access checks; `rest/` only frames the events. It is not an MCP tool: an MCP call has one
 * answer, and MCP clients follow a workflow with `wait_seconds` and progress notifications instead.
 */
export interface StreamDefinition<I extends z.ZodObject = z.ZodObject, E extends z.ZodType = z.ZodType> {
  /** `platform_<verb>_<noun>`, unique among tools and streams (the OpenAPI `operationId`). */
  name: string;
  title: string;
  description: string;
  input: I;
  /** The schema of one event's `data`; every event is checked against it before it is sent. */
  event: E;
  /** The event names it sends (the SSE `event:` field), for OpenAPI. */
  eventNames: readonly string[];
  rest: RestBinding & { method: 'GET' };
  access: Access<z.output<I>>;
  /** Always `read`: a stream changes nothing, needs `pds:read`, and counts against the 300/min route limit only. */
  kind: 'read';
  /** What a stream never has; present so scope checks read streams and tools alike. */
  operation?: undefined;
  /**
   * Check the caller may read what the input names and start the stream. Errors thrown before it resolves are
   * answered as usual (`{ "error" }` with the status); the events end when the stream has nothing more to say or
   * `ctx.signal` aborts.
   */
  handler: (input: z.output<I>, ctx: StreamContext) => Promise<AsyncIterable<StreamEvent<z.output<E>>>>;
}

/** A stream of any input and event type, for registries and adapters. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyStream = StreamDefinition<any, any>;
