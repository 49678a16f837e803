/**
 * GitHub Actions OIDC ID tokens (issue 20 item 6): the token a workflow with `permissions: id-token: write` asks
 * GitHub for (https://docs.github.com/actions/reference/security/oidc), verified here before pds exchanges it for one
 * of its own (`auth/oauth/token-exchange.ts`).
 *
 * Verification is jose's: the issuer's key set (`{issuer}/.well-known/jwks`, what GitHub's discovery document names)
 * through `createRemoteJWKSet` with the injected fetch (the outbound rule's), RS256 only, `iss` the issuer
 * (`https://token.actions.githubusercontent.com`, or `PDS_GITHUB_OIDC_ISSUER`), `aud` the pds base URL, `exp` and
 * `iat` required; then the claims pds relies on must be present and well formed.
 */
import { createRemoteJWKSet, customFetch, errors, jwtVerify, type JWTPayload } from 'jose';
import { Unauthenticated, Unavailable } from '../core/errors.js';
import { GitHubActionsRun } from '../core/governance/ci.js';
import { githubActionsUserId } from '../core/identity.js';
import { describeJoseError } from './jose-errors.js';

/** GitHub's issuer of Actions ID tokens. */
export const GITHUB_ACTIONS_ISSUER = 'https://token.actions.githubusercontent.com';

/** The claims a GitHub Actions ID token must carry for pds to exchange it. */
const REQUIRED_CLAIMS = ['exp', 'iat', 'repository', 'repository_id', 'repository_owner', 'repository_owner_id', 'ref', 'event_name', 'run_id'];

export interface GitHubActionsVerifierOptions {
  /** The issuer, without trailing slash (`PDS_GITHUB_OIDC_ISSUER`, default {@link GITHUB_ACTIONS_ISSUER}). */
  issuer: string;
  /** The `aud` the token must carry: the pds base URL, which the workflow asks GitHub for. */
  audience: string;
  /** fetch for the key set: the outbound rule's (`adapters/outbound/fetch.ts`), passed by the composition root. */
  fetch?: typeof fetch;
  /** Key-set request timeout, milliseconds (default 5000). */
  timeoutMs?: number;
  /** Least time between two key-set fetches caused by unknown `kid`s, milliseconds (default 30 000). */
  cooldownMs?: number;
}

/** A verified Actions ID token: the caller id pds gives it, the run, and the token's expiry (epoch seconds). */
export interface VerifiedGitHubActionsToken {
  /** `github-actions:<owner>/<repo>`. */
  userId: string;
  run: GitHubActionsRun;
  exp: number;
}

export interface GitHubActionsVerifier {
  readonly issuer: string;
  /**
   * @throws Unauthenticated saying what is wrong (issuer, audience, expiry, signature, a missing or malformed claim).
   * @throws Unavailable when the issuer's key set cannot be fetched.
   */
  verify(idToken: string): Promise<VerifiedGitHubActionsToken>;
}

/**
 * @example
 * const actions = createGitHubActionsVerifier({ issuer: GITHUB_ACTIONS_ISSUER, audience: 'https://pds.example.com', fetch: outbound });
 * const { userId, run } = await actions.verify(idToken); // 'github-actions:acme/web', { repository_id: '892543218', … }
 */
export function createGitHubActionsVerifier(options: GitHubActionsVerifierOptions): GitHubActionsVerifier {
  const { issuer, audience } = options;
  const keys = createRemoteJWKSet(new URL(`${issuer}/.well-known/jwks`), {
    timeoutDuration: options.timeoutMs ?? 5000,
    cooldownDuration: options.cooldownMs ?? 30_000,
    ...(options.fetch ? { [customFetch]: options.fetch } : {}),
  });
  return {
    issuer,
    async verify(idToken) {
      let payload: JWTPayload;
      try {
        ({ payload } = await jwtVerify(idToken, keys, { issuer, audience, algorithms: ['RS256'], requiredClaims: REQUIRED_CLAIMS }));
      } catch (err) {
        if (keySetUnreachable(err)) {
          throw new Unavailable(`the key set of ${issuer} could not be fetched to verify the ID token; retry shortly`, { cause: err });
        }
        const reason = describeJoseError(err).replace(/^token/, 'ID token');
        throw new Unauthenticated(err instanceof errors.JWTClaimValidationFailed && err.claim === 'aud' ? `${reason} (it must be ${audience})` : reason, { cause: err });
      }
      const repository = String(payload.repository);
      const runUrl = `https://github.com/${repository}/actions/runs/${String(payload.run_id)}`;
      const parsed = GitHubActionsRun.safeParse({
        repository,
        repository_id: payload.repository_id,
        repository_owner: payload.repository_owner,
        repository_owner_id: payload.repository_owner_id,
        ref: payload.ref,
        event_name: payload.event_name,
        run_id: payload.run_id,
        run_url: runUrl,
      });
      const userId = githubActionsUserId(repository);
      if (!parsed.success || !userId || repository.split('/')[0]!.toLowerCase() !== String(payload.repository_owner).toLowerCase()) {
        throw new Unauthenticated('ID token claims are not those of a GitHub Actions run (repository, ids, ref, event or run id malformed)');
      }
      return { userId, run: parsed.data, exp: payload.exp! };
    },
  };
}

/** A failure to obtain the key set (network, timeout, non-200, not a JWKS), as opposed to a bad token. */
function keySetUnreachable(err: unknown): boolean {
  if (err instanceof errors.JWKSTimeout || err instanceof errors.JWKSInvalid) return true;
  if (err instanceof errors.JOSEError) return err.code === 'ERR_JOSE_GENERIC';
  return true;
}
