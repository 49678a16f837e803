/**
 * MCP Apps at the protocol level (issue 21 item 4), against a started pds with every client of
 * test/helpers/mcp-clients.ts, declaring the `io.modelcontextprotocol/ui` extension or not: which tools link a view
 * (`_meta.ui.resourceUri`), which resources are listed, what `resources/read` of a view answers, and that tool
 * results are the same for every client. The views themselves run in a browser in test/e2e/mcp-apps-browser.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allTools } from '../../tools/registry.js';
import { ensureViewsBuilt } from '../helpers/mcp-apps.js';
import { CLIENTS, connectHttp, connectStdio, type ClientKind, type ListedTool, type TestClient } from '../helpers/mcp-clients.js';
import { executeAndWait, registerRepository, startTestServer, type TestServer } from '../helpers/server.js';

const APP_TYPE = 'text/html;profile=mcp-app';
const VIEWS = ['ui://pds/workflow', 'ui://pds/service'];

let pds: TestServer;
beforeAll(async () => {
  ensureViewsBuilt();
  pds = await startTestServer();
  await executeAndWait(pds, 'root', 'create-tenant', { team_name: 'acme', admins: 'alice' });
  await registerRepository(pds, 'alice', 'acme', 'acme/web');
  await executeAndWait(pds, 'alice', 'deploy-service', { action: 'onboard', team_name: 'acme', component_name: 'web', dockerfile_repo: 'acme/web', git_tag: '0.1.0', port: '8080' });
}, 60_000);
afterAll(() => pds.stop());

const connect = async (kind: ClientKind, apps: boolean) =>
  connectHttp(kind, `${pds.url}/mcp?toolsets=all`, { Authorization: `Bearer ${await pds.token('alice')}` }, { apps });

/** The view each listed tool links, by tool name (tools without one left out). */
const viewsOf = (tools: ListedTool[]) => Object.fromEntries(tools.filter((t) => t._meta?.ui).map((t) => [t.name, t._meta!.ui.resourceUri]));

/** What a client that renders Apps is told: the workflow view for what submits or reads a workflow, the service view for status. */
const EXPECTED = Object.fromEntries(
  allTools
    .filter((t) => t.operation || t.dispatch || t.name === 'platform_get_workflow' || t.name === 'platform_get_status')
    .map((t) => [t.name, t.name === 'platform_get_status' ? 'ui://pds/service' : 'ui://pds/workflow']),
);

describe.each(CLIENTS)('MCP Apps with the $name', (kind) => {
  let plain: TestClient;
  let apps: TestClient;
  beforeAll(async () => {
    plain = await connect(kind, false);
    apps = await connect(kind, true);
  });
  afterAll(async () => {
    await plain?.close();
    await apps?.close();
  });

  it('links no view and lists no ui:// resource for a client that does not declare the extension', async () => {
    const { tools } = await plain.listTools();
    expect(tools.filter((t) => t._meta !== undefined).map((t) => t.name)).toEqual([]);
    expect((await plain.listResources()).resources.map((r) => r.uri)).toEqual(['pds://operations', 'pds://templates']);
  });

  // On 2026-07-28 every request carries the client's capabilities. On 2025-11-25 only `initialize` does, which a
  // stateless HTTP server answers on its own: the tools/list that follows cannot know them (see stdio below).
  const seesApps = kind.protocol === '2026-07-28';
  it(`${seesApps ? 'links' : 'cannot link (stateless HTTP on 2025-11-25)'} the views for a client that declares the extension`, async () => {
    const { tools } = await apps.listTools();
    const { resources } = await apps.listResources();
    if (!seesApps) {
      expect(viewsOf(tools)).toEqual({});
      expect(resources.map((r) => r.uri)).not.toContain('ui://pds/workflow');
      return;
    }
    expect(viewsOf(tools)).toEqual(EXPECTED);
    expect(Object.keys(EXPECTED)).toEqual(expect.arrayContaining(['platform_deploy_service', 'platform_rollback_service', 'platform_execute_operation']));
    expect(resources.filter((r) => r.uri.startsWith('ui://'))).toEqual(VIEWS.map((uri) => expect.objectContaining({ uri, mimeType: APP_TYPE })));
    // The listing is the plain one plus _meta: nothing else differs.
    const { tools: plainTools } = await plain.listTools();
    expect(tools.map(({ _meta, ...rest }) => rest)).toEqual(plainTools);
  });

  it('reads each view as one self-contained HTML page that declares no domain', async () => {
    for (const uri of VIEWS) {
      const read = await apps.readResource({ uri });
      expect(read.contents).toHaveLength(1);
      const [content] = read.contents;
      expect(content).toMatchObject({ uri, mimeType: APP_TYPE, _meta: { ui: { csp: { connectDomains: [], resourceDomains: [] } } } });
      const html = content!.text!;
      expect(html.startsWith('<!doctype html>')).toBe(true);
      // Scripts and styles inline; nothing fetched: no src, href, import or url() to anywhere.
      expect(html).not.toMatch(/<script[^>]*\bsrc=|<link\b|@import|url\(\s*['"]?(https?:)?\/\//i);
      expect(html).toMatch(/<meta http-equiv="Content-Security-Policy" content="default-src 'none';[^"]*connect-src 'none'/);
      expect(html).toContain(`data-view="${uri.slice('ui://pds/'.length)}"`);
    }
    // A client without the extension that found the URI may read it too: the page holds no data.
    expect((await plain.readResource({ uri: 'ui://pds/service' })).contents[0]!.mimeType).toBe(APP_TYPE);
    await expect(apps.readResource({ uri: 'ui://pds/nothing' })).rejects.toMatchObject({ code: -32602 });
  });

  it('answers tool calls the same, text and structuredContent, whether the client renders Apps or not', async () => {
    const call = { name: 'platform_get_status', arguments: { team: 'acme', app: 'web' } };
    const [withApps, without] = [await apps.callTool(call), await plain.callTool(call)];
    expect(withApps).toEqual(without);
    expect(withApps.structuredContent).toMatchObject({ argocd: { name: 'acme-web' }, service: { imageTag: '0.1.0' } });
    expect(JSON.parse(withApps.content[0]!.text!)).toEqual(withApps.structuredContent);
  });
});

describe('through pds mcp on stdio (2025-11-25: the initialize on the connection carries the capabilities)', () => {
  const stdio = async (kind: ClientKind, apps: boolean) =>
    connectStdio(
      kind,
      {
        command: process.execPath,
        args: ['bin/pds-src.js', 'mcp', '--toolsets', 'all'],
        env: { ...(process.env as Record<string, string>), PDS_BASE_URL: pds.url, PDS_TOKEN: await pds.token('alice') },
      },
      { apps },
    );

  it.each(CLIENTS.filter((k) => k.protocol === '2025-11-25'))('links the views for the $name only when it declares the extension', async (kind) => {
    const [withApps, without] = [await stdio(kind, true), await stdio(kind, false)];
    try {
      expect(viewsOf((await withApps.listTools()).tools)).toEqual(EXPECTED);
      expect((await withApps.listResources()).resources.map((r) => r.uri)).toEqual(expect.arrayContaining(VIEWS));
      expect(viewsOf((await without.listTools()).tools)).toEqual({});
      expect((await without.listResources()).resources.map((r) => r.uri)).not.toContain('ui://pds/workflow');
      expect((await withApps.readResource({ uri: 'ui://pds/workflow' })).contents[0]).toMatchObject({ mimeType: APP_TYPE });
    } finally {
      await withApps.close();
      await without.close();
    }
  }, 60_000);
});
