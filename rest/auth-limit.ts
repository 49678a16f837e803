/**
 * Limits on traffic that does not authenticate (issue 7 item 9), per client address — the address the route limit
 * uses (`clientAddress`: the TCP peer, or the last `X-Forwarded-For` entry with `PDS_TRUST_PROXY`), with the same
 * exemption of exactly 127.0.0.1, ::1 and ::ffff:127.0.0.1. Counted on Redis when `REDIS_URL` is set, so replicas share
 * the budgets, and in memory otherwise or while Redis is away (the policy of `rest/ratelimit.ts`).
 *
 * - **Failed authentications**: {@link FAILED_AUTHENTICATIONS_PER_MINUTE} per address per minute. Only failures count
 *   (a request with a valid token costs nothing and is never refused here); past the budget a failure is answered
 *   429 with `Retry-After` instead of 401, until the window frees. Once an address is over, its further failures are
 *   refused from memory without another Redis call.
 * - **GitHub verifications of unknown PATs**: {@link PAT_LOOKUPS_PER_MINUTE} per address per minute. A PAT whose
 *   verdict is cached (good for 5 minutes, refused for 30 s: `auth/pat.ts`) costs nothing; asking GitHub about a new
 *   one spends one, and past the budget the token is refused with 429 before GitHub is asked.
 */
import type { AuthAttempt } from '../auth/authenticate.js';
import { budgetSpent, createWindowCounter, isExemptLoopback, type LimitOptions } from './ratelimit.js';

/** Failed authentications allowed per client address per minute. */
export const FAILED_AUTHENTICATIONS_PER_MINUTE = 30;
/** GitHub look-ups of PATs with no cached verdict allowed per client address per minute. */
export const PAT_LOOKUPS_PER_MINUTE = 10;
/** Most blocked addresses remembered in memory; past it the oldest are forgotten (they only cost a Redis call). */
const MAX_BLOCKED = 10_000;

export interface AuthLimitOptions extends Omit<LimitOptions, 'max' | 'namespace'> {
  /** Failures per address per window (default {@link FAILED_AUTHENTICATIONS_PER_MINUTE}). */
  maxFailures?: number;
  /** GitHub look-ups per address per window (default {@link PAT_LOOKUPS_PER_MINUTE}). */
  maxPatLookups?: number;
  /** Redis key prefix (default `pds:limit`): keys are `<prefix>:authfail:<address>` and `<prefix>:patlookup:<address>`. */
  namespace?: string;
}

/** The limits as the authentication gate uses them; see the module comment. */
export interface AuthLimits {
  /** The hooks for one attempt from `address`; `undefined` for an exempt (loopback) address. */
  attempt(address: string): AuthAttempt | undefined;
  /**
   * Count a failed authentication from `address`.
   * @throws RateLimited (429, `Retry-After`) when the address has spent its budget: answer that instead of the 401.
   */
  failed(address: string): Promise<void>;
}

/**
 * @example
 * const limits = createAuthLimits({ redis });
 * try { identity = await authenticator.authenticate(header, limits.attempt(address)); }
 * catch (err) { if (unauthenticated(err)) await limits.failed(address); throw err; }
 */
export function createAuthLimits(options: AuthLimitOptions = {}): AuthLimits {
  const maxFailures = options.maxFailures ?? FAILED_AUTHENTICATIONS_PER_MINUTE;
  const maxLookups = options.maxPatLookups ?? PAT_LOOKUPS_PER_MINUTE;
  const duration = options.durationMs ?? 60_000;
  const prefix = options.namespace ?? 'pds:limit';
  const failures = createWindowCounter(
    { ...options, max: maxFailures, namespace: `${prefix}:authfail` },
    `failed-authentication limit (${maxFailures}/min)`,
  );
  const lookups = createWindowCounter(
    { ...options, max: maxLookups, namespace: `${prefix}:patlookup` },
    `GitHub token look-up limit (${maxLookups}/min)`,
  );
  // Addresses over the failure budget, with the end of their window (epoch seconds, as the counters report it).
  const blocked = new Map<string, number>();
  const tooMany = (address: string, reset: number) =>
    budgetSpent(`too many failed authentications from ${address}: at most ${maxFailures} a minute`, maxFailures, { remaining: 0, reset }, duration);

  return {
    attempt(address) {
      if (isExemptLoopback(address)) return undefined;
      return {
        async beforeGitHubLookup() {
          const count = await lookups(address);
          if (count.remaining > 0) return;
          throw budgetSpent(`too many new GitHub tokens to verify from ${address}: at most ${maxLookups} a minute`, maxLookups, count, duration);
        },
      };
    },
    async failed(address) {
      if (isExemptLoopback(address)) return;
      const until = blocked.get(address);
      if (until !== undefined && until * 1000 > Date.now()) throw tooMany(address, until);
      blocked.delete(address);
      const count = await failures(address);
      if (count.remaining > 0) return;
      blocked.set(address, count.reset);
      if (blocked.size > MAX_BLOCKED) blocked.delete(blocked.keys().next().value!);
      throw tooMany(address, count.reset);
    },
  };
}
