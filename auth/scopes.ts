/**
 * The OAuth scopes of pds tokens (issue 12): what a token issued by pds's authorization server lets its client do, on
 * top of (never instead of) the person's roles. A token without a `scope` claim (a PAT, a Dex token, `pds token`)
 * is not narrowed: it may do whatever its user's roles allow.
 */

/** Every scope pds issues, least to most. */
export const SCOPES = ['pds:read', 'pds:write', 'pds:admin'] as const;
export type Scope = (typeof SCOPES)[number];

/** What each scope allows, for the consent page, metadata and help. */
export const SCOPE_DESCRIPTIONS: Readonly<Record<Scope, string>> = {
  'pds:read': 'read tenants, services, status, logs, workflows and the audit trail',
  'pds:write': 'deploy, roll back, open previews and change services',
  'pds:admin': 'create and delete tenants (with the roles that allow it)',
};

/** Scopes an MCP client is asked for when a 401 names none (the challenge's `scope`): everything but admin. */
export const DEFAULT_SCOPES: readonly Scope[] = ['pds:read', 'pds:write'];

/** True for a pds scope name. */
export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}

/**
 * The scopes of a verified token's `scope` claim (RFC 9068 §2.2.3: space-separated).
 * @returns `undefined` when the claim is absent (the token is not narrowed); otherwise the pds scopes it names
 *   (others, such as `openid`, are ignored), possibly none.
 * @example scopesOf('pds:read openid') // ['pds:read']
 */
export function scopesOf(claim: unknown): Scope[] | undefined {
  if (claim === undefined) return undefined;
  if (typeof claim !== 'string') return [];
  return [...new Set(claim.split(' ').filter(isScope))];
}
