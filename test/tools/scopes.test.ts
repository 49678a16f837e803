/**
 * The scopes each tool needs (issue 12), derived from the tool's own `kind` and operation: every read tool needs
 * pds:read, every write tool pds:write, and exactly the operations that create or remove a tenant also pds:admin.
 */
import { describe, expect, it } from 'vitest';
import { requiredScopes, requireScopes } from '../../tools/scopes.js';
import { checkedTools } from '../../tools/registry.js';
import type { Identity } from '../../auth/identity.js';

const tools = checkedTools();
const identity = (scopes?: Identity['scopes']): Identity => ({ userId: 'alice', groups: [], admin: true, tokenKind: 'self-issued', ...(scopes && { scopes }) });

describe('required scopes', () => {
  it('follow each tool kind, and add pds:admin only for create-tenant and delete-tenant', () => {
    const admin = tools.filter((t) => requiredScopes(t).includes('pds:admin')).map((t) => t.operation?.id);
    expect(admin.sort()).toEqual(['create-tenant', 'delete-tenant']);
    for (const tool of tools) {
      expect(requiredScopes(tool)).toContain(tool.kind === 'read' ? 'pds:read' : 'pds:write');
      expect(requiredScopes(tool)).not.toContain(tool.kind === 'read' ? 'pds:write' : 'pds:read');
    }
  });

  it('refuse a scoped token that lacks one with a challenge naming all it needs; a token without scopes passes', () => {
    const deleteTenant = tools.find((t) => t.operation?.id === 'delete-tenant')!;
    expect(() => requireScopes(deleteTenant, identity())).not.toThrow();
    expect(() => requireScopes(deleteTenant, identity(['pds:read', 'pds:write', 'pds:admin']))).not.toThrow();
    try {
      requireScopes(deleteTenant, identity(['pds:write']), 'https://pds.example.com/.well-known/oauth-protected-resource');
      expect.unreachable();
    } catch (err) {
      expect(err).toMatchObject({ code: 'FORBIDDEN', status: 403, scopes: ['pds:write', 'pds:admin'] });
      expect((err as { headers: Record<string, string> }).headers['WWW-Authenticate']).toBe(
        'Bearer realm="pds", error="insufficient_scope", scope="pds:write pds:admin", resource_metadata="https://pds.example.com/.well-known/oauth-protected-resource"',
      );
    }
  });
});
