/**
 * Issue 7 item 1: no spelling of a path reaches a handler without authentication or outside the 300/min limit.
 * Every route of the app is walked from the routers' own route table (so a route added later is covered), each in
 * upper case, with a trailing slash, doubled slashes, `%2F`/`%2f`/`%2e` and other percent-encodings, dot segments
 * and `;param` suffixes, sent byte for byte (fetch would normalize them).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRouteLimit } from '../../rest/ratelimit.js';
import { mountedRoutes } from '../../rest/mounted-routes.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { closeAgents, send, type Reply } from '../limits/http.js';

/** Routes anyone may call; every other route must refuse a request without a token. */
const PUBLIC = new Set([
  '/healthz',
  '/readyz',
  '/openapi.yaml',
  '/docs',
  '/docs/', // redirects to /docs
  '/docs/init.js',
  '/docs/assets/:file',
  '/icon.svg',
  '/.well-known/oauth-protected-resource',
  '/.well-known/oauth-protected-resource/mcp',
  '/.well-known/oauth-authorization-server',
  '/.well-known/openid-configuration',
  '/oauth/jwks',
  '/oauth/device',
]);

/**
 * The OAuth authorization server's protocol and sign-in routes (issue 12): public too, but they take parameters, so a
 * request without them is answered with an OAuth error (400) or an expired-sign-in page — never 401, never 5xx. Also
 * `/`, whose answer depends on Accept.
 */
const PUBLIC_PROTOCOL = new Set([
  '/oauth/authorize',
  '/oauth/authorize/:uid',
  '/oauth/token',
  '/oauth/register',
  '/oauth/revoke',
  '/oauth/device/auth',
  '/oauth/device',
  '/oauth/device/:uid',
  '/oauth/interaction/:uid',
  '/oauth/interaction/:uid/sign-in/:upstream',
  '/oauth/interaction/:uid/consent',
  '/oauth/interaction/:uid/abort',
  '/oauth/callback/:upstream',
  '/oauth/interaction/:uid/callback/:upstream',
  // The front door (issue 19 item 7): a page for a browser's Accept, the JSON 404 for API clients; never 401.
  '/',
  // The web console (issue 21): its pages and files (a JSON 404 while it is not built, as in these servers), the
  // start and end of its OAuth sign-in, and the exchange of a one-time code, which takes no cookie yet. Its session
  // routes and /console/api/* need the session cookie: without one they are 401 like every protected route.
  '/console',
  '/console/*page',
  '/console/assets/:file',
  '/console/sign-in/oauth',
  '/console/callback',
  '/console/api/session/code',
]);

/** A concrete path for a route template: every `:param` becomes a plausible value. */
function concrete(template: string): string {
  return template.replace(/:([A-Za-z_]\w*)/g, (_m, name: string) => (name === 'file' ? 'swagger-ui.css' : 'acme'));
}

/** Every other spelling of `path` (which starts with `/`), without duplicates or the path itself. */
export function spellings(path: string): string[] {
  const segments = path.split('/').slice(1);
  const join = (parts: string[]) => `/${parts.join('/')}`;
  const out = new Set<string>([
    path.toUpperCase(),
    `${path}/`,
    `/${path}`,
    `${path}//`,
    `${path};x=1`,
    `${path};`,
    `${path}%2F`,
    `${path}/.`,
    `${path}/%2e`,
    `/%2e${path}`,
    `/.${path}`,
    `/x/..${path}`,
    `/x/%2e%2e${path}`,
    `/x%2F..${path}`,
  ]);
  segments.forEach((segment, i) => {
    const with_ = (replacement: string) => join(segments.map((s, j) => (j === i ? replacement : s)));
    if (segment) {
      out.add(with_(segment[0]!.toUpperCase() + segment.slice(1)));
      out.add(with_(segment.toUpperCase()));
      out.add(with_(`${segment};x`));
      out.add(with_(`%${segment.charCodeAt(0).toString(16)}${segment.slice(1)}`));
      out.add(with_(`%${segment.charCodeAt(0).toString(16).toUpperCase()}${segment.slice(1)}`));
      if (segment.includes('.')) out.add(with_(segment.replace('.', '%2e')));
    }
    if (i > 0) {
      const before = segments.slice(0, i);
      const after = segments.slice(i);
      out.add(`${join(before)}//${after.join('/')}`);
      out.add(`${join(before)}%2F${after.join('/')}`);
      out.add(`${join(before)}%2f${after.join('/')}`);
      out.add(`${join(before)}/./${after.join('/')}`);
      out.add(`${join(before)}/%2e/${after.join('/')}`);
      out.add(`${join(before)}/x/../${after.join('/')}`);
      out.add(`${join(before)}/x/%2e%2e/${after.join('/')}`);
      out.add(`${join(before)}%5C${after.join('/')}`);
    }
  });
  out.delete(path);
  return [...out];
}

let pds: TestServer;
let limited: TestServer;

beforeAll(async () => {
  pds = await startTestServer();
  // A second pds with a route limit of 3 per minute, to see that every spelling that reaches a handler is counted.
  limited = await startTestServer({}, { routeLimit: createRouteLimit({ trustProxy: false, max: 3 }) });
});

afterAll(async () => {
  closeAgents();
  await pds.stop();
  await limited.stop();
});

/** One request without a token, with a JSON body for POST. */
function anonymous(server: TestServer, method: string, rawPath: string): Promise<Reply> {
  return send(server.url, { method, rawPath, ...(method === 'POST' ? { body: {} } : {}) });
}

function describeReply(method: string, path: string, reply: Reply): string {
  return `${method} ${path} → ${reply.status} ${reply.body.slice(0, 200)}`;
}

describe('path spelling', () => {
  it('reads the route table from the routers, public and protected routes alike', () => {
    const paths = mountedRoutes(pds.app).map((r) => r.path);
    expect(paths).toEqual(expect.arrayContaining(['/healthz', '/api/v1/tenants', '/api/v1/tenants/:name', '/mcp']));
    expect(paths.length).toBeGreaterThan(20);
  });

  it('refuses every protected route without a token (401), and serves only the public ones', async () => {
    const wrong: string[] = [];
    for (const route of mountedRoutes(pds.app)) {
      const path = concrete(route.path);
      for (const method of route.methods.filter((m) => m === 'GET' || m === 'POST')) {
        const reply = await anonymous(pds, method, path);
        const expected = PUBLIC_PROTOCOL.has(route.path)
          ? reply.status !== 401 && reply.status < 500
          : PUBLIC.has(route.path)
            ? reply.status < 400
            : reply.status === 401;
        if (!expected) wrong.push(describeReply(method, path, reply));
      }
    }
    expect(wrong).toEqual([]);
  });

  it('answers every other spelling of every route with 401, 404 or 405, never a handler and never 5xx', async () => {
    const wrong: string[] = [];
    let sent = 0;
    for (const route of mountedRoutes(pds.app)) {
      const isProtocol = PUBLIC_PROTOCOL.has(route.path);
      const isPublic = PUBLIC.has(route.path) || isProtocol;
      for (const method of route.methods.filter((m) => m === 'GET' || m === 'POST')) {
        for (const spelling of spellings(concrete(route.path))) {
          const reply = await anonymous(pds, method, spelling);
          sent++;
          const refused = [401, 404, 405].includes(reply.status);
          // A public route may serve a spelling that still names it (e.g. an encoded asset name); it may never fail.
          const fine = isPublic ? reply.status < 500 : refused;
          // Sign-in routes answer a browser: their refusals are pages (or OAuth's JSON errors, which the pattern takes).
          const jsonError = reply.status < 400 || /^\{"error":"[^"]/.test(reply.body) || (isProtocol && reply.body.startsWith('<!DOCTYPE html>'));
          if (!fine || !jsonError) wrong.push(describeReply(method, spelling, reply));
        }
      }
    }
    expect(sent).toBeGreaterThan(500);
    expect(wrong).toEqual([]);
  });

  it('refuses POST /mcp spelled differently without a token', async () => {
    const rpc = { jsonrpc: '2.0', id: 1, method: 'tools/list' };
    const headers = { accept: 'application/json, text/event-stream' };
    for (const rawPath of ['/mcp', ...spellings('/mcp')]) {
      const reply = await send(pds.url, { method: 'POST', rawPath, body: rpc, headers });
      expect([401, 404], describeReply('POST', rawPath, reply)).toContain(reply.status);
    }
  });

  it('counts every spelling that reaches a handler against the route limit', async () => {
    const headers = { authorization: `Bearer ${await limited.token('root')}` };
    let served = 0;
    for (const rawPath of ['/api/v1/operations', ...spellings('/api/v1/operations')]) {
      // From 127.0.0.2: only exactly 127.0.0.1 and ::1 are exempt from the route limit.
      const reply = await send(limited.url, { rawPath, headers, from: '127.0.0.2' });
      expect(reply.status, describeReply('GET', rawPath, reply)).toBeLessThan(500);
      if (reply.status === 200) served++;
    }
    expect(served).toBeLessThanOrEqual(3);
  });
});
