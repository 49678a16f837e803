/**
 * The base URL as a front door (issue 19 item 7): a browser (`Accept: text/html`) gets a small page with the links,
 * the sign-in command and the version, under a CSP that forbids framing and scripts; API clients keep the JSON 404;
 * `/docs/` redirects to `/docs`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acceptsHtml } from '../../rest/home.js';
import { SERVER_INFO } from '../../tools/mcp-edge.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

let pds: TestServer;
beforeAll(async () => {
  pds = await startTestServer();
});
afterAll(() => pds.stop());

const BROWSER = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';

describe('GET /', () => {
  it('gives a browser a page naming the docs, OpenAPI, the MCP URL, how to sign in, and the version', async () => {
    const res = await fetch(`${pds.url}/`, { headers: { accept: BROWSER } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('vary')).toMatch(/accept/i);
    const html = await res.text();
    expect(html).toContain('href="/docs"');
    expect(html).toContain('href="/openapi.yaml"');
    expect(html).toContain(`${pds.config.baseUrl}/mcp`);
    expect(html).toContain(`pds login --server ${pds.config.baseUrl}`);
    expect(html).toContain(SERVER_INFO.version);
    // Every link on the page answers.
    for (const [, href] of html.matchAll(/(?:href|src)="([^"]+)"/g)) {
      expect((await fetch(pds.url + href!)).status, href).toBe(200);
    }
  });

  it('carries a CSP without scripts that forbids framing, and X-Frame-Options: DENY; no inline script', async () => {
    const res = await fetch(`${pds.url}/`, { headers: { accept: 'text/html' } });
    const csp = res.headers.get('content-security-policy')!;
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("default-src 'none'");
    expect(csp).not.toMatch(/script-src|unsafe-inline/);
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    expect(await res.text()).not.toMatch(/<script|\son[a-z]+=/i);
  });

  it.each([
    ['no Accept', undefined],
    ['JSON', 'application/json'],
    ['curl\'s */*', '*/*'],
    ['text/html refused with q=0', 'text/html;q=0, application/json'],
  ])('answers an API client (%s) with the JSON 404 as before', async (_what, accept) => {
    const res = await fetch(`${pds.url}/`, { headers: accept ? { accept } : {} });
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await res.json()).toEqual({ error: expect.stringContaining('no such endpoint') });
  });
});

describe('/docs/', () => {
  it('redirects to /docs', async () => {
    const res = await fetch(`${pds.url}/docs/`, { redirect: 'manual' });
    expect(res.status).toBe(301);
    expect(res.headers.get('location')).toBe('/docs');
    expect((await fetch(`${pds.url}/docs/`)).url).toBe(`${pds.url}/docs`);
  });
});

describe('acceptsHtml', () => {
  it('takes text/html with a non-zero quality, never a wildcard', () => {
    expect(acceptsHtml(BROWSER)).toBe(true);
    expect(acceptsHtml('TEXT/HTML; q=0.5')).toBe(true);
    expect(acceptsHtml('text/*, */*')).toBe(false);
    expect(acceptsHtml('text/html;q=0')).toBe(false);
    expect(acceptsHtml(undefined)).toBe(false);
  });
});
