/**
 * The `tools/list` face of the tools (MCP spec 2025-11-25 and 2026-07-28 "Tools"): each tool's title, description,
 * JSON Schemas (converted once per tool set, at start-up) and annotations, and the read-only narrowing of a set.
 * `tools/mcp.ts` serves what is built here.
 */
import type { Tool } from '@modelcontextprotocol/server';
import { z } from 'zod';
import type { AnyTool } from './define.js';

type JsonSchema = { [key: string]: unknown };

/**
 * A JSON Schema as listed: zod's output without what carries no information for a client — `$schema` (2020-12 is
 * MCP's default dialect), the ±2^53 bounds zod gives every integer, `propertyNames: {type: string}` (JSON keys are
 * strings) and, in output schemas, `additionalProperties: false` (a client must tolerate new result fields anyway)
 * and field descriptions (the tool description says what the result means and what to call next).
 */
function listedSchema(schema: z.ZodType, io: 'input' | 'output'): Tool['inputSchema'] {
  const strip = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(strip);
    if (!node || typeof node !== 'object') return node;
    const out: JsonSchema = {};
    for (const [key, value] of Object.entries(node as JsonSchema)) {
      if (key === '$schema') continue;
      if (key === 'minimum' && value === Number.MIN_SAFE_INTEGER) continue;
      if (key === 'maximum' && value === Number.MAX_SAFE_INTEGER) continue;
      if (key === 'propertyNames' && JSON.stringify(value) === '{"type":"string"}') continue;
      if (io === 'output' && ((key === 'additionalProperties' && value === false) || (key === 'description' && typeof value === 'string'))) continue;
      out[key] = strip(value);
    }
    return out;
  };
  return strip(z.toJSONSchema(schema, { io })) as Tool['inputSchema'];
}

/**
 * A tool's annotations as listed: `title` is the tool's own `title`, and `openWorldHint: true` and
 * `idempotentHint: false` are what MCP assumes when a hint is absent. `readOnlyHint` and `destructiveHint` are always
 * stated, so a client that does not apply the defaults still sees which tools change or destroy.
 */
function listedAnnotations(tool: AnyTool): Tool['annotations'] {
  const { title: _sameAsTitle, ...annotations } = tool.annotations;
  if (annotations.openWorldHint === true) delete annotations.openWorldHint;
  if (annotations.idempotentHint === false) delete annotations.idempotentHint;
  return annotations;
}

/** Tools whose result is a submitted workflow (`workflowName` to follow): the result shape clients act on. */
export function submitsWorkflow(tool: AnyTool): boolean {
  return tool.operation !== undefined || tool.dispatch !== undefined;
}

/**
 * The output schema a tool is listed with: its output's, or — for a tool whose `isError` results carry data
 * (`errorOutput`, a confirmation request) — one object schema that admits either shape: every property of both, and
 * `anyOf` the two `required` lists. MCP wants `type: "object"` at the root, and the v1 SDK client validates even error
 * results against it, so a union at the root would not do.
 */
function listedOutputSchema(tool: AnyTool): Tool['outputSchema'] {
  const output = listedSchema(tool.listedOutput ?? tool.output, 'output') as JsonSchema & { properties?: JsonSchema; required?: string[] };
  if (!tool.errorOutput) return output as Tool['outputSchema'];
  const error = listedSchema(tool.errorOutput, 'output') as JsonSchema & { properties?: JsonSchema; required?: string[] };
  return {
    type: 'object',
    properties: { ...output.properties, ...error.properties },
    anyOf: [{ required: output.required ?? [] }, { required: error.required ?? [] }],
  } as Tool['outputSchema'];
}

const listings = new WeakMap<readonly AnyTool[], Tool[]>();
/**
 * The `tools/list` entries for a set of tools (MCP spec "Tools": name, title, description, `inputSchema`,
 * annotations), converted once per tool set and cached. Only tools that submit a workflow list an `outputSchema`:
 * their result is what a client acts on (the workflow to follow); every other result is self-describing JSON whose
 * schema is in `/openapi.yaml`. Every result still carries `structuredContent`. This keeps the default toolsets'
 * listing within the 24 KB budget of issue 11 (test/e2e/mcp-toolsets.test.ts prints the sizes).
 */
export function toolListing(tools: readonly AnyTool[]): Tool[] {
  let listing = listings.get(tools);
  if (!listing) {
    listing = tools.map((tool) => ({
      name: tool.name,
      title: tool.title,
      description: tool.description,
      inputSchema: listedSchema(tool.input, 'input'),
      ...(submitsWorkflow(tool) && { outputSchema: listedOutputSchema(tool) }),
      annotations: listedAnnotations(tool),
    }));
    listings.set(tools, listing);
  }
  return listing;
}

const readTools = new WeakMap<readonly AnyTool[], AnyTool[]>();
/** The `read` tools of a set, computed once per set (so its listing is cached too). */
export function readOnlyView(tools: readonly AnyTool[]): AnyTool[] {
  let view = readTools.get(tools);
  if (!view) readTools.set(tools, (view = tools.filter((t) => t.kind === 'read')));
  return view;
}
