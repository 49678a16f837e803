/**
 * Four eyes in the console (issue 21 item 5, with issue 20's approvals): bob, a member, deploys a tag that acme's
 * policy holds for an admin's approval and sees it wait; alice, the admin, a second person in another browser,
 * approves it with a comment on the approvals page; bob's page follows the workflow to the end. A second deploy alice
 * rejects with a reason fails without running. axe-core checks the approvals page with a decision pending.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandboxPlatform } from '../../adapters/sandbox/index.js';
import { allTools } from '../../tools/registry.js';
import { issueConsoleCode } from '../../auth/console-code.js';
import { loadOrCreateSecret } from '../../auth/self-issued.js';
import { buildConsole } from '../helpers/console-build.js';
import { cspViolations, launchChromium, screenshot, seriousViolations } from '../helpers/chromium.js';
import { executeAndWait, registerRepository, startTestServer, waitForWorkflow, type TestServer } from '../helpers/server.js';

const UI_MS = 45_000;
/**
 * Whether this pds has issue 20's approvals (`platform_list_approvals`); until that work is merged, the journey waits
 * for it rather than failing on an API that does not exist yet.
 */
const hasApprovals = allTools.some((tool) => tool.name === 'platform_list_approvals');

let browser: Browser;
let pds: TestServer;
let secret: Uint8Array;
const contexts: BrowserContext[] = [];

beforeAll(async () => {
  if (!hasApprovals) return;
  const [built, launched] = await Promise.all([buildConsole(), launchChromium()]);
  browser = launched;
  const dataDir = await mkdtemp(path.join(tmpdir(), 'pds-console-approvals-'));
  const platform = await createSandboxPlatform({ dataDir, domain: 'apps.test', stepMs: 100, githubAppSlug: 'pds-test' });
  pds = await startTestServer({ PDS_DATA_DIR: dataDir }, { platform, consoleDir: built.dir });
  secret = await loadOrCreateSecret(pds.config.jwtSecret, pds.config.dataDir);
  await executeAndWait(pds, 'root', 'create-tenant', { team_name: 'acme', admins: 'alice', members: 'bob' });
  await registerRepository(pds, 'alice', 'acme', 'acme/web');
  await executeAndWait(pds, 'alice', 'deploy-service', { action: 'onboard', team_name: 'acme', component_name: 'web', dockerfile_repo: 'acme/web', git_tag: '0.1.0', port: '8080' });
  const policy = await pds.api('alice', 'PUT', '/api/v1/tenants/acme/policy', {
    approvals: { operations: ['deploy-service'], required: 1, approvers: ['role:admin'], expiresAfter: '1h' },
  });
  expect(policy.status).toBe(200);
}, 180_000);

afterAll(async () => {
  for (const context of contexts) await context.close();
  await browser?.close();
  await pds?.stop();
});

/** A browser of its own for `user`, signed in with a one-time link. */
async function signedIn(user: string): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  contexts.push(context);
  const page = await context.newPage();
  await page.goto(`${pds.url}/console/sign-in#code=${await issueConsoleCode(secret, pds.config.baseUrl, user)}`);
  await page.getByRole('heading', { name: 'Overview', level: 1 }).waitFor({ timeout: UI_MS });
  return page;
}

/** Deploy `tag` of acme/web from the service page; returns the workflow's name. */
async function deploy(page: Page, tag: string): Promise<string> {
  await page.goto(`${pds.url}/console/services/acme/web`);
  await page.getByLabel('Git tag').fill(tag);
  await page.getByRole('button', { name: 'Deploy', exact: true }).click();
  const link = page.locator('.live a', { hasText: /^deploy-service-/ }).first();
  await link.waitFor({ timeout: UI_MS });
  return (await link.textContent())!;
}

describe.runIf(hasApprovals)('approvals in the console', () => {
  it('a member deploys, the deploy waits; an admin approves it in another browser; the member sees it run to the end', async () => {
    const bob = await signedIn('bob');
    const bobCsp = cspViolations(bob);
    const name = await deploy(bob, '0.2.0');
    await bob.locator('.live[data-phase="awaiting-approval"]').waitFor({ timeout: UI_MS });

    // Bob sees it among what he requested, and cannot decide it.
    const mine = await signedInApprovals(bob);
    const card = mine.locator('section', { has: mine.getByRole('heading', { name: 'What you requested' }) }).locator('li.card', { hasText: name });
    await card.waitFor({ timeout: UI_MS });
    expect(await card.getByRole('button', { name: 'Approve' }).count()).toBe(0);

    const alice = await signedIn('alice');
    const aliceCsp = cspViolations(alice);
    await alice.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Approvals' }).click();
    const pending = alice.locator('section', { has: alice.getByRole('heading', { name: 'For you to decide' }) }).locator('li.card', { hasText: name });
    await pending.waitFor({ timeout: UI_MS });
    expect(await pending.textContent()).toContain('Requested by bob');
    expect(await seriousViolations(alice)).toEqual([]);
    await screenshot(alice, 'desktop-approvals');
    await pending.getByLabel(/^Comment/).fill('checked the diff');
    await pending.getByRole('button', { name: 'Approve' }).click();
    await alice.getByRole('status').filter({ hasText: /^Approved/ }).waitFor({ timeout: UI_MS });

    // Bob's workflow page follows it to the end, and shows who approved.
    await bob.goto(`${pds.url}/console/workflows/${name}`);
    await bob.locator('.live[data-phase="succeeded"]').waitFor({ timeout: UI_MS });
    await bob.getByRole('heading', { name: 'Approval' }).waitFor({ timeout: UI_MS });
    expect(await bob.locator('section', { has: bob.getByRole('heading', { name: 'Approval' }) }).textContent()).toContain('alice');
    expect((await waitForWorkflow(pds, 'bob', name, 60_000)).audit.status).toBe('succeeded');
    expect(bobCsp).toEqual([]);
    expect(aliceCsp).toEqual([]);
  }, 240_000);

  it('a rejection with a reason fails the deploy without running it', async () => {
    const bob = contexts[0]!.pages()[0]!;
    const name = await deploy(bob, '0.3.0');
    const alice = contexts[1]!.pages()[0]!;
    await alice.goto(`${pds.url}/console/approvals`);
    const pending = alice.locator('li.card', { hasText: name });
    await pending.waitFor({ timeout: UI_MS });
    // Rejecting needs a reason: the button waits for one.
    expect(await pending.getByRole('button', { name: 'Reject' }).isDisabled()).toBe(true);
    await pending.getByLabel(/^Comment/).fill('not during the sale');
    await pending.getByRole('button', { name: 'Reject' }).click();
    await alice.getByRole('status').filter({ hasText: /^Rejected/ }).waitFor({ timeout: UI_MS });
    const settled = await waitForWorkflow(pds, 'bob', name, 60_000);
    expect(settled.audit.status).toBe('failed');
    expect(settled.steps.every((s: { status: string }) => s.status !== 'succeeded')).toBe(true);
  }, 240_000);
});

/** Open the approvals page in `page`. */
async function signedInApprovals(page: Page): Promise<Page> {
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Approvals' }).click();
  await page.getByRole('heading', { name: 'Approvals', level: 1 }).waitFor({ timeout: UI_MS });
  return page;
}
