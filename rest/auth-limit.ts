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
import type { Middleware } from 'koa';
import type { AuthAttempt } from '../auth/authenticate.js';
import { OAUTH_ROUTES } from '../auth/oauth/provider.js';
import { budgetSpent, clientAddress, createWindowCounter, isExemptLoopback, type LimitOptions } from './ratelimit.js';

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

/** Requests to the OAuth authorization server's routes allowed per client address per minute. */
export const OAUTH_REQUESTS_PER_MINUTE = 60;
/** Dynamic client registrations (`POST /oauth/register`) allowed per client address per minute. */
export const OAUTH_REGISTRATIONS_PER_MINUTE = 10;
/**
 * Dynamic client registrations allowed per client address per day (a sliding 24-hour window). With the metadata cap
 * (`auth/oauth/registration.ts`) one address can make pds store at most about 800 KiB of clients a day.
 */
export const OAUTH_REGISTRATIONS_PER_DAY = 100;
const DAY_MS = 86_400_000;

export interface OAuthLimitOptions extends Omit<LimitOptions, 'max' | 'namespace'> {
  /** `PDS_TRUST_PROXY`: the address from the last `X-Forwarded-For` entry (see `clientAddress`). */
  trustProxy: boolean;
  /** Requests per address per window (default {@link OAUTH_REQUESTS_PER_MINUTE}). */
  maxRequests?: number;
  /** Registrations per address per window (default {@link OAUTH_REGISTRATIONS_PER_MINUTE}). */
  maxRegistrations?: number;
  /** Registrations per address per day (default {@link OAUTH_REGISTRATIONS_PER_DAY}). */
  maxRegistrationsPerDay?: number;
  /**
   * Redis key prefix (default `pds:limit`): keys are `<prefix>:oauth:<address>`, `<prefix>:oauthreg:<address>` and
   * `<prefix>:oauthregday:<address>`.
   */
  namespace?: string;
}

/**
 * The limit on pds's OAuth routes (metadata, authorize, token, register, revoke, device flow, sign-in and consent
 * pages), which take no bearer token and so pass neither the route limit nor the failed-authentication limit: at most
 * {@link OAUTH_REQUESTS_PER_MINUTE} requests per client address a minute, of them at most
 * {@link OAUTH_REGISTRATIONS_PER_MINUTE} client registrations (each one a stored record), and at most
 * {@link OAUTH_REGISTRATIONS_PER_DAY} registrations in any 24 hours. A person signing in spends
 * about six requests and a device-flow client polling every 5 s twelve a minute; past the budget the answer is 429 with
 * `Retry-After` and `{ "error": "…" }`. Exempt and shared exactly as the failed-authentication limit (module comment).
 * @returns Koa middleware to put in front of each OAuth route.
 * @throws RateLimited (429) from the middleware when the address has spent a budget.
 */
export function createOAuthLimit(options: OAuthLimitOptions): Middleware {
  const maxRequests = options.maxRequests ?? OAUTH_REQUESTS_PER_MINUTE;
  const maxRegistrations = options.maxRegistrations ?? OAUTH_REGISTRATIONS_PER_MINUTE;
  const duration = options.durationMs ?? 60_000;
  const prefix = options.namespace ?? 'pds:limit';
  const requests = createWindowCounter({ ...options, max: maxRequests, namespace: `${prefix}:oauth` }, `OAuth request limit (${maxRequests}/min)`);
  const registrations = createWindowCounter(
    { ...options, max: maxRegistrations, namespace: `${prefix}:oauthreg` },
    `OAuth registration limit (${maxRegistrations}/min)`,
  );
  const maxPerDay = options.maxRegistrationsPerDay ?? OAUTH_REGISTRATIONS_PER_DAY;
  const daily = createWindowCounter(
    { ...options, durationMs: DAY_MS, max: maxPerDay, namespace: `${prefix}:oauthregday` },
    `OAuth registration limit (${maxPerDay}/day)`,
  );
  return async (ctx, next) => {
    const address = clientAddress(ctx, options.trustProxy);
    if (isExemptLoopback(address)) return next();
    const count = await requests(address);
    if (count.remaining <= 0) {
      throw budgetSpent(`too many requests to the sign-in (OAuth) endpoints from ${address}: at most ${maxRequests} a minute`, maxRequests, count, duration);
    }
    if (ctx.method === 'POST' && ctx.path === OAUTH_ROUTES.registration) {
      const registered = await registrations(address);
      if (registered.remaining <= 0) {
        throw budgetSpent(`too many client registrations from ${address}: at most ${maxRegistrations} a minute`, maxRegistrations, registered, duration);
      }
      const today = await daily(address);
      if (today.remaining <= 0) {
        throw budgetSpent(`too many client registrations from ${address}: at most ${maxPerDay} a day`, maxPerDay, today, DAY_MS);
      }
    }
    return next();
  };
}
