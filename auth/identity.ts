/**
 * Who is calling. Produced by `auth/authenticate.ts` from the bearer token; consumed by the access policy and the
 * per-user limits (DESIGN.md "Identity and limits").
 */

import type { GitHubActionsRun } from '../core/governance/ci.js';
import type { Scope } from './scopes.js';

/** How the caller proved who they are. */
export type TokenKind = 'self-issued' | 'pat' | 'external';

/** An authenticated caller. */
export interface Identity {
  /** GitHub login (PAT), the `PDS_OIDC_USER_CLAIM` claim (external JWT; a verified `email` by default) or `sub` (self-issued JWT). */
  userId: string;
  /** Group claims (external or self-issued JWT); empty for a PAT. */
  groups: string[];
  /** Platform admin: listed in `PDS_ADMINS` or a member of one of `PDS_ADMIN_GROUPS`. */
  admin: boolean;
  tokenKind: TokenKind;
  /**
   * The OAuth scopes the token carries (tokens from pds's authorization server); absent when the token has no `scope`
   * claim (PAT, Dex, `pds token`), which narrows nothing: the roles alone decide.
   */
  scopes?: readonly Scope[];
  /**
   * The GitHub Actions run this caller is (a token pds exchanged for the run's OIDC ID token; `userId` is then
   * `github-actions:<owner>/<repo>`, never a person, never an admin). It may only deploy services of that repository
   * (`tools/ci.ts`).
   */
  ci?: GitHubActionsRun;
}

/** Admin if the user id is listed or any group is an admin group. */
export function isPlatformAdmin(userId: string, groups: readonly string[], admins: readonly string[], adminGroups: readonly string[]): boolean {
  return admins.includes(userId) || groups.some((g) => adminGroups.includes(g));
}
