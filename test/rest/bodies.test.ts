/**
 * Issue 7 item 11, the REST side: a body pds cannot use is a 4xx `{ "error" }` saying what was wrong — garbage under
 * `Content-Encoding: gzip`, invalid JSON, a body that is not JSON, prototype keys, too large — never a 500 and never
 * a stack in the log; a 405 always lists the allowed methods in `Allow`.
 */
import { connect } from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordingLogger, type RecordingLogger } from '../helpers/log.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { closeAgents, send, type Reply } from '../limits/http.js';

let pds: TestServer;
let logger: RecordingLogger;
let auth: Record<string, string>;

beforeAll(async () => {
  logger = recordingLogger();
  pds = await startTestServer({}, { log: logger.log });
  auth = { authorization: `Bearer ${await pds.token('root')}` };
});

afterAll(async () => {
  closeAgents();
  await pds.stop();
});

const SYNC = '/api/v1/repos/sync';
const EXECUTE = '/api/v1/operations/create-tenant/execute';

function post(path: string, headers: Record<string, string>, rawBody?: string | Buffer): Promise<Reply> {
  return send(pds.url, { method: 'POST', rawPath: path, headers, rawBody });
}

/** The `{ error }` of a reply, failing when the body has any other shape. */
function errorOf(reply: Reply): string {
  const body = reply.json();
  expect(Object.keys(body)).toEqual(['error']);
  expect(typeof body.error).toBe('string');
  return body.error;
}

describe('bodies pds cannot use', () => {
  it('answers garbage sent as gzip with 400 and logs nothing', async () => {
    const before = logger.lines.length;
    const reply = await post(SYNC, { ...auth, 'content-type': 'application/json', 'content-encoding': 'gzip' }, 'this is not gzip at all');
    expect(reply.status).toBe(400);
    expect(errorOf(reply)).toMatch(/Content-Encoding "gzip"/);
    const truncated = await post(SYNC, { ...auth, 'content-type': 'application/json', 'content-encoding': 'gzip' }, gzipSync('{"team":"acme"}').subarray(0, 12));
    expect(truncated.status).toBe(400);
    const unknown = await post(SYNC, { ...auth, 'content-type': 'application/json', 'content-encoding': 'zstd-ish' }, 'x');
    expect(unknown.status).toBe(415);
    errorOf(unknown);
    expect(logger.lines.slice(before).filter((l) => l.level === 'error')).toEqual([]);
  });

  it('reads a real gzip body', async () => {
    const reply = await post(SYNC, { ...auth, 'content-type': 'application/json', 'content-encoding': 'gzip' }, gzipSync('{"team":"nope"}'));
    expect(reply.status).toBe(404); // read and validated: the tenant does not exist
  });

  it('does not read a body for a caller without a token', async () => {
    const reply = await post(SYNC, { 'content-type': 'application/json', 'content-encoding': 'gzip' }, 'garbage');
    expect(reply.status).toBe(401);
  });

  it('prefixes a JSON syntax error with "invalid JSON body: "', async () => {
    for (const text of ['{"team":', '{team: "acme"}', '"acme"', 'nul']) {
      const reply = await post(SYNC, { ...auth, 'content-type': 'application/json' }, text);
      expect(reply.status, text).toBe(400);
      expect(errorOf(reply), text).toMatch(/^invalid JSON body: ./);
    }
  });

  it('answers 415 naming application/json for a body sent without it or with another type', async () => {
    for (const type of [undefined, 'text/plain', 'application/x-www-form-urlencoded', 'application/jsonx']) {
      const headers = { ...auth, ...(type ? { 'content-type': type } : {}) };
      const reply = await post(SYNC, headers, '{"team":"acme"}');
      expect(reply.status, String(type)).toBe(415);
      expect(errorOf(reply), String(type)).toContain('application/json');
    }
  });

  it('still validates a POST without any body (the missing fields are the point)', async () => {
    const reply = await post(SYNC, { ...auth });
    expect(reply.status).toBe(400);
    expect(errorOf(reply)).toMatch(/team: is required/);
  });

  it('accepts application/json with a charset', async () => {
    const reply = await post(SYNC, { ...auth, 'content-type': 'application/json; charset=utf-8' }, '{"team":"nope"}');
    expect(reply.status).toBe(404);
  });

  it('refuses a body that is JSON but not an object', async () => {
    const reply = await post(SYNC, { ...auth, 'content-type': 'application/json' }, '[{"team":"acme"}]');
    expect(reply.status).toBe(400);
    expect(errorOf(reply)).toMatch(/JSON object/);
  });

  it('names a __proto__, constructor or prototype key, at any depth, in a 400', async () => {
    const cases: [string, string, string][] = [
      [SYNC, '{"team":"acme","__proto__":{"admin":true}}', '__proto__'],
      [SYNC, '{"team":"acme","constructor":{"prototype":{"admin":true}}}', 'constructor'],
      [EXECUTE, '{"team_name":"acme","constructor":"x"}', 'constructor'],
      ['/api/v1/operations/create-tenant/execute', '{"team_name":"acme","prototype":"x"}', 'prototype'],
      ['/api/v1/scaffold', '{"team_name":"acme","file_contents":{"constructor":"x"}}', 'file_contents.constructor'],
    ];
    for (const [path, body, field] of cases) {
      const reply = await post(path, { ...auth, 'content-type': 'application/json' }, body);
      expect(reply.status, body).toBe(400);
      expect(errorOf(reply), body).toContain(field);
    }
    const query = await send(pds.url, { rawPath: '/api/v1/services?constructor=x', headers: auth });
    expect(query.status).toBe(400);
    expect(errorOf(query)).toContain('constructor');
  });

  it('answers 413 {error} for a body over 1 MiB, compressed or not', async () => {
    const big = JSON.stringify({ team: 'x'.repeat(1_100_000) });
    const plain = await post(SYNC, { ...auth, 'content-type': 'application/json' }, big);
    expect(plain.status).toBe(413);
    errorOf(plain);
    closeAgents(); // the server stops reading an oversized body; start on fresh connections
    const bomb = await post(SYNC, { ...auth, 'content-type': 'application/json', 'content-encoding': 'gzip' }, gzipSync(big));
    expect(bomb.status).toBe(413);
    errorOf(bomb);
    closeAgents();
  });
});

describe('405', () => {
  it('lists the allowed methods in Allow, with a JSON body, for API, MCP and public routes', async () => {
    const cases: [string, string, string[]][] = [
      ['DELETE', '/api/v1/tenants', ['GET']],
      ['PUT', '/api/v1/operations/create-tenant/execute', ['POST']],
      ['GET', '/mcp', ['POST']],
      ['POST', '/healthz', ['GET']],
      ['PROPFIND', '/api/v1/audit', ['GET']],
    ];
    for (const [method, path, allowed] of cases) {
      const reply = await send(pds.url, { method, rawPath: path, headers: auth });
      expect(reply.status, `${method} ${path}`).toBe(405);
      const allow = String(reply.headers.allow ?? '').split(/,\s*/);
      expect(allow, `${method} ${path}`).toEqual(expect.arrayContaining(allowed));
      expect(allow, `${method} ${path}`).not.toContain(method);
      errorOf(reply);
    }
  });
});

describe('requests Koa never sees', () => {
  /** Send raw bytes on a new connection; the whole answer as text. */
  function raw(bytes: string): Promise<string> {
    return new Promise((resolve, reject) => {
      const socket = connect(pds.port, '127.0.0.1', () => socket.write(bytes));
      let text = '';
      socket.on('data', (chunk) => (text += chunk.toString('latin1')));
      socket.on('end', () => resolve(text));
      socket.on('error', reject);
    });
  }

  it('answers headers over 16 KiB with 431 { error }', async () => {
    const reply = await send(pds.url, { rawPath: '/api/v1/tenants', headers: { authorization: `Bearer ${'a'.repeat(20_000)}` } });
    expect(reply.status).toBe(431);
    errorOf(reply);
    closeAgents();
  });

  it('answers a malformed request line with 400 { error }, and HEAD without a body', async () => {
    expect(await raw('GET /a b c HTTP/1.1\r\n\r\n')).toMatch(/^HTTP\/1\.1 400 [^]*\r\n\r\n\{"error":"malformed HTTP request/);
    const head = await raw(`HEAD /healthz HTTP/1.1\r\nHost: x\r\nX: ${'a'.repeat(20_000)}\r\n\r\n`);
    expect(head).toMatch(/^HTTP\/1\.1 431 /);
    expect(head.endsWith('\r\n\r\n')).toBe(true);
  });

  it('answers CONNECT with 405 { error } instead of dropping the connection', async () => {
    const text = await raw('CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n');
    expect(text).toMatch(/^HTTP\/1\.1 405 /);
    expect(text).toMatch(/\r\nAllow: /);
    expect(text).toMatch(/\{"error":"method CONNECT is not allowed/);
  });
});
