/**
 * An upstream sign-in (issue 12): where pds's authorization server sends a person to prove who they are, and how the
 * answer becomes the user id the bearer forms give for the same person (README "Which claim of a Dex token is the
 * user"; a GitHub login for GitHub). The protocol is openid-client's (authorization code with PKCE S256, state, and
 * for OIDC a nonce); pds keeps only the per-attempt values between the two legs.
 */

/** What one sign-in attempt keeps between sending the person upstream and their return (opaque to the caller). */
export interface SignInAttempt {
  codeVerifier: string;
  state: string;
  nonce?: string;
}

/** The person as pds will know them. */
export interface SignInIdentity {
  userId: string;
  groups: string[];
}

/**
 * A sign-in provider (Dex or GitHub) pds's authorization server sends people to. Named apart from the 502
 * `Upstream` error of `core/errors.ts`, which is a different concept.
 */
export interface SignInProvider {
  /** `dex` or `github`: the path segment of its callback, `{base}/oauth/callback/{name}`. */
  readonly name: 'dex' | 'github';
  /** Button text on the sign-in page. */
  readonly title: string;
  /**
   * Where to send the browser, and the values to keep for {@link finish}.
   * @throws Unavailable when the upstream's metadata cannot be fetched.
   */
  start(redirectUri: string): Promise<{ url: URL; attempt: SignInAttempt }>;
  /**
   * Complete the sign-in from the callback URL the browser arrived at.
   * @throws Unauthenticated when the upstream refused (error in the callback, bad code, a token without a usable user
   *   id); Unavailable when it cannot be reached.
   */
  finish(callbackUrl: URL, attempt: SignInAttempt): Promise<SignInIdentity>;
}

/** Options every sign-in provider takes. */
export interface SignInProviderOptions {
  clientId: string;
  clientSecret: string;
  /** fetch for the upstream (tests, proxies). */
  fetch?: typeof fetch;
  /** Per-request timeout, seconds (default 5). */
  timeoutSeconds?: number;
}
