/**
 * The console in a real browser (issue 21 item 5): chromium signs in with a sandbox's one-time URL, sees the overview,
 * opens a service, deploys a tag and watches its steps to the end, rolls back after the confirmation, updates config
 * (390 px) or retires another service through the API's confirmation request (1280 px), reads a failed step's log tail, visits every page and signs out — at 1280 px (light) and again at 390 px (dark). axe-core checks
 * every page and the confirm dialogs (no serious or critical violation), the page never trips its CSP, and at 390 px
 * nothing scrolls sideways. Screenshots for the README come from here (`test/helpers/chromium.ts`).
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandboxPlatform } from '../../adapters/sandbox/index.js';
import { issueConsoleCode } from '../../auth/console-code.js';
import { loadOrCreateSecret } from '../../auth/self-issued.js';
import type { Platform } from '../../core/ports.js';
import { buildConsole } from '../helpers/console-build.js';
import { cspViolations, launchChromium, screenshot, seriousViolations, type AxeViolation } from '../helpers/chromium.js';
import { executeAndWait, registerRepository, startTestServer, waitForWorkflow, type TestServer } from '../helpers/server.js';
import { submission } from '../sandbox/submission.js';

/** Long enough per step that a deploy is seen running; short enough that a journey stays quick. */
const STEP_MS = 250;
/** How long the browser may take to show what a test waits for (the machine may be loaded). */
const UI_MS = 45_000;

let browser: Browser;
let pds: TestServer;
let platform: Platform;
let secret: Uint8Array;
let failedWorkflow: string;

const onboard = { action: 'onboard', team_name: 'acme', component_name: 'web', dockerfile_repo: 'acme/web', git_tag: '0.1.0', port: '8080', service_template: 'default' };

beforeAll(async () => {
  const [built, launched] = await Promise.all([buildConsole(), launchChromium()]);
  browser = launched;
  const dataDir = await mkdtemp(path.join(tmpdir(), 'pds-console-journeys-'));
  platform = await createSandboxPlatform({ dataDir, domain: 'apps.test', stepMs: STEP_MS, githubAppSlug: 'pds-test' });
  pds = await startTestServer({ PDS_DATA_DIR: dataDir }, { platform, consoleDir: built.dir });
  secret = await loadOrCreateSecret(pds.config.jwtSecret, pds.config.dataDir);
  await executeAndWait(pds, 'root', 'create-tenant', { team_name: 'acme', admins: 'alice', members: 'bob' });
  await registerRepository(pds, 'alice', 'acme', 'acme/web');
  await executeAndWait(pds, 'alice', 'deploy-service', onboard);
  await executeAndWait(pds, 'alice', 'deploy-service', { action: 'deploy', team_name: 'acme', component_name: 'web', dockerfile_repo: 'acme/web', git_tag: '0.2.0' });
  await executeAndWait(pds, 'alice', 'deploy-service', { ...onboard, component_name: 'api', dockerfile_repo: 'acme/web' });
  // A second onboarding submitted past the door's preflight (which refuses it): it fails in its first step, with a
  // log tail, as a workflow that breaks does.
  failedWorkflow = 'deploy-service-console-failed';
  await platform.workflows.submit(submission(failedWorkflow, 'deploy-service', onboard, 'alice'));
  expect((await waitForWorkflow(pds, 'alice', failedWorkflow, 60_000)).audit.status).toBe('failed');
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await pds?.stop();
});

/** Wait for a locator to be visible, with a deadline that names what was awaited. */
const shown = (page: Page, what: Parameters<Page['getByRole']>[0], name: string | RegExp, options: { level?: number; exact?: boolean } = {}) =>
  page.getByRole(what, { name, ...options }).first().waitFor({ state: 'visible', timeout: UI_MS });

/** The image tag the service page shows. */
const shownTag = (page: Page) => page.locator('.facts div', { hasText: 'Image tag' }).locator('code').textContent();

/**
 * One whole journey at `width` px; returns what axe found per page (only serious and critical) and the CSP messages.
 * @param tag the tag to deploy (each journey its own, newer than the last).
 */
async function journey(width: number, colorScheme: 'light' | 'dark', tag: string, shots: string): Promise<{ axe: Record<string, AxeViolation[]>; csp: string[]; overflow: string[] }> {
  const context = await browser.newContext({ viewport: { width, height: 900 }, colorScheme });
  const page = await context.newPage();
  const csp = cspViolations(page);
  const axe: Record<string, AxeViolation[]> = {};
  const overflow: string[] = [];
  const check = async (name: string) => {
    axe[name] = await seriousViolations(page);
    const wide = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    if (wide > 0) overflow.push(`${name}: ${wide}px`);
  };
  try {
    // Sign in with the one-time URL `pds console --user alice` prints; the code leaves the address bar.
    await page.goto(`${pds.url}/console/sign-in#code=${await issueConsoleCode(secret, pds.config.baseUrl, 'alice')}`);
    await shown(page, 'heading', 'Overview', { level: 1 });
    expect(page.url()).toBe(`${pds.url}/`);
    await shown(page, 'link', 'acme/web');
    await page.getByText('alice', { exact: true }).first().waitFor({ timeout: UI_MS });
    await check('overview');
    if (width > 390) await screenshot(page, `${shots}-overview`);
    if (width > 390) {
      // A deploy started elsewhere while the overview is open: reloaded, the page shows it and, once its event stream
      // says it settled, its outcome, without another reload.
      const started = await pds.api('alice', 'POST', '/api/v1/operations/deploy-service/execute', {
        action: 'deploy', team_name: 'acme', component_name: 'web', dockerfile_repo: 'acme/web', git_tag: '0.2.1',
      });
      expect(started.status).toBe(200);
      await page.reload();
      const row = page.locator('tr', { has: page.getByRole('link', { name: 'acme/web' }) });
      await row.getByRole('link', { name: 'deploy-service' }).waitFor({ timeout: UI_MS });
      await row.locator('.badge', { hasText: 'succeeded' }).last().waitFor({ timeout: UI_MS });
      await row.locator('code', { hasText: '0.2.1' }).waitFor({ timeout: UI_MS });
    }

    // The service: status, history, and a deploy watched to the end through the event stream.
    await page.getByRole('link', { name: 'acme/web' }).first().click();
    await shown(page, 'heading', 'acme/web', { level: 1 });
    await shown(page, 'heading', 'Deploy history');
    await check('service');
    const before = await shownTag(page);
    await page.getByLabel('Git tag').fill(tag);
    await page.getByRole('button', { name: 'Deploy', exact: true }).click();
    const live = page.locator('section', { has: page.getByRole('heading', { name: /Running workflow|Last workflow/ }) }).locator('.live');
    await live.locator('a', { hasText: /^deploy-service-/ }).waitFor({ timeout: UI_MS });
    const deployName = await live.locator('a').first().textContent();
    // Steps appear as they run, then the outcome.
    await live.locator('[data-status="succeeded"]').first().waitFor({ timeout: UI_MS });
    await page.locator('.live[data-phase="succeeded"]').waitFor({ timeout: UI_MS });
    const statuses = await live.locator('li.step').evaluateAll((items) => items.map((i) => i.getAttribute('data-status')));
    expect(statuses.length).toBeGreaterThanOrEqual(5);
    expect(new Set(statuses)).toEqual(new Set(['succeeded']));
    await page.locator('.facts code', { hasText: tag }).waitFor({ timeout: UI_MS });
    await screenshot(page, `${shots}-service`);
    const after = (await pds.api('alice', 'GET', `/api/v1/workflows/${deployName}`)).body;
    expect(after.audit).toMatchObject({ userId: 'alice', status: 'succeeded', parameters: { git_tag: tag } });

    // Roll back to the tag it ran before, after the confirmation that shows what will happen.
    await page.getByLabel('To a tag it ran').selectOption(before!);
    const dialog = page.getByRole('dialog', { name: 'Roll back acme/web?' });
    const focused = () => page.evaluate(() => document.activeElement?.textContent ?? '');
    if (width > 390) {
      await page.getByRole('button', { name: 'Roll back…' }).click();
    } else {
      // By keyboard: the dialog opens with Enter, takes the focus (on Cancel, the default), and Escape cancels.
      await page.getByRole('button', { name: 'Roll back…' }).focus();
      await page.keyboard.press('Enter');
      await dialog.waitFor({ timeout: UI_MS });
      expect(await focused()).toBe('Cancel');
      await page.keyboard.press('Escape');
      await dialog.waitFor({ state: 'hidden', timeout: UI_MS });
      await page.getByRole('button', { name: 'Roll back…' }).focus();
      await page.keyboard.press('Enter');
    }
    await dialog.waitFor({ timeout: UI_MS });
    expect(await dialog.textContent()).toContain(`runs ${tag}`);
    await check('rollback-confirm');
    if (width > 390) await screenshot(page, `${shots}-rollback-confirm`);
    if (width > 390) {
      await dialog.getByRole('button', { name: `Roll back to ${before}` }).click();
    } else {
      await page.keyboard.press('Tab');
      expect(await focused()).toBe(`Roll back to ${before}`);
      await page.keyboard.press('Enter');
    }
    await dialog.waitFor({ state: 'hidden', timeout: UI_MS });
    await live.locator('a', { hasText: /^rollback-service-/ }).waitFor({ timeout: UI_MS });
    await page.locator('.live[data-phase="succeeded"]').waitFor({ timeout: UI_MS });
    await page.locator('.facts code', { hasText: before! }).waitFor({ timeout: UI_MS });

    if (width === 390) {
      // Update config: the new environment, after the confirmation; the value is never shown again.
      await page.getByLabel(/^Environment/).fill('GREETING=hello');
      await page.getByRole('button', { name: 'Update config…' }).click();
      const config = page.getByRole('dialog', { name: 'Update the config of acme/web?' });
      await config.getByRole('button', { name: 'Update config' }).click();
      await live.locator('a', { hasText: /^deploy-service-/ }).waitFor({ timeout: UI_MS });
      await page.locator('.live[data-phase="succeeded"]').waitFor({ timeout: UI_MS });
      const history = (await pds.api('alice', 'GET', '/api/v1/workflows?team=acme&service=web&limit=1')).body.items[0];
      expect(history.parameters).toMatchObject({ action: 'update-config' });
      expect(JSON.stringify(history.parameters)).not.toContain('hello');
    } else {
      // Retire another service: the API's confirmation request shows its plan, and only the confirmation retires it.
      await page.goto(`${pds.url}/console/services/acme/api`);
      await page.getByRole('button', { name: 'Retire…' }).click();
      const retire = page.getByRole('dialog', { name: /^Retire acme\/api\?/ });
      await retire.waitFor({ timeout: UI_MS });
      expect(await retire.textContent()).toContain('permanently remove service acme/api');
      await check('retire-confirm');
      expect((await pds.api('alice', 'GET', '/api/v1/services/acme/api')).status).toBe(200);
      await retire.getByRole('button', { name: 'Retire for good' }).click();
      await shown(page, 'heading', 'Overview', { level: 1 });
      const retired = (await pds.api('alice', 'GET', '/api/v1/workflows?team=acme&service=api&operation=retire-service&limit=1')).body.items[0];
      expect(retired).toMatchObject({ operation: 'retire-service', userId: 'alice' });
      expect((await waitForWorkflow(pds, 'alice', retired.name, 60_000)).audit.status).toBe('succeeded');
    }

    // A failed step's log tail, on the workflow page.
    await page.goto(`${pds.url}/console/workflows/${failedWorkflow}`);
    await shown(page, 'heading', `Workflow ${failedWorkflow}`, { level: 1 });
    await shown(page, 'heading', 'Log tail of the failed step');
    expect(await page.getByRole('region', { name: /log tail/ }).or(page.locator('.log-tail pre')).first().textContent()).toMatch(/failed/);
    await check('workflow');
    await screenshot(page, `${shots}-failed-step`);

    // Every other page, through the navigation.
    for (const [link, heading] of [
      ['Audit', 'Audit'],
      ['Approvals', 'Approvals'],
    ] as const) {
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: link }).click();
      await shown(page, 'heading', heading, { level: 1 });
      await page.locator('.muted[aria-live="polite"]', { hasText: 'Loading' }).waitFor({ state: 'detached', timeout: UI_MS });
      await check(link.toLowerCase());
    }
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Overview' }).click();
    await page.getByRole('link', { name: 'acme' , exact: true }).click();
    await shown(page, 'heading', 'Tenant acme', { level: 1 });
    await shown(page, 'heading', 'Members');
    await page.getByRole('heading', { name: 'Policy' }).waitFor({ timeout: UI_MS });
    await check('tenant');
    if (width > 390) {
      // A tenant admin edits the policy (here: writes it back as it is); the change is an event of the tenant's feed.
      await page.getByRole('button', { name: 'Edit policy' }).click();
      await page.getByLabel(/^Policy \(JSON/).fill('{}');
      await check('policy-edit');
      await page.getByRole('button', { name: 'Save policy' }).click();
      await page.getByRole('status').filter({ hasText: 'Policy saved.' }).waitFor({ timeout: UI_MS });
      const events = (await pds.api('alice', 'GET', '/api/v1/tenants/acme/events')).body;
      expect(events.items[0]).toMatchObject({ type: 'policy.changed', userId: 'alice' });
    }
    if (width > 390) await screenshot(page, `${shots}-tenant`);

    // Audit filtered by operation.
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Audit' }).click();
    await page.getByLabel('Operation').selectOption('rollback-service');
    const rows = await page.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => tr.children[2]?.textContent));
    expect(rows.length).toBeGreaterThan(0);
    expect(new Set(rows)).toEqual(new Set(['rollback-service']));

    // Sign out: the session ends on the server too.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await shown(page, 'heading', 'Sign in to pds', { level: 1 });
    await check('sign-in');
    expect(await page.evaluate(() => fetch('/console/api/session').then((r) => r.status))).toBe(401);
    return { axe, csp, overflow };
  } finally {
    await context.close();
  }
}

describe('the console in chromium', () => {
  it('at 1280 px: sign in with the one-time URL, deploy and watch, roll back, read a failed step, sign out; axe clean', async () => {
    const { axe, csp, overflow } = await journey(1280, 'light', '0.3.0', 'desktop');
    expect(axe).toEqual(Object.fromEntries(Object.keys(axe).map((k) => [k, []])));
    expect(Object.keys(axe)).toEqual(expect.arrayContaining(['overview', 'service', 'rollback-confirm', 'workflow', 'audit', 'approvals', 'tenant', 'sign-in']));
    expect(csp).toEqual([]);
    expect(overflow).toEqual([]);
  }, 240_000);

  it('the same at 390 px, in dark mode', async () => {
    const { axe, csp, overflow } = await journey(390, 'dark', '0.4.0', 'phone');
    expect(axe).toEqual(Object.fromEntries(Object.keys(axe).map((k) => [k, []])));
    expect(csp).toEqual([]);
    expect(overflow).toEqual([]);
  }, 240_000);
});
