/**
 * The published contract: the OpenAPI document validates and covers every REST-bound tool; every tool's MCP listing
 * (name, annotations, input JSON Schema, and the output JSON Schema of tools that submit a workflow) is snapshotted,
 * and so is the OpenAPI document with every REST tool's response schema, so a renamed field shows up as a diff in
 * review. The MCP listing is read by every client of test/helpers/mcp-clients.ts.
 */
import SwaggerParser from '@apidevtools/swagger-parser';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allTools } from '../../tools/registry.js';
import { toolListing } from '../../tools/mcp.js';
import { openApiYaml } from '../../rest/openapi.js';
import { describeOperation } from '../../tools/operations/catalog.js';
import { CLIENTS, connectHttp } from '../helpers/mcp-clients.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

let pds: TestServer;
beforeAll(async () => {
  pds = await startTestServer();
});
afterAll(() => pds.stop());

describe('OpenAPI', () => {
  it('serves an OpenAPI 3.0 document that validates and lists every REST route', async () => {
    const res = await fetch(`${pds.url}/openapi.yaml`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/yaml/);
    const doc = parse(await res.text());
    expect(doc.openapi).toMatch(/^3\.0\./);
    await SwaggerParser.validate(structuredClone(doc));
    for (const tool of allTools.filter((t) => t.rest)) {
      const op = doc.paths[tool.rest!.path]?.[tool.rest!.method.toLowerCase()];
      expect(op, `${tool.rest!.method} ${tool.rest!.path}`).toBeDefined();
      if (tool.rest!.pathValues) {
        // A shared path (each operation on /operations/{name}/execute): one OpenAPI operation naming every tool.
        const value = Object.values(tool.rest!.pathValues).join('/');
        expect(op['x-mcp-tool'][value]).toBe(tool.name);
        expect(op.parameters.find((p: any) => p.in === 'path').schema.enum).toContain(value);
      } else {
        expect(op.operationId).toBe(tool.name);
      }
      expect(op.responses['200']).toBeDefined();
    }
    // Every declared tag is used by an operation, and every operation's tag is declared.
    const used = new Set(Object.values(doc.paths).flatMap((item: any) => Object.values(item).flatMap((op: any) => op.tags)));
    expect(new Set(doc.tags.map((t: any) => t.name))).toEqual(used);
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
    // The contract's paths (`docs/api.md#endpoints`) all exist.
    for (const path of [
      '/healthz', '/readyz', '/api/v1/tenants', '/api/v1/tenants/{name}', '/api/v1/services', '/api/v1/services/{team}/{app}',
      '/api/v1/status/{team}/{app}', '/api/v1/logs/{team}/{app}', '/api/v1/resources/{tenant}', '/api/v1/workflows/{name}',
      '/api/v1/audit', '/api/v1/repos', '/api/v1/repos/sync', '/api/v1/operations', '/api/v1/operations/{name}',
      '/api/v1/operations/{name}/execute', '/mcp',
    ]) {
      expect(doc.paths, path).toHaveProperty([path]);
    }
    const logs = doc.paths['/api/v1/logs/{team}/{app}'].get.parameters;
    expect(logs.find((p: any) => p.name === 'lines')).toMatchObject({ in: 'query', required: false, schema: { type: 'integer', maximum: 1000, default: 100 } });
    expect(doc.servers).toEqual([{ url: pds.config.baseUrl }]);
    await expect(openApiYaml(allTools, 'http://localhost:8080')).toMatchFileSnapshot('__snapshots__/openapi.yaml');
  });

  it('serves interactive docs from local assets, no CDN', async () => {
    const page = await fetch(`${pds.url}/docs`);
    const html = await page.text();
    expect(page.status).toBe(200);
    expect(html).not.toMatch(/https?:\/\//);
    for (const src of html.matchAll(/(?:src|href)="([^"]+)"/g)) {
      const asset = await fetch(pds.url + src[1]);
      expect(asset.status, src[1]).toBe(200);
      await asset.arrayBuffer();
    }
  });
});

describe.each(CLIENTS)('MCP tool listing, $name', (kind) => {
  it('lists every tool with title, description, object schemas and annotations; snapshot of the published schemas', async () => {
    const client = await connectHttp(kind, `${pds.url}/mcp?toolsets=all`, { Authorization: `Bearer ${await pds.token('alice')}` });
    const { tools } = await client.listTools();
    await client.close();
    expect(tools.map((t) => t.name).sort()).toEqual(allTools.map((t) => t.name).sort());
    const defined = new Map(allTools.map((t) => [t.name, t]));
    for (const tool of tools) {
      expect(tool.name).toMatch(/^platform_[a-z]+(_[a-z]+)+$/);
      expect(tool.title).toBeTruthy();
      expect(tool.description!.length).toBeGreaterThan(60);
      expect(tool.inputSchema.type).toBe('object');
      expect(tool.inputSchema).not.toHaveProperty('$schema'); // 2020-12 is MCP's default dialect
      // Tools that submit a workflow list the result clients act on; other results are described by /openapi.yaml.
      const submits = defined.get(tool.name)!.operation !== undefined || tool.name === 'platform_execute_operation';
      expect(tool.outputSchema?.type).toBe(submits ? 'object' : undefined);
      expect(typeof tool.annotations?.readOnlyHint).toBe('boolean');
      if (!tool.annotations?.readOnlyHint) expect(typeof tool.annotations?.destructiveHint).toBe('boolean');
      for (const [field, schema] of Object.entries(tool.inputSchema.properties ?? {})) {
        expect((schema as any).description, `${tool.name}.${field}`).toBeTruthy();
      }
    }
    const destructive = tools.filter((t) => t.annotations?.destructiveHint).map((t) => t.name);
    expect(destructive).toEqual(expect.arrayContaining(['platform_retire_service', 'platform_delete_tenant']));
    // update-config replaces the whole environment and deploy the running version (issue 11 item 10): destructive.
    expect(tools.find((t) => t.name === 'platform_deploy_service')!.annotations?.destructiveHint).toBe(true);
    // One small snapshot per tool (github-mcp-server's __toolsnaps__): a diff shows which tool's contract changed.
    for (const listed of toolListing(allTools)) {
      await expect(JSON.stringify(listed, null, 2) + '\n').toMatchFileSnapshot(`__toolsnaps__/${listed.name}.json`);
    }
  });
});

describe('MCP tool schemas', () => {
  it('operation tools use the operation parameter names, read tools the REST parameter names', () => {
    const byName = Object.fromEntries(toolListing(allTools).map((t) => [t.name, t]));
    expect(Object.keys(byName.platform_get_logs!.inputSchema.properties!)).toEqual(['team', 'app', 'lines', 'since']);
    expect(Object.keys(byName.platform_deploy_service!.inputSchema.properties!)).toEqual([
      'action', 'team_name', 'component_name', 'git_tag', 'dockerfile_repo', 'dockerfile_path', 'move_from_repo', 'env_vars', 'port',
      'service_template', 'health_check_path', 'strategy', 'canary_steps', 'wait_seconds', 'override_reason',
    ]);
    // wait_seconds says how to call, not what to submit: GET /operations does not list it (issue 11 item 2).
    const listed = (describeOperation(allTools.find((t) => t.name === 'platform_deploy_service')!).parameters).map((p) => p.name);
    expect(listed).not.toContain('wait_seconds');
  });
});

describe.each(CLIENTS)('read-only mode, $name', (kind) => {
  it('hides write tools from MCP and refuses writes over REST', async () => {
    const ro = await startTestServer({ PDS_READ_ONLY: 'true' });
    try {
      const client = await connectHttp(kind, `${ro.url}/mcp?toolsets=all`, { Authorization: `Bearer ${await ro.token('root')}` });
      const { tools } = await client.listTools();
      const call = await client.callTool({ name: 'platform_deploy_service', arguments: {} });
      await client.close();
      expect(tools.length).toBeGreaterThan(5);
      expect(tools.every((t) => t.annotations?.readOnlyHint === true)).toBe(true);
      expect(call.isError).toBe(true);
      const res = await ro.api('root', 'POST', '/api/v1/operations/create-tenant/execute', { team_name: 'acme' });
      expect(res.status).toBe(403);
      expect(res.body.error).toMatch(/read-only/);
      expect((await ro.api('root', 'GET', '/api/v1/operations')).status).toBe(200);
    } finally {
      await ro.stop();
    }
  });
});
