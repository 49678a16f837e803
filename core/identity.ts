/**
 * One identity, one namespace, by grammar (issue 17 item 9; README "Identity"). A user id's form says where it came
 * from, so ids from two origins can never be the same text:
 *
 * | kind | form | comes from |
 * |---|---|---|
 * | `github` | a GitHub login: letters, digits, `-` and `_`, 1-39 characters, not starting with `-`; never `@` or `:` | a classic PAT (`GET /user`), GitHub sign-in |
 * | `email` | `<local>@<domain>`, one `@`, no `:`, `,` or white space | an external JWT's verified `email` |
 * | `oidc` | `oidc:<value>`, the value without `@`, `,` or control characters | the claim `PDS_OIDC_USER_CLAIM` names when it is not `email` |
 *
 * A self-issued token's `sub` must be one of these: it stands for that identity. Member and approver references use
 * the same grammar, plus a prefix for what is not a person: `group:<name>`, `role:` and `github-actions:`; any other
 * `<prefix>:` is refused rather than read as a user.
 *
 * One more form names no person: `github-actions:<owner>/<repo>` ({@link githubActionsUserId}), the caller of a token
 * pds issued in exchange for a GitHub Actions ID token (issue 20 item 6). It is never a user id ({@link parseUserId}
 * refuses it: no member, approver or admin list can hold it), only the `userId` of that token's identity, which
 * carries the verified run beside it.
 */
import { z } from 'zod';

/** GitHub's login rule (github.com/join), with `_` for Enterprise Managed Users' `login_shortcode`. */
const GITHUB_LOGIN = /^[A-Za-z0-9][A-Za-z0-9_-]{0,38}$/;
/** An address as identity providers hand it out; `:` and `,` are excluded so it can meet neither prefix nor list. */
const EMAIL = /^[^\s@:,]+@[^\s@:,]+$/;
/** The value after `oidc:`: anything printable but `@` (e-mail-form ids come from a verified `email` only) and `,`. */
const OIDC_VALUE = /^[^\s@,\p{Cc}](?:[^@,\p{Cc}]{0,198}[^\s@,\p{Cc}])?$/u;

/** The prefix of ids taken from a non-email claim of an external JWT. */
export const OIDC_PREFIX = 'oidc:';

/** Where a user id came from, as its form tells. */
export type UserIdKind = 'github' | 'email' | 'oidc';

/** A parsed user id: its kind and the id itself (unchanged). */
export interface ParsedUserId {
  kind: UserIdKind;
  id: string;
}

/** Prefixes of member and approver references that name something other than a person. */
export const REFERENCE_PREFIXES = ['group', 'role', 'github-actions'] as const;
export type ReferencePrefix = (typeof REFERENCE_PREFIXES)[number];

/** A member or approver reference: a person by user id, or a prefixed reference (`group:<name>`, …). */
export type MemberReference = { kind: 'user'; user: ParsedUserId } | { kind: ReferencePrefix; name: string };

/**
 * The kind of a user id, or `undefined` when it is of no kind (then no token may carry it).
 * @example parseUserId('octocat') // { kind: 'github', id: 'octocat' }
 * @example parseUserId('jane@example.com') // { kind: 'email', id: 'jane@example.com' }
 * @example parseUserId('oidc:CgZqYW5l') // { kind: 'oidc', id: 'oidc:CgZqYW5l' }
 * @example parseUserId('group:admins') // undefined
 */
export function parseUserId(text: string): ParsedUserId | undefined {
  if (GITHUB_LOGIN.test(text)) return { kind: 'github', id: text };
  if (EMAIL.test(text)) return { kind: 'email', id: text };
  if (text.startsWith(OIDC_PREFIX) && OIDC_VALUE.test(text.slice(OIDC_PREFIX.length))) return { kind: 'oidc', id: text };
  return undefined;
}

/** Whether `text` is a GitHub login (the only kind of id that is a code-host login). */
export function isGitHubLogin(text: string): boolean {
  return GITHUB_LOGIN.test(text);
}

/** Whether `text` is an e-mail-form id. */
export function isEmailId(text: string): boolean {
  return EMAIL.test(text);
}

/**
 * The id for a non-email claim's value: `oidc:<value>`, or `undefined` when the value is outside the grammar
 * (contains `@`, `,`, control characters, or is empty).
 * @example oidcUserId('jane') // 'oidc:jane'
 */
export function oidcUserId(value: string): string | undefined {
  return OIDC_VALUE.test(value) ? `${OIDC_PREFIX}${value}` : undefined;
}

/**
 * A member or approver reference: `group:<name>` (or another {@link REFERENCE_PREFIXES} entry) or a user id.
 * @returns `undefined` for an unknown prefix, an empty name, or text that is no user id.
 * @example parseMemberReference('group:platform') // { kind: 'group', name: 'platform' }
 */
export function parseMemberReference(text: string): MemberReference | undefined {
  const colon = text.indexOf(':');
  if (colon > 0) {
    const prefix = text.slice(0, colon);
    const name = text.slice(colon + 1);
    if ((REFERENCE_PREFIXES as readonly string[]).includes(prefix)) {
      return name && !/[\s,@]/.test(name) ? { kind: prefix as ReferencePrefix, name } : undefined;
    }
  }
  const user = parseUserId(text);
  return user && { kind: 'user', user };
}

/** The prefix of a GitHub Actions workflow's caller id. */
export const GITHUB_ACTIONS_PREFIX = 'github-actions:';
/** `<owner>/<repo>` as GitHub names repositories (an owner is a login; `RepoFullName` of `core/model.ts`). */
const REPOSITORY = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})\/[A-Za-z0-9._-]{1,100}$/;

/**
 * The caller id of a GitHub Actions workflow of `repository` (`<owner>/<repo>`), or `undefined` when that is no
 * repository name.
 * @example githubActionsUserId('acme/web') // 'github-actions:acme/web'
 */
export function githubActionsUserId(repository: string): string | undefined {
  return REPOSITORY.test(repository) ? `${GITHUB_ACTIONS_PREFIX}${repository}` : undefined;
}

/** Whether `text` is a GitHub Actions caller id (`github-actions:<owner>/<repo>`). */
export function isGitHubActionsId(text: string): boolean {
  return text.startsWith(GITHUB_ACTIONS_PREFIX) && REPOSITORY.test(text.slice(GITHUB_ACTIONS_PREFIX.length));
}

/** What a user id may look like, for messages. */
export const USER_ID_FORMS = 'a GitHub login (e.g. "octocat"), a verified e-mail (e.g. "jane@example.com") or "oidc:<value>"';

/** A user id by {@link parseUserId}, as a zod schema (parameters, configuration). */
export const UserId = z.string().refine((text) => parseUserId(text) !== undefined, { message: `must be a user id: ${USER_ID_FORMS}` });
