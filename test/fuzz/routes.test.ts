/**
 * Fuzz every route of the app (from the routers' own route table) with mutated paths, methods, headers and bodies:
 * other spellings and encodings, odd path parameters, missing/garbled/huge Authorization, wrong content types and
 * encodings, garbage and oversized bodies, forged X-Forwarded-For. Never a 5xx; every error is `{ "error" }`
 * (HEAD aside, which has no body); a refused request changes nothing.
 */
import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mountedRoutes } from '../../rest/mounted-routes.js';
import { send } from '../limits/http.js';
import { firstDifference, runParameters, settle, snapshot, startWorld, timeBox, type World } from './harness.js';
import { ODD_NAMES, show } from './mutations.js';

let world: World;
beforeAll(async () => {
  world = await startWorld();
});
afterAll(() => world.close());

/** A path for a route template, each `:param` one of a few real names or an odd one, encoded or not. */
const concretePath = (template: string) =>
  fc
    .array(fc.oneof(fc.constantFrom('alpha', 'bravo', 'web', 'vault', 'deploy-service', 'swagger-ui.css'), fc.constantFrom(...ODD_NAMES), fc.string({ maxLength: 8 })), { minLength: 4, maxLength: 4 })
    .chain((values) => fc.boolean().map((encode) => {
      let i = 0;
      return template.replace(/:[A-Za-z_]\w*/g, () => {
        const value = values[i++ % values.length]!;
        // Raw: ASCII punctuation as it is (the point), but what an HTTP client cannot put in a request line encoded.
        return encode ? encodeURIComponent(value) : value.replace(/[^\x21-\x7e]|[#?]/gu, (c) => encodeURIComponent(c));
      });
    }));

/** Spelling mutations of a path; several may apply. */
const SPELLINGS: ((path: string) => string)[] = [
  (p) => p.toUpperCase(),
  (p) => p.replace(/\/([a-z])/, (_m, c: string) => `/${c.toUpperCase()}`),
  (p) => `${p}/`,
  (p) => `/${p}`,
  (p) => p.replace(/\//g, '//'),
  (p) => p.replace(/\/(?=[^/]*$)/, '%2F'),
  (p) => p.replace(/\/(?=[^/]*$)/, '%2f'),
  (p) => `${p};x=1`,
  (p) => p.replace(/\/([^/]+)/, '/$1;p'),
  (p) => p.replace(/\/([^/]+)\//, '/$1/./'),
  (p) => p.replace(/\/([^/]+)\//, '/$1/%2e/'),
  (p) => p.replace(/\/([^/]+)\//, '/$1/x/../'),
  (p) => p.replace(/\/([^/]+)\//, '/$1/x/%2e%2e/'),
  (p) => p.replace(/[a-z]/, (c) => `%${c.charCodeAt(0).toString(16)}`),
  (p) => `${p}?${'q'.repeat(20_000)}=1`,
  (p) => `${p}?constructor=1&__proto__=2&lines=-1&since=999y`,
];

const authorization = (world: World) =>
  fc.constantFrom<string | undefined>(
    undefined, world.auth.root, world.auth.mel, 'Bearer', 'Bearer  ', 'Basic dXNlcjpwYXNz', `bearer ${world.auth.root.slice(7)}`,
    `${world.auth.root} trailing`, `Bearer ${'a'.repeat(20_000)}`, 'Bearer ghp_fuzzUnknownToken000000000000000000',
    'Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJyb290In0.', 'Bearer a.b.c',
  );

const BODIES: (string | Buffer | undefined)[] = [
  undefined, '{}', '[]', 'null', '"x"', 'garbage', '{"team":', '{"__proto__":{"admin":true}}', '{"constructor":{"prototype":{}}}',
  gzipSync('{"team":"alpha"}'), Buffer.from([0xff, 0xfe, 0x00, 0x81]), `{"team":"${'x'.repeat(1_100_000)}"}`,
];

const request = (world: World, route: { methods: string[]; path: string }) =>
  fc.record({
    // CONNECT aside: Node's client hands its answer to a `connect` listener, not to a response (bodies.test.ts has it).
    method: fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...route.methods.filter((m) => m !== 'CONNECT')) }, { weight: 1, arbitrary: fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD') }),
    path: fc.tuple(concretePath(route.path), fc.subarray(SPELLINGS, { maxLength: 2 })).map(([path, spell]) => spell.reduce((p, f) => f(p), path)),
    authorization: authorization(world),
    contentType: fc.constantFrom(undefined, 'application/json', 'application/json; charset=latin1', 'text/plain', 'multipart/form-data; boundary=x', 'a/b/c'),
    contentEncoding: fc.constantFrom(undefined, 'gzip', 'deflate', 'br', 'identity', 'compress'),
    forwardedFor: fc.constantFrom(undefined, '127.0.0.1', 'garbage', '203.0.113.9, 127.0.0.1'),
    body: fc.constantFrom(...BODIES),
  });

/** A JSON-RPC error response whose message says something. */
function isJsonRpcError(body: string): boolean {
  try {
    const parsed = JSON.parse(body) as { jsonrpc?: unknown; error?: { code?: unknown; message?: unknown } };
    return parsed.jsonrpc === '2.0' && typeof parsed.error?.code === 'number' && typeof parsed.error.message === 'string' && parsed.error.message.length >= 8;
  } catch {
    return false;
  }
}

describe('every route, mutated', () => {
  it('lists routes to fuzz', () => {
    expect(mountedRoutes(world.pds.app).length).toBeGreaterThan(20);
  });

  it('never answers 5xx, always answers errors with { error }, and changes nothing when it refuses', async () => {
    const routes = mountedRoutes(world.pds.app);
    const box = timeBox(10_000);
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...routes).chain((route) => request(world, route)), async (r) => {
        if (box.expired()) return;
        const before = await snapshot(world);
        const headers: Record<string, string> = {};
        if (r.authorization) headers.authorization = r.authorization;
        if (r.contentType) headers['content-type'] = r.contentType;
        if (r.contentEncoding) headers['content-encoding'] = r.contentEncoding;
        if (r.forwardedFor) headers['x-forwarded-for'] = r.forwardedFor;
        // HEAD carries no body: with one, Node's client reads the server's answer to the leftover bytes as a protocol error.
        const rawBody = r.method === 'HEAD' ? undefined : r.body;
        const reply = await send(world.pds.url, { method: r.method, rawPath: r.path, headers, rawBody, ownConnection: true });
        const where = `${show({ ...r, body: r.body === undefined ? undefined : String(r.body).slice(0, 40) })} → ${reply.status} ${reply.body.slice(0, 200)}`;
        expect(reply.status, where).toBeLessThan(500);
        if (reply.status >= 400) {
          // /mcp itself answers protocol-level refusals as JSON-RPC errors, as the MCP transport specification wants.
          const jsonRpc = r.path.split('?')[0] === '/mcp' && isJsonRpcError(reply.body);
          if (r.method !== 'HEAD' && !jsonRpc) expect(reply.body, where).toMatch(/^\{"error":"[^"]{8,}/);
          const after = await snapshot(world);
          expect(after === before, `${where}: a refused request changed the platform\n${firstDifference(before, after)}`).toBe(true);
        } else if (r.method === 'POST') {
          await settle(world);
        }
      }),
      runParameters(400),
    );
  });
});
