/**
 * Conditional reads (issue 23 item 2): every REST read answers with an ETag taken from the body this caller gets, and
 * `If-None-Match` with that tag gets a `304` without a body — after every gate (authentication, access, the tool's
 * invocation) has run. A change of the data, or of what the caller may see, changes the tag.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { etagOf, matchesEtag } from '../../rest/routes.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

let pds: TestServer;

beforeAll(async () => {
  pds = await startTestServer({ PDS_ADMINS: 'root' });
});

afterAll(async () => {
  await pds?.stop();
});

async function get(user: string | undefined, path: string, ifNoneMatch?: string) {
  const headers: Record<string, string> = {};
  if (user) headers.authorization = `Bearer ${await pds.token(user)}`;
  if (ifNoneMatch) headers['if-none-match'] = ifNoneMatch;
  const res = await fetch(pds.url + path, { headers });
  return { status: res.status, etag: res.headers.get('etag'), vary: res.headers.get('vary'), text: await res.text() };
}

describe('ETag and 304 on REST reads', () => {
  it('answers a repeated read with 304 and no body, and still checks the caller first', async () => {
    const first = await get('alice', '/api/v1/operations');
    expect(first.status).toBe(200);
    expect(first.etag).toMatch(/^W\/"sha256-[\w-]{32}"$/);
    expect(first.vary).toMatch(/authorization/i);
    const again = await get('alice', '/api/v1/operations', first.etag!);
    expect(again).toMatchObject({ status: 304, text: '', etag: first.etag });
    // The tag opens nothing: without a token the answer is still 401.
    expect((await get(undefined, '/api/v1/operations', first.etag!)).status).toBe(401);
    // A tag that does not match gets the body.
    expect((await get('alice', '/api/v1/operations', 'W/"sha256-other"')).status).toBe(200);
  });

  it('changes the tag when the data changes, and when what the caller may see differs', async () => {
    const before = await get('root', '/api/v1/audit');
    expect(before.status).toBe(200);
    const res = await pds.api('root', 'POST', '/api/v1/operations/create-tenant/execute', { team_name: 'etagco' });
    expect(res.status).toBe(200);
    const after = await get('root', '/api/v1/audit', before.etag!);
    expect(after.status).toBe(200);
    expect(after.etag).not.toBe(before.etag);
    // alice is no member of etagco: her audit list is not root's, nor is its tag, and root's tag gets her no 304.
    const alice = await get('alice', '/api/v1/audit', after.etag!);
    expect(alice.status).toBe(200);
    expect(alice.etag).not.toBe(after.etag);
    expect(JSON.parse(alice.text)).not.toEqual(JSON.parse(after.text));
  });

  it('compares tags weakly and accepts a list or *', () => {
    const tag = etagOf({ a: 1 }, '{"a":1}');
    expect(tag).toBe(etagOf({ a: 1 }, '{"a":1}'));
    expect(tag).not.toBe(etagOf({ a: 2 }, '{"a":2}'));
    expect(matchesEtag(tag.slice(2), tag)).toBe(true);
    expect(matchesEtag(`"x", ${tag}`, tag)).toBe(true);
    expect(matchesEtag('*', tag)).toBe(true);
    expect(matchesEtag('', tag)).toBe(false);
  });
});
