/**
 * The console's OAuth sign-in in chromium (issue 21 items 2 and 5): a person opens pds, signs in at the identity
 * provider (the Dex stand-in, `test/fixtures/dex.ts`), allows the console on pds's consent page, lands on the
 * overview; the tokens stay on the server (the browser holds only the session cookie); sign-out revokes the refresh
 * token at pds's authorization server.
 */
import { createHash } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandboxPlatform } from '../../adapters/sandbox/index.js';
import { CONSOLE_CLIENT_ID, consoleClientSecret } from '../../auth/oauth/provider.js';
import { loadOrCreateSecret } from '../../auth/self-issued.js';
import type { Platform } from '../../core/ports.js';
import { startDexFixture, type DexFixture } from '../fixtures/dex.js';
import { buildConsole } from '../helpers/console-build.js';
import { cspViolations, launchChromium, seriousViolations } from '../helpers/chromium.js';
import { executeAndWait, startTestServer, type TestServer } from '../helpers/server.js';

const UI_MS = 45_000;

let browser: Browser;
let dex: DexFixture;
let pds: TestServer;
let platform: Platform;
/** Every console session record the store was asked to keep, as the server wrote it (a spy on the real store). */
const sessionsWritten: Array<Record<string, unknown>> = [];

beforeAll(async () => {
  const [built, launched] = await Promise.all([buildConsole(), launchChromium()]);
  browser = launched;
  dex = await startDexFixture('pds');
  dex.setClientSecret('dex-secret');
  dex.addUser('alice@example.com', 'alice-password', { email: 'alice@example.com', email_verified: true, name: 'Alice' });
  const dataDir = await mkdtemp(path.join(tmpdir(), 'pds-console-oauth-'));
  platform = await createSandboxPlatform({ dataDir, domain: 'apps.test', stepMs: 20, githubAppSlug: 'pds-test' });
  const upsert = platform.oauth.upsert.bind(platform.oauth);
  platform.oauth.upsert = async (kind, id, payload, ttl) => {
    if (kind === 'ConsoleSession') sessionsWritten.push(payload);
    return upsert(kind, id, payload, ttl);
  };
  pds = await startTestServer(
    { PDS_DATA_DIR: dataDir, PDS_AUTH_URL: dex.url, PDS_OIDC_AUDIENCE: 'pds', PDS_OIDC_CLIENT_SECRET: 'dex-secret' },
    { platform, consoleDir: built.dir },
  );
  await executeAndWait(pds, 'root', 'create-tenant', { team_name: 'acme', admins: 'alice@example.com' });
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await pds?.stop();
  await dex?.close();
});

/** Sign in through the Dex stand-in and pds's consent page, from the console's sign-in page. */
async function signInWithDex(page: Page, login: string, password: string): Promise<void> {
  await page.goto(`${pds.url}/`);
  await page.getByRole('heading', { name: 'Sign in to pds', level: 1 }).waitFor({ timeout: UI_MS });
  expect(await seriousViolations(page)).toEqual([]);
  await page.getByRole('link', { name: 'Sign in', exact: true }).click();
  // The identity provider's own login form.
  await page.locator('#login').waitFor({ timeout: UI_MS });
  expect(new URL(page.url()).origin).toBe(new URL(dex.url).origin);
  await page.locator('#login').fill(login);
  await page.locator('#password').fill(password);
  await page.locator('#submit-login').click();
  // pds's consent page names the console and what it may do.
  await page.getByRole('button', { name: 'Allow' }).waitFor({ timeout: UI_MS });
  expect(await page.textContent('body')).toContain('pds web console');
  await page.getByRole('button', { name: 'Allow' }).click();
  await page.getByRole('heading', { name: 'Overview', level: 1 }).waitFor({ timeout: UI_MS });
}

describe('OAuth sign-in', () => {
  let context: BrowserContext;
  afterAll(() => context?.close());

  it('signs a person in through the identity provider and the consent page; tokens stay on the server', async () => {
    context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    const csp = cspViolations(page);
    await signInWithDex(page, 'alice@example.com', 'alice-password');
    expect(page.url()).toBe(`${pds.url}/`);
    await page.getByText('alice@example.com', { exact: true }).first().waitFor({ timeout: UI_MS });
    await page.getByRole('link', { name: 'acme', exact: true }).waitFor({ timeout: UI_MS });
    // The browser holds one cookie of pds: the session id, HttpOnly, for /console/api only. No token anywhere.
    const cookies = (await context.cookies()).filter((c) => c.domain === '127.0.0.1' && c.name.startsWith('pds_console'));
    expect(cookies.map((c) => ({ name: c.name, path: c.path, httpOnly: c.httpOnly, sameSite: c.sameSite }))).toEqual([
      { name: 'pds_console', path: '/console/api', httpOnly: true, sameSite: 'Lax' },
    ]);
    const session = sessionsWritten.at(-1)!;
    expect(session).toMatchObject({ userId: 'alice@example.com', via: 'oauth' });
    for (const token of [session.accessToken, session.refreshToken] as string[]) {
      expect(token).toBeTruthy();
      expect(await page.evaluate(() => document.cookie + JSON.stringify(localStorage) + JSON.stringify(sessionStorage))).not.toContain(token);
    }
    expect(csp).toEqual([]);
  });

  it('renews an access token about to expire with the rotating refresh token, once for requests at the same time', async () => {
    const page = context.pages()[0]!;
    const id = (await context.cookies()).find((c) => c.name === 'pds_console')!.value;
    const key = createHash('sha256').update(id).digest('base64url');
    const before = (await platform.oauth.find('ConsoleSession', key))!;
    await platform.oauth.upsert('ConsoleSession', key, { ...before, accessExp: 0 }, 3600);
    const statuses = await page.evaluate(() => Promise.all([1, 2, 3].map(() => fetch('/console/api/tenants/acme').then((r) => r.status))));
    expect(statuses).toEqual([200, 200, 200]);
    const after = (await platform.oauth.find('ConsoleSession', key))!;
    expect(after.accessToken).not.toBe(before.accessToken);
    expect(after.refreshToken).not.toBe(before.refreshToken);
    expect(after.accessExp).toBeGreaterThan(Date.now() / 1000);
  });

  it('revokes the refresh token at sign-out', async () => {
    const page = context.pages()[0]!;
    const { refreshToken } = sessionsWritten.at(-1)! as { refreshToken: string };
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in to pds', level: 1 }).waitFor({ timeout: UI_MS });
    const secret = await loadOrCreateSecret(pds.config.jwtSecret, pds.config.dataDir);
    const res = await fetch(`${pds.url}/oauth/token`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`${CONSOLE_CLIENT_ID}:${consoleClientSecret(secret)}`).toString('base64')}`,
      },
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: refreshToken, resource: pds.config.baseUrl }),
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: 'invalid_grant' });
    expect(await page.evaluate(() => fetch('/console/api/session').then((r) => r.status))).toBe(401);
  });

  it('sends a sign-in that comes back without its browser binding to the sign-in page with the reason', async () => {
    const page = await context.newPage();
    await page.goto(`${pds.url}/console/callback?code=forged&state=forged`);
    await page.getByRole('heading', { name: 'Sign in to pds', level: 1 }).waitFor({ timeout: UI_MS });
    await page.getByRole('alert').getByText(/started in another browser/).waitFor({ timeout: UI_MS });
    expect(page.url()).toBe(`${pds.url}/console/sign-in`);
  });
});
