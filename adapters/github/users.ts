/**
 * PAT → user: who a GitHub classic personal access token belongs to and which OAuth scopes it carries, from
 * `GET /user` (GitHub REST API; the scopes come back in the `X-OAuth-Scopes` response header).
 *
 * Octokit errors stop here: a token GitHub rejects becomes `Unauthenticated`, a GitHub that cannot be reached, times
 * out, fails (5xx) or rate-limits us becomes `Unavailable`. The token is sent only in the `Authorization` header;
 * Octokit redacts it from the errors kept as `cause`.
 */
import { Octokit } from '@octokit/rest';
import { Unauthenticated, Unavailable } from '../../core/errors.js';
import type { GitHubTokenOwner, GitHubUserLookup } from '../../core/ports.js';

export type { GitHubTokenOwner, GitHubUserLookup } from '../../core/ports.js';

export interface GitHubUserLookupOptions {
  /** API root without trailing slash (`PDS_GITHUB_API_URL`), e.g. `https://api.github.com`. */
  baseUrl: string;
  /** fetch implementation (tests, proxies); defaults to the global one. */
  fetch?: typeof fetch;
  /** Abort the call after this many milliseconds (default 5000). */
  timeoutMs?: number;
}


/**
 * @example
 * const lookup = createGitHubUserLookup({ baseUrl: config.githubApiUrl });
 * const { login, scopes } = await lookup(pat);
 * @throws Unauthenticated `bad credentials: GitHub rejected the token` (GitHub 401) or `GitHub refused the token` (403).
 * @throws Unavailable `GitHub could not be reached to validate the token` (network, timeout, 5xx, API rate limit).
 */
export function createGitHubUserLookup(options: GitHubUserLookupOptions): GitHubUserLookup {
  const timeoutMs = options.timeoutMs ?? 5000;
  // One client for every token: the token travels per request, so no Octokit is built on the hot path.
  const octokit = new Octokit({
    baseUrl: options.baseUrl,
    userAgent: 'pds',
    request: options.fetch ? { fetch: options.fetch } : {},
    log: { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} },
  });
  return async (token) => {
    let response;
    try {
      response = await octokit.rest.users.getAuthenticated({
        headers: { authorization: `token ${token}` },
        request: { signal: AbortSignal.timeout(timeoutMs) },
      });
    } catch (cause) {
      throw translate(cause);
    }
    const login = (response.data as { login?: unknown }).login;
    if (typeof login !== 'string' || login === '') {
      throw new Unavailable('GitHub could not be reached to validate the token: its answer named no user', { cause: response.data });
    }
    const header = response.headers['x-oauth-scopes'];
    const scopes = typeof header === 'string' ? header.split(',').map((s) => s.trim()).filter(Boolean) : [];
    return { login, scopes };
  };
}

function translate(cause: unknown): Error {
  const status = (cause as { status?: unknown }).status;
  const headers = ((cause as { response?: { headers?: Record<string, string> } }).response?.headers ?? {});
  if (status === 401) return new Unauthenticated('bad credentials: GitHub rejected the token', { cause });
  const rateLimited = status === 429 || (status === 403 && headers['x-ratelimit-remaining'] === '0');
  if (rateLimited) {
    return new Unavailable('GitHub could not be reached to validate the token: its API rate limit is exhausted; retry later', { cause });
  }
  if (status === 403) return new Unauthenticated('GitHub refused the token (403)', { cause });
  if (typeof status === 'number' && status >= 400 && status < 500 && status !== 408) {
    return new Unauthenticated(`GitHub refused the token (${status})`, { cause });
  }
  return new Unavailable('GitHub could not be reached to validate the token; retry shortly', { cause });
}
