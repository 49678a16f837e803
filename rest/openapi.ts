/**
 * The OpenAPI 3.0 document (`docs/api.md#versioning` 2), generated from the tool inventory with zod 4's
 * `z.toJSONSchema(…, { target: 'openapi-3.0' })`: every REST-bound tool becomes one operation with its path and query
 * parameters, request body, 200 schema and `{ "error" }` responses. Built once per tool set and cached.
 */
import { stringify } from 'yaml';
import { z } from 'zod';
import { CONFIRM_HEADERS, ERROR_CODE_HEADER, HTTP_STATUS, type ErrorCode } from '../core/errors.js';
import { pathParams, type AnyStream, type AnyTool } from '../tools/define.js';
import { allStreams } from '../tools/registry.js';
import { SERVER_INFO } from '../tools/mcp-edge.js';
import { routeTable } from './routes.js';

type Schema = Record<string, unknown>;

const toSchema = (schema: z.ZodType, io: 'input' | 'output'): Schema =>
  z.toJSONSchema(schema, { target: 'openapi-3.0', io, unrepresentable: 'any' }) as Schema;

const ERROR_REF = { $ref: '#/components/schemas/Error' };

const ERROR_CODE_REF = { $ref: `#/components/headers/${ERROR_CODE_HEADER}` };

/** The `PDS-Error-Code` header, once: every code of core's table, and which status each comes with. */
function errorCodeHeader(): Schema {
  const codes = Object.entries(HTTP_STATUS) as [ErrorCode, number][];
  return {
    description:
      "The error's stable code, for programs (the body's message is for people): " +
      codes.map(([code, status]) => `${code} (${status})`).join(', ') +
      '. Absent on a 500, which is a bug.',
    schema: { type: 'string', enum: codes.map(([code]) => code) },
  };
}

/** An error answer: the `{ "error" }` body of `docs/api.md#errors`, and its code in `PDS-Error-Code` (`ERROR_CODE_HEADER`). */
const errorResponse = (description: string, headers: Schema = {}) => ({
  description,
  headers: { [ERROR_CODE_HEADER]: ERROR_CODE_REF, ...headers },
  content: { 'application/json': { schema: ERROR_REF } },
});

function tagOf(path: string): string {
  return path.split('/')[3] ?? 'platform';
}

/**
 * One OpenAPI operation for several tools that share a path with pinned values (each operation tool on
 * `/api/v1/operations/{name}/execute`): the pinned parameter becomes an enum, the body any of the tools' bodies, and
 * the description names the MCP tool of each value.
 */
function sharedOperationFor(tools: readonly AnyTool[]): Schema {
  const first = tools[0]!;
  const binding = first.rest!;
  const pinnedNames = Object.keys(binding.pathValues ?? {});
  const parameters: Schema[] = pathParams(binding.path).map((name) => ({
    name,
    in: 'path',
    required: true,
    description: `One of: ${tools.map((t) => t.rest!.pathValues![name]).join(', ')}`,
    schema: { type: 'string', enum: tools.map((t) => t.rest!.pathValues![name]) },
  }));
  parameters.push(...queryOfPost(first));
  const bodies = tools.map((t) => bodySchemaOf(t));
  const valueOf = (t: AnyTool) => pinnedNames.map((n) => t.rest!.pathValues![n]).join('/');
  const what = first.operation ? 'operation' : 'value';
  return {
    // One OpenAPI operation stands for several tools: named for what it does, each tool listed in `x-mcp-tool`.
    operationId: what === 'operation' ? 'execute_operation' : `${first.name}_by_${pinnedNames.join('_')}`,
    summary: `${what === 'operation' ? 'Execute an operation' : first.title}`,
    description:
      `The body carries the parameters of the ${what} named in the path, as strings. Each ${what} is also its own MCP tool:\n\n` +
      tools.map((t) => `- \`${valueOf(t)}\`: \`${t.name}\` — ${t.title}`).join('\n'),
    tags: [tagOf(binding.path)],
    parameters,
    requestBody: { required: true, content: { 'application/json': { schema: { anyOf: bodies } } } },
    responses: {
      200: { description: 'Success', content: { 'application/json': { schema: toSchema(first.output, 'output') } } },
      400: what === 'operation'
        ? errorResponse(
            'Invalid parameters (the message names every field and what is allowed), a refusal before anything ran ' +
              '(e.g. the tenant exists, the repository has no build file; the message names the fix), or a ' +
              'confirmation request of retire-service and delete-tenant (PDS-Error-Code: CONFIRMATION_REQUIRED): nothing ' +
              `changed; repeat the call with "confirm" set to the value in ${CONFIRM_HEADERS.confirm}`,
            {
              [CONFIRM_HEADERS.confirm]: { description: 'Confirmation value to send back as "confirm" (once)', schema: { type: 'string' } },
              [CONFIRM_HEADERS.expiresAt]: { description: 'ISO 8601 UTC time after which the value is refused', schema: { type: 'string' } },
              [CONFIRM_HEADERS.plan]: { description: 'What the operation will do', schema: { type: 'string' } },
            },
          )
        : errorResponse('Invalid parameters: the message names the field and what is allowed'),
      401: errorResponse('Missing, malformed, expired or unverifiable bearer token'),
      403: errorResponse('Admin access required, access denied to this tenant, a repository not registered to the tenant, or pds is read-only'),
      404: errorResponse(`Not found: no such ${what}${what === 'operation' ? ', or its tenant, service or preview does not exist' : ''}`),
      429: errorResponse('Rate limit exceeded (300 requests/min per user; 20 writes/min per user)'),
    },
    'x-mcp-tool': Object.fromEntries(tools.map((t) => [valueOf(t), t.name])),
  };
}

/**
 * The OpenAPI schema of a POST tool's body: its input without the fields it reads from the query string (removed from
 * the JSON Schema, since zod cannot omit keys of an object with refinements).
 */
function bodySchemaOf(tool: AnyTool, schema: z.ZodType = tool.input): Schema {
  const json = toSchema(schema, 'input') as Schema & { properties?: Record<string, unknown>; required?: string[] };
  for (const name of tool.rest?.query ?? []) {
    if (json.properties) delete json.properties[name];
    if (json.required) json.required = json.required.filter((r) => r !== name);
  }
  return json;
}

/** The query parameters of a POST tool (`RestBinding.query`). */
function queryOfPost(tool: AnyTool): Schema[] {
  const shape = tool.input.shape as Record<string, z.ZodType>;
  return (tool.rest?.query ?? []).map((name) => ({
    name,
    in: 'query',
    required: !shape[name]!.safeParse(undefined).success,
    description: shape[name]!.description,
    schema: toSchema(shape[name]!, 'input'),
  }));
}

function operationFor(tool: AnyTool): Schema {
  const binding = tool.rest!;
  const shape = tool.input.shape as Record<string, z.ZodType>;
  const inPath = pathParams(binding.path);
  const parameters: Schema[] = inPath.map((name) => {
    const field = shape[name]!;
    return { name, in: 'path', required: true, description: field.description, schema: toSchema(field, 'input') };
  });
  let requestBody: Schema | undefined;
  if (binding.method === 'GET') {
    for (const [name, field] of Object.entries(shape)) {
      if (inPath.includes(name)) continue;
      parameters.push({
        name,
        in: 'query',
        required: !field.safeParse(undefined).success,
        description: field.description,
        schema: toSchema(field, 'input'),
      });
    }
  } else {
    parameters.push(...queryOfPost(tool));
    const bodySchema = binding.bodyField ? shape[binding.bodyField]! : tool.input.omit(Object.fromEntries(inPath.map((p) => [p, true])));
    requestBody = { required: true, content: { 'application/json': { schema: bodySchemaOf(tool, bodySchema) } } };
  }
  const responses: Schema = {
    200: { description: 'Success', content: { 'application/json': { schema: toSchema(tool.output, 'output') } } },
    400: errorResponse('Invalid parameters: the message names the field and what is allowed'),
    401: errorResponse('Missing, malformed, expired or unverifiable bearer token'),
    403: errorResponse('Admin access required, access denied to this tenant, or pds is read-only'),
  };
  if (inPath.length) responses[404] = errorResponse('Not found: the message says what (tenant, service, operation, …)');
  if (binding.conflict) responses[409] = errorResponse(`Conflict: ${binding.conflict}`);
  responses[429] = errorResponse('Rate limit exceeded (300 requests/min per user; 20 writes/min per user)');
  return {
    operationId: tool.name,
    summary: tool.title,
    description: `${tool.description}\n\nMCP tool: \`${tool.name}\`.`,
    tags: [tagOf(binding.path)],
    ...(parameters.length ? { parameters } : {}),
    ...(requestBody ? { requestBody } : {}),
    responses,
    'x-mcp-tool': tool.name,
  };
}

/**
 * One OpenAPI operation for a stream (`tools/define.ts` StreamDefinition): its parameters as a tool's, and a 200 of
 * `text/event-stream` whose schema is one event's `data`.
 */
function streamOperationFor(stream: AnyStream): Schema {
  const base = operationFor({ ...stream, output: stream.event, rest: stream.rest } as unknown as AnyTool);
  const responses = base.responses as Schema;
  responses[200] = {
    description:
      `Server-sent events named ${stream.eventNames.map((n) => `\`${n}\``).join(', ')}; the schema is one event's ` +
      '`data` (JSON). Comment lines keep the connection open.',
    content: { 'text/event-stream': { schema: toSchema(stream.event, 'output') } },
  };
  const { 'x-mcp-tool': _mcp, ...rest } = base;
  return { ...rest, description: stream.description };
}

/** The OpenAPI document as an object. */
export function buildOpenApi(tools: readonly AnyTool[], baseUrl: string, streams: readonly AnyStream[] = allStreams): Schema {
  const paths: Record<string, Schema> = {
    '/healthz': {
      get: {
        operationId: 'healthz',
        summary: 'Liveness',
        tags: ['health'],
        security: [],
        responses: {
          200: {
            description: 'The process is up',
            content: {
              'application/json': {
                schema: { type: 'object', properties: { status: { type: 'string', enum: ['ok'] } }, required: ['status'] },
              },
            },
          },
        },
      },
    },
    '/readyz': {
      get: {
        operationId: 'readyz',
        summary: 'Readiness',
        tags: ['health'],
        security: [],
        responses: {
          200: {
            description: 'Ready for traffic',
            content: { 'application/json': { schema: { type: 'object', properties: { status: { type: 'string' } } } } },
          },
          503: errorResponse('Not ready yet'),
        },
      },
    },
    '/mcp': {
      post: {
        operationId: 'mcp',
        summary: 'MCP endpoint (Streamable HTTP, stateless, JSON responses)',
        description:
          'JSON-RPC 2.0 messages of the Model Context Protocol. Send `Accept: application/json, text/event-stream`. ' +
          'Every tool documented here is also an MCP tool (see `x-mcp-tool`). Counts against the 300/min limit.',
        tags: ['mcp'],
        requestBody: { required: true, content: { 'application/json': { schema: { type: 'object' } } } },
        responses: {
          200: { description: 'JSON-RPC response', content: { 'application/json': { schema: { type: 'object' } } } },
          401: errorResponse('Missing or invalid bearer token'),
          429: errorResponse('Rate limit exceeded'),
        },
      },
    },
  };
  for (const bound of routeTable(tools).values()) {
    const { method, path } = bound[0]!.rest!;
    const item = (paths[path] ??= {});
    item[method.toLowerCase()] = bound[0]!.rest!.pathValues ? sharedOperationFor(bound) : operationFor(bound[0]!);
  }
  for (const stream of streams) (paths[stream.rest.path] ??= {}).get = streamOperationFor(stream);
  return {
    openapi: '3.0.3',
    info: {
      title: 'Platform Deployment Service (pds)',
      version: SERVER_INFO.version,
      description:
        'Team deployment platform: tenants, services, GitOps status, logs, resources, audit and named operations that ' +
        'run as workflows. Every operation is also an MCP tool at POST /mcp.',
    },
    servers: [{ url: baseUrl }],
    security: [{ bearerAuth: [] }],
    tags: [
      ...new Set(Object.values(paths).flatMap((item) => Object.values(item).flatMap((op) => (op as { tags: string[] }).tags))),
    ].map((name) => ({ name })),
    paths,
    components: {
      securitySchemes: {
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          description:
            'A GitHub classic PAT (ghp_…, scope read:user), a JWT from the organisation identity provider (Dex), or a ' +
            'token issued by pds (`npx pds token --user <id>`).',
        },
      },
      headers: { [ERROR_CODE_HEADER]: errorCodeHeader() },
      schemas: {
        Error: {
          type: 'object',
          properties: { error: { type: 'string', description: 'What went wrong and what is allowed' } },
          required: ['error'],
        },
      },
    },
  };
}

const cache = new WeakMap<readonly AnyTool[], WeakMap<readonly AnyStream[], Map<string, string>>>();
/** The OpenAPI document as YAML, built once per tool set, stream set and base URL. */
export function openApiYaml(tools: readonly AnyTool[], baseUrl: string, streams: readonly AnyStream[] = allStreams): string {
  let byStreams = cache.get(tools);
  if (!byStreams) cache.set(tools, (byStreams = new WeakMap()));
  let byUrl = byStreams.get(streams);
  if (!byUrl) byStreams.set(streams, (byUrl = new Map()));
  let text = byUrl.get(baseUrl);
  if (!text) byUrl.set(baseUrl, (text = stringify(buildOpenApi(tools, baseUrl, streams), { aliasDuplicateObjects: false })));
  return text;
}
