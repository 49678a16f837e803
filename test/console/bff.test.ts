/**
 * The console's server side (issue 21 items 1-2), over HTTP without a browser: `GET /` answers browsers with the
 * console and API clients with JSON as before; the one-time sign-in code works once, on the sandbox only, and is no
 * bearer token; the session cookie is `HttpOnly`, `SameSite=Lax`, scoped to `/console/api`, accepted there only (never
 * by `/api/v1/*` or `/mcp`), and every state-changing call through it needs the CSRF token and this origin; sign-out
 * ends it. Pages keep a CSP without inline scripts and with `frame-ancestors 'none'`.
 */
import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { gzipSync } from 'node:zlib';
import path from 'node:path';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueConsoleCode } from '../../auth/console-code.js';
import { loadOrCreateSecret } from '../../auth/self-issued.js';
import { buildConsole, type BuiltConsole } from '../helpers/console-build.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { closeAgents, send } from '../limits/http.js';

let built: BuiltConsole;
let pds: TestServer;
let secret: Uint8Array;

beforeAll(async () => {
  built = await buildConsole();
  pds = await startTestServer({}, { consoleDir: built.dir });
  secret = await loadOrCreateSecret(pds.config.jwtSecret, pds.config.dataDir);
  const created = await pds.api('root', 'POST', '/api/v1/operations/create-tenant/execute?wait_seconds=30', { team_name: 'acme', admins: 'alice' });
  expect(created.status).toBe(200);
}, 120_000);
afterAll(async () => {
  closeAgents();
  await pds?.stop();
});

/** A browser's request to the console: same origin, cookies as given. */
function fromConsole(path: string, init: { method?: string; cookie?: string; csrf?: string; origin?: string; body?: unknown; accept?: string } = {}) {
  const headers: Record<string, string> = { accept: init.accept ?? 'application/json', origin: init.origin ?? pds.url };
  if (init.cookie) headers.cookie = init.cookie;
  if (init.csrf) headers['x-csrf-token'] = init.csrf;
  if (init.body !== undefined) headers['content-type'] = 'application/json';
  return fetch(pds.url + path, { method: init.method ?? 'GET', headers, body: init.body === undefined ? undefined : JSON.stringify(init.body), redirect: 'manual' });
}

/** Sign `user` in with a fresh one-time code; the cookie to send back and the CSRF token. */
async function signIn(user: string): Promise<{ cookie: string; csrf: string; setCookie: string }> {
  const code = await issueConsoleCode(secret, pds.config.baseUrl, user);
  const res = await fromConsole('/console/api/session/code', { method: 'POST', body: { code } });
  expect(res.status).toBe(200);
  const body = (await res.json()) as { userId: string; csrfToken: string };
  expect(body.userId).toBe(user);
  const setCookie = res.headers.getSetCookie().find((c) => c.startsWith('pds_console='))!;
  return { cookie: setCookie.split(';')[0]!, csrf: body.csrfToken, setCookie };
}

describe('pages', () => {
  it('answers GET / with the console for a browser and the JSON 404 for an API client', async () => {
    const page = await fetch(`${pds.url}/`, { headers: { accept: 'text/html,application/xhtml+xml' } });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await page.text()).toMatch(/<script type="module" crossorigin src="\/console\/assets\/index-[\w-]+\.js"><\/script>/);
    const api = await fetch(`${pds.url}/`, { headers: { accept: 'application/json' } });
    expect(api.status).toBe(404);
    expect(await api.json()).toEqual({ error: expect.stringContaining('no such endpoint') });
    const curl = await fetch(`${pds.url}/`, { headers: { accept: '*/*' } });
    expect(curl.status).toBe(404);
  });

  it('serves every page with a CSP without inline scripts, never framed, and no Referer', async () => {
    for (const p of ['/', '/console/services/acme/web', '/console/sign-in', '/console/audit']) {
      const res = await fetch(pds.url + p, { headers: { accept: 'text/html' } });
      expect(res.status, p).toBe(200);
      const csp = res.headers.get('content-security-policy')!;
      expect(csp).toContain("script-src 'self'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).not.toContain('unsafe-inline');
      expect(res.headers.get('x-frame-options')).toBe('DENY');
      expect(res.headers.get('referrer-policy')).toBe('no-referrer');
    }
  });

  it('serves the built assets, immutable, and nothing else under /console/assets', async () => {
    const entry = Object.values(built.manifest).find((c) => c.isEntry)!;
    const js = await fetch(`${pds.url}/console/${entry.file}`);
    expect(js.status).toBe(200);
    expect(js.headers.get('content-type')).toMatch(/^text\/javascript/);
    expect(js.headers.get('cache-control')).toContain('immutable');
    expect((await fetch(`${pds.url}/console/assets/..%2F..%2Fpackage.json`)).status).toBe(404);
    expect((await fetch(`${pds.url}/console/assets/nope.js`)).status).toBe(404);
  });
});

describe('the build', () => {
  it('loads the overview with under 150 KB of JavaScript, gzipped (the entry and everything it imports statically)', async () => {
    const files = new Set<string>();
    const visit = (key: string) => {
      const chunk = built.manifest[key]!;
      if (files.has(chunk.file)) return;
      files.add(chunk.file);
      for (const imported of chunk.imports ?? []) visit(imported);
    };
    visit('index.html');
    let gzipped = 0;
    for (const file of files) gzipped += gzipSync(await readFile(path.join(built.dir, file))).length;
    expect([...files].every((f) => f.endsWith('.js'))).toBe(true);
    expect(gzipped).toBeGreaterThan(0);
    expect(gzipped).toBeLessThan(150 * 1024);
  });

  it('puts no inline script in the page (the CSP forbids them)', async () => {
    const html = await readFile(path.join(built.dir, 'index.html'), 'utf8');
    expect(html.match(/<script[^>]*>/g)).toEqual([expect.stringMatching(/src="\/console\/assets\//)]);
    expect(html).not.toMatch(/<style|\son[a-z]+=/i);
  });
});

describe('one-time sign-in code (sandbox)', () => {
  it('signs in once, with an HttpOnly SameSite=Lax cookie scoped to /console/api; a second use is refused', async () => {
    const code = await issueConsoleCode(secret, pds.config.baseUrl, 'alice');
    const first = await fromConsole('/console/api/session/code', { method: 'POST', body: { code } });
    expect(first.status).toBe(200);
    const cookie = first.headers.getSetCookie().find((c) => c.startsWith('pds_console='))!;
    expect(cookie).toMatch(/; path=\/console\/api/);
    expect(cookie).toMatch(/; httponly/i);
    expect(cookie).toMatch(/; samesite=lax/i);
    expect(cookie).not.toMatch(/; secure/i); // plain http on loopback; Secure when the base URL is https
    expect(first.headers.get('cache-control')).toBe('no-store');
    const again = await fromConsole('/console/api/session/code', { method: 'POST', body: { code } });
    expect(again.status).toBe(401);
    expect((await again.json()).error).toMatch(/used already/);
  });

  it('marks the cookie Secure (and __Secure-) when the base URL is https, as behind a TLS proxy', async () => {
    const behindTls = await startTestServer({ PDS_BASE_URL: 'https://pds.example.test', PDS_JWT_SECRET: 'x'.repeat(48) }, { consoleDir: built.dir });
    try {
      const code = await issueConsoleCode(new TextEncoder().encode('x'.repeat(48)), 'https://pds.example.test', 'alice');
      const res = await fetch(`${behindTls.url}/console/api/session/code`, {
        method: 'POST',
        headers: { origin: 'https://pds.example.test', 'content-type': 'application/json' },
        body: JSON.stringify({ code }),
      });
      expect(res.status).toBe(200);
      const cookie = res.headers.getSetCookie().find((c) => c.startsWith('__Secure-pds_console='))!;
      expect(cookie).toMatch(/; secure/i);
      expect(cookie).toMatch(/; httponly/i);
    } finally {
      await behindTls.stop();
    }
  });

  it('refuses an expired code, a bearer token as a code, and a code as a bearer token', async () => {
    const expired = await new SignJWT({ purpose: 'pds console sign-in' })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject('alice')
      .setIssuer(pds.config.baseUrl)
      .setAudience(`${pds.config.baseUrl}/console`)
      .setJti('old')
      .setExpirationTime(Math.floor(Date.now() / 1000) - 60)
      .sign(secret);
    const late = await fromConsole('/console/api/session/code', { method: 'POST', body: { code: expired } });
    expect(late.status).toBe(401);
    expect((await late.json()).error).toMatch(/expired/);
    const bearer = await fromConsole('/console/api/session/code', { method: 'POST', body: { code: await pds.token('alice') } });
    expect(bearer.status).toBe(401);
    const code = await issueConsoleCode(secret, pds.config.baseUrl, 'alice');
    const asToken = await fetch(`${pds.url}/api/v1/services`, { headers: { authorization: `Bearer ${code}` } });
    expect(asToken.status).toBe(401);
  });

  it('refuses a code posted from another site', async () => {
    const code = await issueConsoleCode(secret, pds.config.baseUrl, 'alice');
    const res = await fromConsole('/console/api/session/code', { method: 'POST', body: { code }, origin: 'https://evil.example' });
    expect(res.status).toBe(403);
    // The code was not spent by the refused request.
    expect((await fromConsole('/console/api/session/code', { method: 'POST', body: { code } })).status).toBe(200);
  });

  it('is refused by a pds that is not on the sandbox backend, and by the command there', async () => {
    const child = spawn(process.execPath, [path.resolve('bin/pds-src.js'), 'console', '--user', 'alice', '--no-browser'], {
      env: { ...process.env, PDS_BACKEND: 'kubernetes', PDS_DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none', PDS_DATA_DIR: pds.config.dataDir },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(stderr).toMatch(/sandbox backend only/);
    expect(code).toBe(1);
  });

  it('prints a sign-in URL whose code travels in the fragment', async () => {
    const child = spawn(process.execPath, [path.resolve('bin/pds-src.js'), 'console', '--user', 'alice', '--no-browser'], {
      env: { ...process.env, PDS_BASE_URL: pds.config.baseUrl, PDS_DATA_DIR: pds.config.dataDir, PDS_BACKEND: 'sandbox' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    child.stdout.on('data', (d) => (stdout += d));
    expect(await new Promise((resolve) => child.on('close', resolve))).toBe(0);
    const url = new URL(stdout.trim());
    expect(url.origin + url.pathname).toBe(`${pds.config.baseUrl}/console/sign-in`);
    expect(url.search).toBe('');
    const code = new URLSearchParams(url.hash.slice(1)).get('code')!;
    expect((await fromConsole('/console/api/session/code', { method: 'POST', body: { code } })).status).toBe(200);
  });
});

describe('the session cookie', () => {
  it('reads the API under /console/api as the signed-in person', async () => {
    const { cookie } = await signIn('alice');
    const res = await fromConsole('/console/api/tenants/acme', { cookie });
    expect(res.status).toBe(200);
    expect((await res.json()).tenant.name).toBe('acme');
    // bob is no member of acme: the session is his, not anyone's.
    const bob = await signIn('bob');
    expect((await fromConsole('/console/api/tenants/acme', { cookie: bob.cookie })).status).toBe(403);
  });

  it('never authenticates /api/v1 or /mcp', async () => {
    const { cookie } = await signIn('alice');
    const api = await fetch(`${pds.url}/api/v1/tenants/acme`, { headers: { cookie } });
    expect(api.status).toBe(401);
    const post = await fetch(`${pds.url}/api/v1/operations/preview-deploy/execute`, {
      method: 'POST',
      headers: { cookie, 'content-type': 'application/json' },
      body: JSON.stringify({ team_name: 'acme', component_name: 'web', image_tag: '0.1.0', ttl_hours: '1' }),
    });
    expect(post.status).toBe(401);
    const mcp = await fetch(`${pds.url}/mcp`, {
      method: 'POST',
      headers: { cookie, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(mcp.status).toBe(401);
  });

  it('takes no bearer token under /console/api: the cookie is the only way in there', async () => {
    const res = await fetch(`${pds.url}/console/api/tenants/acme`, { headers: { authorization: `Bearer ${await pds.token('alice')}` } });
    expect(res.status).toBe(401);
  });

  it('needs the CSRF token and this origin for every state-changing call', async () => {
    const { cookie, csrf } = await signIn('alice');
    const body = { team_name: 'acme', component_name: 'web', image_tag: '0.1.0', ttl_hours: '1' };
    const bare = await fromConsole('/console/api/operations/preview-deploy/execute', { method: 'POST', cookie, body });
    expect(bare.status).toBe(403);
    expect((await bare.json()).error).toMatch(/x-csrf-token/);
    const wrong = await fromConsole('/console/api/operations/preview-deploy/execute', { method: 'POST', cookie, body, csrf: 'x'.repeat(32) });
    expect(wrong.status).toBe(403);
    const crossSite = await fromConsole('/console/api/operations/preview-deploy/execute', { method: 'POST', cookie, body, csrf, origin: 'https://evil.example' });
    expect(crossSite.status).toBe(403);
    // With both, the call reaches the API, which answers as for alice (acme has no service web: 404).
    const through = await fromConsole('/console/api/operations/preview-deploy/execute', { method: 'POST', cookie, body, csrf });
    expect(through.status).toBe(404);
    expect(through.headers.get('pds-error-code')).toBe('NOT_FOUND');
  });

  it('refuses dot segments and encoded slashes instead of handing them on', async () => {
    const { cookie } = await signIn('alice');
    // Sent byte for byte: fetch would normalize them.
    for (const p of ['/console/api/../../mcp', '/console/api/%2e%2e/%2e%2e/mcp', '/console/api/tenants%2Facme', '/console/api//tenants', '/console/api/./tenants/acme']) {
      const res = await send(pds.url, { rawPath: p, headers: { cookie } });
      expect(res.status, p).toBe(404);
    }
  });

  it('ends at sign-out: the cookie is cleared and refused afterwards', async () => {
    const { cookie, csrf } = await signIn('alice');
    expect((await fromConsole('/console/api/session/sign-out', { method: 'POST', cookie })).status).toBe(403);
    const out = await fromConsole('/console/api/session/sign-out', { method: 'POST', cookie, csrf });
    expect(out.status).toBe(200);
    expect(out.headers.getSetCookie().find((c) => c.startsWith('pds_console='))).toMatch(/expires=Thu, 01 Jan 1970/i);
    expect((await fromConsole('/console/api/session', { cookie })).status).toBe(401);
    expect((await fromConsole('/console/api/tenants/acme', { cookie })).status).toBe(401);
  });
});
