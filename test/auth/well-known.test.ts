import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import { describe, expect, it } from 'vitest';
import { protectedResourceMetadata, wellKnownRouter } from '../../rest/well-known.js';

describe('RFC 9728 protected resource metadata', () => {
  it('names Dex as the authorization server when Dex is configured without sign-in through pds', () => {
    expect(protectedResourceMetadata({ baseUrl: 'https://pds.example.com', authUrl: 'https://auth.example.com', signIn: {} }, '/mcp')).toEqual({
      resource: 'https://pds.example.com/mcp',
      authorization_servers: ['https://auth.example.com/api/dex'],
      bearer_methods_supported: ['header'],
      scopes_supported: ['openid', 'email', 'profile', 'groups'],
      resource_name: 'pds (Platform Deployment Service)',
      resource_documentation: 'https://pds.example.com/docs',
    });
  });

  // Issue 12 changed this contract: pds is an authorization server with its own scopes.
  it('names pds itself, with its scopes, otherwise', () => {
    const doc = protectedResourceMetadata({ baseUrl: 'http://localhost:8080', signIn: {} });
    expect(doc.resource).toBe('http://localhost:8080');
    expect(doc.authorization_servers).toEqual(['http://localhost:8080']);
    expect(doc.scopes_supported).toEqual(['pds:read', 'pds:write', 'pds:admin']);
  });

  it('names pds when it signs people in through Dex', () => {
    const signIn = { dex: { clientId: 'pds', clientSecret: 's' } };
    const doc = protectedResourceMetadata({ baseUrl: 'https://pds.example.com', authUrl: 'https://auth.example.com', signIn }, '/mcp');
    expect(doc.authorization_servers).toEqual(['https://pds.example.com']);
    expect(doc.scopes_supported).toEqual(['pds:read', 'pds:write', 'pds:admin']);
  });

  it('is served without authentication at both well-known paths', async () => {
    const app = new Koa().use(wellKnownRouter({ baseUrl: 'http://pds.test', authUrl: 'http://dex.test', signIn: {} }).routes()).use((ctx) => {
      ctx.status = 418;
    });
    const server = app.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const root = await fetch(`${base}/.well-known/oauth-protected-resource`);
      expect(root.status).toBe(200);
      expect(root.headers.get('content-type')).toMatch(/^application\/json/);
      expect(await root.json()).toMatchObject({ resource: 'http://pds.test', authorization_servers: ['http://dex.test/api/dex'] });
      const mcp = await fetch(`${base}/.well-known/oauth-protected-resource/mcp`);
      expect(await mcp.json()).toMatchObject({ resource: 'http://pds.test/mcp' });
      expect((await fetch(`${base}/.well-known/other`)).status).toBe(418);
    } finally {
      server.close();
    }
  });
});
