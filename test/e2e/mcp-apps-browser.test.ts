/**
 * The MCP App views in a real browser (issue 21 item 5): Debian's chromium, driven by playwright-core, loads a test
 * host page (test/fixtures/mcp-apps-host/host.js, served on loopback) that embeds each view in a sandboxed iframe and
 * speaks the Apps bridge with ext-apps' `AppBridge`. The host's MCP client is a real SDK client (v2, 2026-07-28,
 * declaring the Apps extension) connected to a real pds; the page reaches it through functions exposed on `window`.
 *
 * Journeys: a deploy called as an agent would, its view following the workflow through the host to the end; the
 * service view's status and history, and a rollback the host asks the person about (declined, then allowed) followed to
 * the end. axe-core checks both views, light and dark, for serious or critical violations; nothing in a view touches
 * the network.
 */
import { createServer, type Server } from 'node:http';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { chromium, type Browser, type Frame, type Page } from 'playwright-core';
import { build, type Rolldown } from 'vite';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ensureViewsBuilt } from '../helpers/mcp-apps.js';
import { CLIENTS, connectHttp, type TestClient } from '../helpers/mcp-clients.js';
import { executeAndWait, registerRepository, startTestServer, type TestServer } from '../helpers/server.js';

// A view's deadline (below) must fit inside a test's.
vi.setConfig({ testTimeout: 120_000 });

/** Debian's chromium (`.ci/run` installs it). */
const CHROMIUM = process.env.PDS_CHROMIUM ?? '/usr/bin/chromium';
/** How long a view may take to show a workflow's end (generous: the machine is shared). */
const VIEW_DEADLINE_MS = 60_000;
/** Where to save pictures of the views (the README's), when set. */
const SCREENSHOTS = process.env.PDS_SCREENSHOT_DIR;

/** Save a picture of a view's iframe as `<name>.png` in {@link SCREENSHOTS}, when set. */
async function picture(view: string, name: string): Promise<void> {
  if (SCREENSHOTS) await page.locator(`iframe#${view}`).screenshot({ path: path.join(SCREENSHOTS, `${name}.png`) });
}

let pds: TestServer;
let client: TestClient;
let hostServer: Server;
let hostUrl: string;
let browser: Browser;
let page: Page;
/** Every URL the page and its frames requested. */
const requests: string[] = [];
/** Errors the page or a view logged (printed when a test fails). */
const consoleErrors: string[] = [];

/** The host page's script, bundled for the browser (AppBridge and its dependencies). */
async function bundleHost(): Promise<string> {
  const output = (await build({
    configFile: false,
    logLevel: 'warn',
    root: path.resolve('test/fixtures/mcp-apps-host'),
    build: { write: false, minify: false, lib: { entry: path.resolve('test/fixtures/mcp-apps-host/host.js'), formats: ['es'], fileName: () => 'host.js' } },
  })) as Rolldown.RolldownOutput | Rolldown.RolldownOutput[];
  const chunk = (Array.isArray(output) ? output : [output]).flatMap((o) => o.output).find((o): o is Rolldown.OutputChunk => o.type === 'chunk' && o.isEntry);
  return chunk!.code;
}

const HOST_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Test MCP Apps host</title>
<style>iframe { display: block; width: 100%; min-height: 120px; border: 1px solid #888; margin: 8px 0; }</style></head>
<body><main><h1>Test MCP Apps host</h1><div id="views"></div></main><script type="module" src="/host.js"></script></body></html>`;

beforeAll(async () => {
  ensureViewsBuilt();
  // Steps slow enough that the view has something to follow.
  pds = await startTestServer({ PDS_SANDBOX_STEP_MS: '150' });
  await executeAndWait(pds, 'root', 'create-tenant', { team_name: 'acme', admins: 'alice' });
  await registerRepository(pds, 'alice', 'acme', 'acme/web');
  await executeAndWait(pds, 'alice', 'deploy-service', { action: 'onboard', team_name: 'acme', component_name: 'web', dockerfile_repo: 'acme/web', git_tag: '0.1.0', port: '8080' });

  const kind = CLIENTS.find((k) => k.protocol === '2026-07-28')!;
  client = await connectHttp(kind, `${pds.url}/mcp`, { Authorization: `Bearer ${await pds.token('alice')}` }, { apps: true });

  const script = await bundleHost();
  hostServer = createServer((req, res) => {
    if (req.url === '/') res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(HOST_PAGE);
    else if (req.url === '/host.js') res.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8' }).end(script);
    else res.writeHead(req.url === '/favicon.ico' ? 204 : 404).end();
  });
  await new Promise<void>((resolve) => hostServer.listen(0, '127.0.0.1', resolve));
  hostUrl = `http://127.0.0.1:${(hostServer.address() as { port: number }).port}`;

  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  page = await browser.newPage({ viewport: { width: 900, height: 900 } });
  page.on('request', (r) => requests.push(r.url()));
  page.on('console', (m) => m.type() === 'error' && consoleErrors.push(m.text()));
  page.on('pageerror', (e) => consoleErrors.push(String(e)));
  await page.exposeFunction('mcpListTools', () => client.listTools());
  await page.exposeFunction('mcpReadResource', (uri: string) => client.readResource({ uri }));
  await page.exposeFunction('mcpCallTool', (params: { name: string; arguments?: Record<string, unknown> }) =>
    client.callTool({ name: params.name, arguments: params.arguments }),
  );
  await page.goto(hostUrl);
  await page.waitForFunction(() => typeof (window as any).runTool === 'function');
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await client?.close();
  await new Promise((resolve) => (hostServer ? hostServer.close(resolve) : resolve(undefined)));
  await pds?.stop();
});

/** Call a tool from the host page as the agent would; returns the view's id and the tool result. */
async function runTool(name: string, args: Record<string, unknown>): Promise<{ view: string; result: any }> {
  return page.evaluate(([n, a]) => (window as any).runTool(n, a), [name, args] as const);
}

/** The frame of a view. */
async function frameOf(view: string): Promise<Frame> {
  const frame = await (await page.$(`iframe#${view}`))!.contentFrame();
  if (!frame) throw new Error(`no frame for ${view}`);
  return frame;
}

const hostLog = (): Promise<any[]> => page.evaluate(() => (window as any).hostLog);

describe('the workflow view in a host that renders MCP Apps', () => {
  it('shows a deploy the agent started, step by step, to the end', async () => {
    const { view, result } = await runTool('platform_deploy_service', {
      action: 'deploy',
      team_name: 'acme',
      component_name: 'web',
      dockerfile_repo: 'acme/web',
      git_tag: '0.2.0',
    });
    // What a host without Apps shows is unchanged: the text and structuredContent of the result.
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toMatchObject({ operation: 'deploy-service', status: 'submitted' });
    const workflow = result.structuredContent.workflowName as string;

    const frame = await frameOf(view);
    const ui = page.frameLocator(`iframe#${view}`);
    await ui.getByText(workflow).waitFor({ timeout: VIEW_DEADLINE_MS });
    await expect.poll(() => ui.getByTestId('phase').textContent(), { timeout: VIEW_DEADLINE_MS }).toBe('succeeded');

    const final = (await pds.api('alice', 'GET', `/api/v1/workflows/${workflow}`)).body;
    expect(final.phase).toBe('succeeded');
    const shown = await frame.$$eval('.steps li', (items) => items.map((li) => ({ name: li.querySelector('.name')!.textContent, status: li.getAttribute('data-status') })));
    expect(shown).toEqual(final.steps.map((s: any) => ({ name: s.name, status: s.status })));
    expect(shown.length).toBeGreaterThan(1);

    // The view followed the workflow through the host, with waits, until it settled.
    const calls = (await hostLog()).filter((e) => e.view === view);
    const follows = calls.filter((e) => e.method === 'tools/call');
    expect(follows.length).toBeGreaterThan(0);
    expect(follows.every((e) => e.name === 'platform_get_workflow' && e.arguments.name === workflow)).toBe(true);
    expect(follows.slice(1).every((e) => e.arguments.wait_seconds > 0)).toBe(true);
    expect(calls.filter((e) => e.method === 'result').at(-1)).toMatchObject({ phase: 'succeeded' });
    await picture(view, 'mcp-app-workflow');
  });
});

describe('the service view in a host that renders MCP Apps', () => {
  let view: string;
  it('shows the status and the last workflows', async () => {
    ({ view } = await runTool('platform_get_status', { team: 'acme', app: 'web' }));
    const ui = page.frameLocator(`iframe#${view}`);
    await expect.poll(() => ui.getByTestId('image-tag').textContent(), { timeout: VIEW_DEADLINE_MS }).toBe('0.2.0');
    await ui.getByRole('table').waitFor({ timeout: VIEW_DEADLINE_MS });
    const rows = await ui.locator('tbody tr').allTextContents();
    expect(rows[0]).toContain('deploy-service');
    expect(rows[0]).toContain('0.2.0');
    expect(rows.some((r) => r.includes('0.1.0') && r.includes('succeeded'))).toBe(true);
    expect(await ui.getByLabel('Tag it ran').inputValue()).toBe('0.1.0');
  });

  it('rolls back only when the person allows it in the host, then follows the rollback to the end', async () => {
    const ui = page.frameLocator(`iframe#${view}`);
    const button = ui.getByRole('button', { name: 'Roll back to 0.1.0' });
    const rollbacks = async () => (await pds.api('alice', 'GET', '/api/v1/workflows?team=acme&operation=rollback-service')).body.count;

    // Declined: the host never makes the call, and the view says so.
    await button.click();
    const dialog = page.getByRole('dialog');
    await expect.poll(() => dialog.textContent(), { timeout: VIEW_DEADLINE_MS }).toContain('platform_rollback_service');
    expect(await dialog.textContent()).toContain('"target_tag":"0.1.0"');
    await dialog.getByRole('button', { name: 'Deny' }).click();
    await expect.poll(() => ui.getByRole('alert').textContent(), { timeout: VIEW_DEADLINE_MS }).toContain('the host did not run platform_rollback_service');
    expect(await rollbacks()).toBe(0);

    // Allowed: the rollback runs, the view follows its workflow, then shows the status it left.
    await button.click();
    await dialog.getByRole('button', { name: 'Allow' }).click();
    await expect.poll(() => ui.locator('.workflow [data-testid=phase]').textContent(), { timeout: VIEW_DEADLINE_MS }).toBe('succeeded');
    await expect.poll(() => ui.getByTestId('image-tag').textContent(), { timeout: VIEW_DEADLINE_MS }).toBe('0.1.0');
    expect(await rollbacks()).toBe(1);
    expect((await pds.api('alice', 'GET', '/api/v1/services/acme/web')).body.imageTag).toBe('0.1.0');
    const names = (await hostLog()).filter((e) => e.view === view && e.method === 'tools/call').map((e) => e.name);
    expect(names).toEqual(expect.arrayContaining(['platform_list_workflows', 'platform_rollback_service', 'platform_get_workflow', 'platform_get_status']));
    await picture(view, 'mcp-app-service');
  });
});

describe('the views themselves', () => {
  const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

  it('have no serious or critical axe-core violations, light or dark, wide or 390 px narrow', async () => {
    const frames = page.frames().filter((f) => f !== page.mainFrame());
    expect(frames).toHaveLength(2);
    for (const [scheme, width] of [['light', 900], ['dark', 900], ['light', 390]] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      await page.setViewportSize({ width, height: 900 });
      for (const frame of frames) {
        // Nothing wider than the view (the host gives it the page's width, less the iframe's border).
        await expect.poll(() => frame.evaluate(() => document.documentElement.scrollWidth <= document.documentElement.clientWidth)).toBe(true);
        // evaluate runs outside the view's CSP (the page itself allows no script but its own inline one).
        await frame.evaluate(axeSource);
        const violations = await frame.evaluate(async () => {
          const results = await (window as any).axe.run(document, { resultTypes: ['violations'] });
          return results.violations
            .filter((v: any) => v.impact === 'serious' || v.impact === 'critical')
            .map((v: any) => `${v.id} (${v.impact}): ${v.nodes.map((n: any) => n.target.join(' ')).join(', ')}`);
        });
        expect(violations, `${scheme}, ${width} px: ${frame.url()}`).toEqual([]);
      }
    }
  });

  it('reach nothing on the network: every request the page made was the host page\'s own', () => {
    expect(requests.length).toBeGreaterThan(0);
    expect(requests.filter((url) => !url.startsWith(hostUrl) && !url.startsWith('about:'))).toEqual([]);
    expect(consoleErrors.filter((e) => !e.includes('the person declined'))).toEqual([]);
  });
});
