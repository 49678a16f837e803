/**
 * The one error tree of pds (STYLE.md "One error tree, two edges").
 *
 * Every failure a caller may see is a {@link PlatformError} with a stable `code`. `rest/` maps the code to an HTTP
 * status and renders `{ "error": message }`; `tools/mcp.ts` renders the same message as a tool result with
 * `isError: true`. Anything thrown that is not a `PlatformError` is a bug: logged, answered 500 with no detail.
 */

/** Stable, machine-readable error codes. */
export type ErrorCode =
  | 'INVALID_PARAMS'
  | 'CONFIRMATION_REQUIRED'
  | 'UNAUTHENTICATED'
  | 'FORBIDDEN'
  | 'NOT_FOUND'
  | 'CONFLICT'
  | 'RATE_LIMITED'
  | 'UPSTREAM'
  | 'UNAVAILABLE';

/** HTTP status per code: the single table both edges use (`docs/api.md#errors`). */
export const HTTP_STATUS: Record<ErrorCode, number> = {
  INVALID_PARAMS: 400,
  CONFIRMATION_REQUIRED: 400,
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  CONFLICT: 409,
  RATE_LIMITED: 429,
  UPSTREAM: 502,
  UNAVAILABLE: 503,
};

/** Base class: `message` is safe to show to the caller; `cause` (upstream detail) is for logs only. */
export class PlatformError extends Error {
  readonly code: ErrorCode;
  /** Extra response headers the HTTP edge should send (e.g. `WWW-Authenticate`, `Retry-After`). */
  readonly headers: Record<string, string>;
  /**
   * Structured fields of the failure for machines (e.g. a confirmation value): MCP sends them as the error result's
   * `structuredContent`; REST keeps the contract's `{ "error" }` body and carries them in {@link headers}.
   */
  readonly data?: Readonly<Record<string, unknown>>;
  constructor(
    code: ErrorCode,
    message: string,
    options: { cause?: unknown; headers?: Record<string, string>; data?: Record<string, unknown> } = {},
  ) {
    super(message, { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.headers = options.headers ?? {};
    if (options.data) this.data = options.data;
  }
  get status(): number {
    return HTTP_STATUS[this.code];
  }
}

/** 400: the input broke a rule; the message names the field and what is allowed. */
export class InvalidParams extends PlatformError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('INVALID_PARAMS', message, options);
  }
}

/** A header value made of visible ASCII only (a plan is built from DNS labels and tags; anything else becomes `?`). */
function headerText(text: string): string {
  return text.replace(/[^\x20-\x7e]/g, '?');
}

/**
 * 400: a destructive operation needs a person's confirmation (`docs/api.md#errors`: execute status 400). Nothing was changed. The
 * message says what would happen and carries the value (REST callers read it there, as ever); `data` carries it for
 * machines: `{ confirm, expiresAt, plan }`. Over REST the body stays `{ "error" }` and the same data travels in the
 * headers `PDS-Confirm`, `PDS-Confirm-Expires` and `PDS-Confirm-Plan` (so `pds mcp` on stdio can ask the person).
 */
export class ConfirmationRequired extends PlatformError {
  /** The value to send back as `confirm`. */
  readonly confirm: string;
  /** ISO 8601 UTC time after which {@link confirm} is refused. */
  readonly expiresAt: string;
  /** What the operation will do, one line. */
  readonly plan: string;
  constructor(message: string, details: { confirm: string; expiresAt: string; plan: string }) {
    super('CONFIRMATION_REQUIRED', message, {
      headers: { 'PDS-Confirm': details.confirm, 'PDS-Confirm-Expires': details.expiresAt, 'PDS-Confirm-Plan': headerText(details.plan) },
      data: { ...details },
    });
    this.confirm = details.confirm;
    this.expiresAt = details.expiresAt;
    this.plan = details.plan;
  }
}

/** 401: no usable credentials. Carries a `WWW-Authenticate` challenge (RFC 6750). */
export class Unauthenticated extends PlatformError {
  constructor(message: string, options: { cause?: unknown; challenge?: string } = {}) {
    super('UNAUTHENTICATED', message, {
      cause: options.cause,
      headers: { 'WWW-Authenticate': options.challenge ?? 'Bearer realm="pds"' },
    });
  }
}

/** 403: authenticated, but not allowed (`docs/api.md#errors`: "admin access required", "access denied to this tenant"). */
export class Forbidden extends PlatformError {
  constructor(message: string) {
    super('FORBIDDEN', message);
  }
}

/**
 * 403: the token is valid but its OAuth scopes do not cover the call (RFC 6750 §3.1 `insufficient_scope`). Carries the
 * challenge naming the scopes needed, so an MCP client can ask the person for them and retry (MCP "step-up").
 */
export class InsufficientScope extends PlatformError {
  /** The scopes the call needs, e.g. `['pds:write']`. */
  readonly scopes: readonly string[];
  /**
   * @param scopes the scopes the call needs (all of them, space-joined into the challenge's `scope`).
   * @param resourceMetadata URL of the RFC 9728 metadata, added to the challenge as `resource_metadata`.
   */
  constructor(message: string, scopes: readonly string[], resourceMetadata?: string) {
    const challenge = [`Bearer realm="pds"`, `error="insufficient_scope"`, `scope="${scopes.join(' ')}"`];
    if (resourceMetadata) challenge.push(`resource_metadata="${resourceMetadata}"`);
    super('FORBIDDEN', message, { headers: { 'WWW-Authenticate': challenge.join(', ') }, data: { requiredScopes: [...scopes] } });
    this.scopes = scopes;
  }
}

/** 404: the named thing does not exist (or the caller may not know it exists). */
export class NotFound extends PlatformError {
  constructor(message: string) {
    super('NOT_FOUND', message);
  }
}

/** 409: the request conflicts with current state (e.g. onboarding a service twice). */
export class Conflict extends PlatformError {
  constructor(message: string) {
    super('CONFLICT', message);
  }
}

/** 429: a per-user limit was reached; `retryAfterSeconds` feeds `Retry-After`. */
export class RateLimited extends PlatformError {
  readonly retryAfterSeconds: number;
  constructor(message: string, retryAfterSeconds: number, headers: Record<string, string> = {}) {
    super('RATE_LIMITED', message, { headers: { 'Retry-After': String(retryAfterSeconds), ...headers } });
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/** 502: an upstream system (GitHub, Kubernetes, Argo, Loki) failed; the upstream error is the `cause`. */
export class Upstream extends PlatformError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('UPSTREAM', message, options);
  }
}

/** 503: a dependency pds needs to answer (e.g. GitHub for an uncached PAT) cannot be reached right now. */
export class Unavailable extends PlatformError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('UNAVAILABLE', message, options);
  }
}

/** True for errors that belong to the tree (and so may be shown to callers). */
export function isPlatformError(err: unknown): err is PlatformError {
  return err instanceof PlatformError;
}
