/**
 * The generic tool → REST route adapter (DESIGN.md "REST and MCP as thin adapters"). For each tool with a
 * {@link RestBinding}: path parameters, then (GET) query parameters or (POST) the JSON body — or, with `bodyField`,
 * the body as that one field — become the tool input, and invoke() does the rest. No tool logic lives here.
 */
import Router from '@koa/router';
import type { ParameterizedContext } from 'koa';
import { fillPath, pathParams, type AnyTool } from '../tools/define.js';
import { outputJson } from '../tools/invoke.js';
import type { Identity } from '../auth/identity.js';

/** `/api/v1/status/{team}/{app}` → `/api/v1/status/:team/:app`. */
export function koaPath(openApiPath: string): string {
  return fillPath(openApiPath, (name) => `:${name}`);
}

/** Runs a tool for the request's caller; supplied by the app (it closes over invoke() and its deps). */
export type RouteInvoker = (tool: AnyTool, input: Record<string, unknown>, identity: Identity) => Promise<unknown>;

/** The raw tool input of one request. */
export function requestInput(
  tool: AnyTool,
  ctx: Pick<ParameterizedContext, 'query' | 'params'> & { request: { body?: unknown } },
): Record<string, unknown> {
  const binding = tool.rest!;
  const input: Record<string, unknown> = {};
  if (binding.method === 'GET') {
    for (const [k, v] of Object.entries(ctx.query)) input[k] = Array.isArray(v) ? v[v.length - 1] : v;
  } else if (binding.bodyField) {
    input[binding.bodyField] = ctx.request.body;
  } else if (ctx.request.body && typeof ctx.request.body === 'object' && !Array.isArray(ctx.request.body)) {
    Object.assign(input, ctx.request.body);
  }
  // Path parameters win over anything in the query or body.
  for (const name of pathParams(binding.path)) input[name] = ctx.params[name];
  return input;
}

/**
 * A router with one route per REST-bound tool. Expects `ctx.state.identity` to be set by the auth middleware.
 */
export function toolRouter(tools: readonly AnyTool[], run: RouteInvoker): Router {
  const router = new Router();
  for (const tool of tools) {
    if (!tool.rest) continue;
    const handler = async (ctx: ParameterizedContext) => {
      const output = await run(tool, requestInput(tool, ctx as never), ctx.state.identity as Identity);
      ctx.type = 'application/json';
      ctx.body = outputJson(output);
    };
    if (tool.rest.method === 'GET') router.get(koaPath(tool.rest.path), handler);
    else router.post(koaPath(tool.rest.path), handler);
  }
  return router;
}
