/**
 * The shape of a capability (DESIGN.md "One capability, one definition"). A tool is defined once; `rest/` exposes it
 * at its REST path, `tools/mcp.ts` registers it on an MCP server, and both call {@link invoke} in `tools/invoke.ts`.
 */
import type { z } from 'zod';
import type { ToolAnnotations } from '@modelcontextprotocol/server';
import type { Identity } from '../auth/identity.js';
import type { MemberRole } from '../core/model.js';
import type { AnyOperationContract } from '../core/operations/index.js';
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
  method: 'GET' | 'POST';
  path: string;
  bodyField?: string;
  pathValues?: Record<string, string>;
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

/** Per-user write budget (20/min; SPEC.md "Limits"). Supplied by `rest/`/`auth/` wiring; never exempts loopback. */
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
