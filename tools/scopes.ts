/**
 * Which OAuth scopes a tool needs (issue 12), derived from the tool's own declaration and never from a second list:
 * a `read` tool needs `pds:read`, a `write` tool `pds:write`, and an operation that creates or removes a whole tenant
 * (the operations of the `tenants` toolset: create-tenant, delete-tenant) also `pds:admin`. Scopes narrow a token;
 * the roles still decide (`tools/access.ts`), and toolsets and read-only mode apply as well.
 */
import { InsufficientScope } from '../core/errors.js';
import type { Identity } from '../auth/identity.js';
import type { Scope } from '../auth/scopes.js';
import type { AnyTool } from './define.js';

/**
 * The scopes a call of `tool` needs.
 * @example requiredScopes(createTenantTool) // ['pds:write', 'pds:admin']
 */
export function requiredScopes(tool: Pick<AnyTool, 'kind' | 'operation'>): Scope[] {
  if (tool.kind === 'read') return ['pds:read'];
  return tool.operation?.toolset === 'tenants' ? ['pds:write', 'pds:admin'] : ['pds:write'];
}

/**
 * Check the caller's token scopes against what `tool` needs; a token without scopes passes.
 * @param resourceMetadata the RFC 9728 metadata URL the challenge names.
 * @throws InsufficientScope (403, `WWW-Authenticate: Bearer error="insufficient_scope", scope="…"`) naming every scope
 *   the call needs, so a client that asks for them gets all at once.
 */
export function requireScopes(tool: Pick<AnyTool, 'name' | 'kind' | 'operation'>, identity: Identity, resourceMetadata?: string): void {
  if (!identity.scopes) return;
  const needed = requiredScopes(tool);
  const missing = needed.filter((s) => !identity.scopes!.includes(s));
  if (missing.length === 0) return;
  throw new InsufficientScope(
    `insufficient scope: ${tool.name} needs ${needed.join(' and ')}; this token has ${identity.scopes.join(', ') || 'no pds scope'} (sign in again granting ${missing.join(', ')})`,
    needed,
    resourceMetadata,
  );
}
