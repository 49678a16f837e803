import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import { describe, expect, it } from 'vitest';
import { protectedResourceMetadata, wellKnownRouter } from '../../rest/well-known.js';

describe('RFC 9728 protected resource metadata', () => {
  it('names Dex as the authorization server when configured', () => {
    expect(protectedResourceMetadata({ baseUrl: 'https://pds.example.com', authUrl: 'https://auth.example.com' }, '/mcp')).toEqual({
      resource: 'https://pds.example.com/mcp',
      authorization_servers: ['https://auth.example.com/api/dex'],
      bearer_methods_supported: ['header'],
      scopes_supported: ['openid', 'email', 'profile', 'groups'],
      resource_name: 'pds (Platform Deployment Service)',
      resource_documentation: 'https://pds.example.com/docs',
    });
  });

  it('names pds itself otherwise', () => {
    const doc = protectedResourceMetadata({ baseUrl: 'http://localhost:8080' });
    expect(doc.resource).toBe('http://localhost:8080');
    expect(doc.authorization_servers).toEqual(['http://localhost:8080']);
    expect(doc).not.toHaveProperty('scopes_supported');
  });

  it('is served without authentication at both well-known paths', async () => {
    const app = new Koa().use(wellKnownRouter({ baseUrl: 'http://pds.test', authUrl: 'http://dex.test' }).routes()).use((ctx) => {
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
