/**
 * GitHub classic personal access tokens (`docs/api.md#authentication`, first form: `ghp_…`, no dots). The token must carry
 * the `read:user` scope, or its parent `user` (GitHub reports the broader scope when both were granted). The user id
 * is the GitHub login.
 *
 * Verdicts are cached by the token's SHA-256 (`auth/token-cache.ts`): good tokens for 5 minutes, bad ones for 30 s, so
 * a CI burst costs one GitHub call and a revoked token stops working within minutes. Reachability failures are not
 * cached: with nothing cached they answer 503, never 401.
 */
import type { Redis } from 'ioredis';
import { Unauthenticated, isPlatformError } from '../core/errors.js';
import type { GitHubUserLookup } from '../core/ports.js';
import { TokenCache, type CacheLookup } from './token-cache.js';

/** Scopes that grant `read:user`. */
const READ_USER = new Set(['read:user', 'user']);

export interface PatVerifierOptions {
  lookup: GitHubUserLookup;
  /** Shares verdicts between replicas (see `TokenCacheOptions.redis`). */
  redis?: () => Redis | undefined;
  /** How long a good token is trusted without asking GitHub again, milliseconds (default 300 000). */
  positiveTtlMs?: number;
  /** How long a refused token is refused without asking GitHub again, milliseconds (default 30 000). */
  negativeTtlMs?: number;
  now?: () => number;
  /** Told where each look-up was answered (metrics). */
  onCacheLookup?: (result: CacheLookup) => void;
}

/**
 * Verifies a PAT and returns the GitHub login. `beforeLookup` runs right before GitHub is asked about a token with no
 * cached verdict (never for a cached one); whatever it throws (e.g. `RateLimited`) refuses the token unasked.
 */
export type PatVerifier = (token: string, beforeLookup?: () => Promise<void>) => Promise<string>;

/**
 * @example
 * const verifyPat = createPatVerifier({ lookup: createGitHubUserLookup({ baseUrl }), redis });
 * const login = await verifyPat('ghp_…');
 * @throws Unauthenticated `bad credentials…` or `insufficient scope: the token needs read:user`.
 * @throws Unavailable when GitHub cannot be reached and nothing is cached.
 * @throws whatever `beforeLookup` throws, uncached.
 */
export function createPatVerifier(options: PatVerifierOptions): PatVerifier {
  const positiveTtlMs = options.positiveTtlMs ?? 300_000;
  const negativeTtlMs = options.negativeTtlMs ?? 30_000;
  const cache = new TokenCache<string>({ namespace: 'pds:auth:pat:', redis: options.redis, now: options.now, onLookup: options.onCacheLookup });
  return async (token, beforeLookup) => {
    const verdict = await cache.resolve(token, async () => {
      await beforeLookup?.();
      try {
        const { login, scopes } = await options.lookup(token);
        if (!scopes.some((s) => READ_USER.has(s))) {
          return { verdict: { ok: false, message: 'insufficient scope: the token needs read:user' }, ttlMs: negativeTtlMs };
        }
        return { verdict: { ok: true, value: login }, ttlMs: positiveTtlMs };
      } catch (err) {
        if (isPlatformError(err) && err.code === 'UNAUTHENTICATED') {
          return { verdict: { ok: false, message: err.message }, ttlMs: negativeTtlMs };
        }
        throw err;
      }
    });
    if (!verdict.ok) throw new Unauthenticated(verdict.message);
    return verdict.value;
  };
}
