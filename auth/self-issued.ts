/**
 * Self-issued tokens: HS256 JWTs that pds signs itself (`docs/api.md#authentication`, third form). Issuer and audience are
 * the pds base URL; `exp` is required. Signing and verification are jose's; nothing here parses a JWT by hand.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile, rename } from 'node:fs/promises';
import path from 'node:path';
import { SignJWT, jwtVerify, type JWTPayload } from 'jose';
import { Unauthenticated } from '../core/errors.js';
import { GitHubActionsRun } from '../core/governance/ci.js';
import { describeJoseError } from './jose-errors.js';
import { scopesOf, type Scope } from './scopes.js';

export { describeJoseError };

/**
 * The resources (RFC 8707 resource indicators, RFC 9728 `resource`) pds answers for: the base URL (REST) and its MCP
 * endpoint. A pds token's `aud` must be one of them; a token for anything else is refused.
 * @example pdsResources('https://pds.example.com') // ['https://pds.example.com', 'https://pds.example.com/mcp']
 */
export function pdsResources(baseUrl: string): [string, string] {
  return [baseUrl, `${baseUrl}/mcp`];
}

/** The private claim holding the GitHub Actions run a token was exchanged for (`auth/oauth/token-exchange.ts`). */
export const GITHUB_ACTIONS_CLAIM = 'github_actions';

/** Claims pds puts in its own tokens. */
export interface SelfIssuedClaims {
  sub: string;
  groups: string[];
  /** The verified GitHub Actions run, in a token exchanged for its ID token ({@link GITHUB_ACTIONS_CLAIM}). */
  githubActions?: GitHubActionsRun;
  /** OAuth scopes (space-separated), when the token is narrowed to them. */
  scope?: string;
}

/** A verified self-issued token: its claims and expiry (epoch seconds). */
export interface VerifiedSelfToken extends SelfIssuedClaims {
  exp: number;
  /** The token's OAuth scopes (tokens of pds's authorization server); absent when it has no `scope` claim. */
  scopes?: Scope[];
  /** The GitHub Actions run of a token exchanged for its ID token; absent otherwise. */
  githubActions?: GitHubActionsRun;
}

/**
 * Sign a self-issued token.
 * @param secret HMAC key (at least 32 bytes).
 * @param issuer pds base URL; also the audience.
 * @param ttlSeconds lifetime in seconds (1 second to 1 year).
 * @returns the compact JWT.
 * @throws RangeError for a ttl outside that range.
 */
export async function issueSelfToken(
  secret: Uint8Array,
  issuer: string,
  claims: SelfIssuedClaims,
  ttlSeconds: number,
): Promise<string> {
  if (!Number.isInteger(ttlSeconds) || ttlSeconds < 1 || ttlSeconds > 365 * 24 * 3600) {
    throw new RangeError('ttl must be between 1 second and 365 days');
  }
  return new SignJWT({
    groups: claims.groups,
    ...(claims.githubActions && { [GITHUB_ACTIONS_CLAIM]: claims.githubActions }),
    ...(claims.scope !== undefined && { scope: claims.scope }),
  })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(claims.sub)
    .setIssuer(issuer)
    .setAudience(issuer)
    .setIssuedAt()
    .setExpirationTime(`${ttlSeconds}s`)
    .sign(secret);
}

/**
 * Verify a self-issued token: HS256 only, `iss` the base URL, `aud` one of {@link pdsResources}, `exp` required.
 * Tokens of pds's OAuth authorization server are of this form too, with `scope` and `client_id` claims.
 * @returns the subject, groups, expiry and scopes.
 * @throws Unauthenticated with `expired`, `bad signature` or `invalid` in the message (never the token itself).
 */
export async function verifySelfToken(secret: Uint8Array, issuer: string, token: string): Promise<VerifiedSelfToken> {
  let payload: JWTPayload;
  try {
    ({ payload } = await jwtVerify(token, secret, {
      algorithms: ['HS256'],
      issuer,
      audience: pdsResources(issuer),
      requiredClaims: ['exp', 'sub'],
    }));
  } catch (err) {
    throw new Unauthenticated(describeJoseError(err), {
      cause: err,
      challenge: 'Bearer realm="pds", error="invalid_token"',
    });
  }
  const groups = Array.isArray(payload.groups) ? payload.groups.filter((g): g is string => typeof g === 'string') : [];
  const scopes = scopesOf(payload.scope);
  const run = payload[GITHUB_ACTIONS_CLAIM] === undefined ? undefined : GitHubActionsRun.safeParse(payload[GITHUB_ACTIONS_CLAIM]);
  if (run && !run.success) {
    throw new Unauthenticated(`token claim "${GITHUB_ACTIONS_CLAIM}" is malformed`, { challenge: 'Bearer realm="pds", error="invalid_token"' });
  }
  return { sub: payload.sub!, groups, exp: payload.exp!, ...(scopes && { scopes }), ...(run && { githubActions: run.data }) };
}

/** Fewest characters an HS256 secret may have, whether from `PDS_JWT_SECRET` or `<dataDir>/jwt-secret`. */
export const MIN_SECRET_CHARS = 32;

/**
 * The HS256 secret: `PDS_JWT_SECRET` when set, else the one kept in `<dataDir>/jwt-secret` (created on first use,
 * 32 random bytes as 43 base64url characters, file mode 0600, written atomically).
 * @throws Error naming the file when it holds fewer than {@link MIN_SECRET_CHARS} characters (surrounding whitespace
 *   aside), the rule `PDS_JWT_SECRET` follows: a short secret makes every pds token forgeable. The file is left as it is.
 */
export async function loadOrCreateSecret(configured: string | undefined, dataDir: string): Promise<Uint8Array> {
  if (configured) return new TextEncoder().encode(configured);
  const file = path.join(dataDir, 'jwt-secret');
  let kept: string | undefined;
  try {
    kept = (await readFile(file, 'utf8')).trim();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  if (kept !== undefined) {
    if (kept.length < MIN_SECRET_CHARS) {
      throw new Error(
        `${file} holds a ${kept.length}-character token secret; at least ${MIN_SECRET_CHARS} are required (as for PDS_JWT_SECRET). ` +
          `Put a longer one in it (e.g. "openssl rand -base64 48 > ${file}"), or delete it to have pds create one; ` +
          'tokens signed with the old secret stop working either way.',
      );
    }
    return new TextEncoder().encode(kept);
  }
  await mkdir(dataDir, { recursive: true });
  const secret = randomBytes(32).toString('base64url');
  const tmp = `${file}.${process.pid}.tmp`;
  await writeFile(tmp, secret + '\n', { mode: 0o600 });
  await rename(tmp, file);
  return new TextEncoder().encode(secret);
}
