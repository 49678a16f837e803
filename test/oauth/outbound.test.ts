/**
 * The outbound rule on the fetches a caller steers through pds's authorization server (issue 17 item 6): a Client ID
 * Metadata Document and a registered client's `jwks_uri` pointing at loopback, in every spelling, make no connection
 * at all (oidc-provider's own check ran only after connecting, so open and closed ports answered at different speeds).
 * The same requests with `PDS_OUTBOUND_ALLOW_PRIVATE=true` do reach the listener, which shows it would have seen them.
 */
import { once } from 'node:events';
import { createServer, type Socket } from 'node:net';
import { SignJWT, generateKeyPair } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';

const SPELLINGS = ['127.0.0.1', 'localhost', '2130706433', '0x7f000001', '127.1', '0.0.0.0', '[::ffff:127.0.0.1]'];

let accepted: Socket[] = [];
let listener: ReturnType<typeof createServer>;
let port: number;
let guarded: TestServer;
let open: TestServer;

beforeAll(async () => {
  // Plain TCP: a TLS client's connection is counted the moment it is accepted, before any handshake.
  listener = createServer((socket) => {
    accepted.push(socket);
    socket.on('error', () => {});
    socket.destroy();
  });
  listener.listen(0, '127.0.0.1');
  await once(listener, 'listening');
  port = (listener.address() as { port: number }).port;
  guarded = await startTestServer();
  open = await startTestServer({ PDS_OUTBOUND_ALLOW_PRIVATE: 'true' });
});

afterAll(async () => {
  await guarded?.stop();
  await open?.stop();
  listener?.close();
});

/** Ask `pds` to authorize a Client ID Metadata Document client at `host`; pds fetches the document first. */
async function authorizeWithMetadataDocument(pds: TestServer, host: string): Promise<number> {
  const query = new URLSearchParams({
    client_id: `https://${host}:${port}/client.json`,
    response_type: 'code',
    redirect_uri: 'http://127.0.0.1:9/callback',
    code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
    code_challenge_method: 'S256',
    scope: 'pds:read',
  });
  const res = await fetch(`${pds.url}/oauth/authorize?${query}`, { redirect: 'manual', headers: { accept: 'application/json' } });
  await res.arrayBuffer();
  return res.status;
}

/** Register a `private_key_jwt` client whose keys are at `host`, then authenticate as it at the token endpoint. */
async function authenticateWithJwksUri(pds: TestServer, host: string): Promise<number> {
  const registered = await fetch(`${pds.url}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      redirect_uris: ['https://client.example.com/callback'],
      token_endpoint_auth_method: 'private_key_jwt',
      token_endpoint_auth_signing_alg: 'ES256',
      jwks_uri: `https://${host}:${port}/jwks`,
    }),
  });
  expect(registered.status, await registered.clone().text()).toBe(201);
  const { client_id: clientId } = (await registered.json()) as { client_id: string };
  const { privateKey } = await generateKeyPair('ES256');
  const assertion = await new SignJWT({})
    .setProtectedHeader({ alg: 'ES256' })
    .setIssuer(clientId)
    .setSubject(clientId)
    .setAudience(`${pds.config.baseUrl}/oauth/token`)
    .setJti(crypto.randomUUID())
    .setIssuedAt()
    .setExpirationTime('1m')
    .sign(privateKey);
  const res = await fetch(`${pds.url}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code: 'nothing',
      redirect_uri: 'https://client.example.com/callback',
      client_id: clientId,
      client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
      client_assertion: assertion,
    }),
  });
  await res.arrayBuffer();
  return res.status;
}

describe.each([
  ['a Client ID Metadata Document', authorizeWithMetadataDocument],
  ['a registered client\'s jwks_uri', authenticateWithJwksUri],
])('%s at a loopback address', (_what, attempt) => {
  it.each(SPELLINGS)('at %s: refused with no connection made', async (host) => {
    accepted = [];
    const status = await attempt(guarded, host);
    expect(status).toBeGreaterThanOrEqual(400);
    expect(accepted).toHaveLength(0);
  });

  it('is reached with PDS_OUTBOUND_ALLOW_PRIVATE=true (the listener does see a connection when one is made)', async () => {
    accepted = [];
    await attempt(open, '127.0.0.1');
    expect(accepted.length).toBeGreaterThan(0);
  });
});
