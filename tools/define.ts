/**
 * The shape of a capability (DESIGN.md "One capability, one definition"). A tool is defined once; `rest/` exposes it
 * at its REST path, `tools/mcp.ts` registers it on an MCP server, and both call {@link invoke} in `tools/invoke.ts`.
 */
import type { z } from 'zod';
import type { ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import type { Config } from '../config.js';
import type { Identity } from '../auth/identity.js';
import type { MemberRole, RiskLevel } from '../core/model.js';
import type { Platform } from '../core/ports.js';

/** Who may call a tool. Tenant access is `viewer` (read) or `member` (execute); platform admins pass every check. */
export type Access<I> =
  | 'public'
  | 'authenticated'
  | 'admin'
  | { tenant: (input: I) => string; role: Exclude<MemberRole, 'admin'> };

/**
 * How a tool is exposed over REST. `path` is in OpenAPI form (`/api/v1/status/{team}/{app}`); every `{param}` is an
 * input field. For GET the remaining input fields are query parameters; for POST the JSON body is the input, or, with
 * `bodyField`, the body becomes that one input field. `pathValues` pins path parameters: several tools may share one
 * path (the eight operations share `/api/v1/operations/{name}/execute`) and the request is routed by those values.
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

/** Operation metadata for the eight operation tools (SPEC.md "Operation definition"). */
export interface OperationMeta {
  name: string;
  displayName: string;
  workflowTemplate: string;
  riskLevel: RiskLevel;
  requiresConfirm: boolean;
}

/** Per-user write budget (20/min; SPEC.md "Limits"). Supplied by `rest/`/`auth/` wiring; never exempts loopback. */
export interface WriteLimiter {
  /** @throws RateLimited when the caller has no write left in the current window. */
  consume(identity: Identity): Promise<void>;
}

/** What a handler receives besides its input. */
export interface ToolContext {
  identity: Identity;
  platform: Platform;
  config: Config;
  /** Secret for confirmation values of `requiresConfirm` operations (HMAC-SHA256). */
  confirmSecret: Uint8Array;
}

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
  /** `write` counts against the write limit, is refused in read-only mode, and is hidden from read-only MCP. */
  kind: 'read' | 'write';
  annotations: ToolAnnotations;
  operation?: OperationMeta;
  /**
   * For a generic tool that stands for others (`platform_execute_operation`): pick the tool and its raw input.
   * invoke() then runs the chosen tool from the start — its own validation, access, limits and handler — so a
   * dispatching tool never counts twice and never bypasses a check. `handler` is not called when this is set.
   * @throws NotFound when the input names no tool.
   */
  dispatch?: (input: z.output<I>) => { tool: AnyTool; input: unknown };
  /** OpenAPI-only documentation overrides, e.g. the request body of a dispatching tool. */
  docs?: { requestBody?: z.ZodType };
  handler: (input: z.output<I>, ctx: ToolContext) => Promise<z.output<O>>;
}

/** Identity function that checks a definition's types; see {@link ToolDefinition}. */
export function defineTool<I extends z.ZodObject, O extends z.ZodType>(tool: ToolDefinition<I, O>): ToolDefinition<I, O> {
  return tool;
}

/** A tool of any input and output type, for registries and adapters. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyTool = ToolDefinition<any, any>;
