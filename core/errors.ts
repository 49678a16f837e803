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

/**
 * The response header that carries an error's {@link ErrorCode} beside the `{ "error" }` body (`docs/api.md#errors`), e.g.
 * `PDS-Error-Code: CONFIRMATION_REQUIRED`: two codes share 400, so the status alone cannot say which one it is.
 */
export const ERROR_CODE_HEADER = 'PDS-Error-Code';

/** The response headers of a confirmation request ({@link ConfirmationRequired}): its value, expiry and plan. */
export const CONFIRM_HEADERS = {
  confirm: 'PDS-Confirm',
  expiresAt: 'PDS-Confirm-Expires',
  plan: 'PDS-Confirm-Plan',
  /** `person`: only the person may answer (MCP elicitation), never the agent ({@link ConfirmationRequired.personOnly}). */
  answeredBy: 'PDS-Confirm-Answered-By',
} as const;

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
  /**
   * True when only the person may answer (an approval decision over MCP, issue 20 item 2): an MCP client that cannot
   * ask them (no elicitation) gets a refusal instead of the value, so an agent can never confirm it by itself.
   */
  readonly personOnly: boolean;
  constructor(message: string, details: { confirm: string; expiresAt: string; plan: string; personOnly?: boolean }) {
    const { personOnly = false, ...data } = details;
    super('CONFIRMATION_REQUIRED', message, {
      headers: {
        [CONFIRM_HEADERS.confirm]: details.confirm,
        [CONFIRM_HEADERS.expiresAt]: details.expiresAt,
        [CONFIRM_HEADERS.plan]: headerText(details.plan),
        ...(personOnly ? { [CONFIRM_HEADERS.answeredBy]: 'person' } : {}),
      },
      // A value only the person may use is not data for the agent.
      ...(personOnly ? {} : { data }),
    });
    this.confirm = details.confirm;
    this.expiresAt = details.expiresAt;
    this.plan = details.plan;
    this.personOnly = personOnly;
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

/** Codes by HTTP status for an answer without {@link ERROR_CODE_HEADER} (a proxy's, or Koa's own 4xx): 400 is a bad request. */
const CODE_BY_STATUS: ReadonlyMap<number, ErrorCode> = new Map(
  (Object.entries(HTTP_STATUS) as [ErrorCode, number][]).filter(([code]) => code !== 'CONFIRMATION_REQUIRED').map(([code, status]) => [status, code]),
);

function isErrorCode(value: string | null): value is ErrorCode {
  return value !== null && Object.hasOwn(HTTP_STATUS, value);
}

/** The quoted value of `name` in a `WWW-Authenticate` challenge, e.g. `scope` in `Bearer error="…", scope="a b"`. */
function challengeParam(challenge: string, name: string): string | undefined {
  return new RegExp(`(?:^|[\s,])${name}="([^"]*)"`).exec(challenge)?.[1];
}

/**
 * The error an HTTP error answer stands for, as the class that produced it: the inverse of the REST edge
 * (`rest/errors.ts`), so a client of the REST API (`pds mcp` on stdio, the CLI) throws what the server threw. The code
 * comes from {@link ERROR_CODE_HEADER}; without one (an answer from something in front of pds), from the status, a 400
 * being `INVALID_PARAMS` and anything unknown `UPSTREAM`. The structured fields travel back from their headers: a
 * confirmation request's {@link CONFIRM_HEADERS}, `Retry-After`, the `WWW-Authenticate` challenge (an
 * `insufficient_scope` one becomes {@link InsufficientScope}).
 * @param status the HTTP status, e.g. 404.
 * @param headers the answer's headers (a fetch `Headers` is case-insensitive, as HTTP is).
 * @param message the body's `error`.
 */
export function errorFromResponse(status: number, headers: { get(name: string): string | null }, message: string): PlatformError {
  const sent = headers.get(ERROR_CODE_HEADER);
  const code: ErrorCode = isErrorCode(sent) ? sent : (CODE_BY_STATUS.get(status) ?? 'UPSTREAM');
  const challenge = headers.get('WWW-Authenticate') ?? undefined;
  switch (code) {
    case 'INVALID_PARAMS':
      return new InvalidParams(message);
    case 'CONFIRMATION_REQUIRED':
      return new ConfirmationRequired(message, {
        confirm: headers.get(CONFIRM_HEADERS.confirm) ?? '',
        expiresAt: headers.get(CONFIRM_HEADERS.expiresAt) ?? '',
        plan: headers.get(CONFIRM_HEADERS.plan) ?? '',
        personOnly: headers.get(CONFIRM_HEADERS.answeredBy) === 'person',
      });
    case 'UNAUTHENTICATED':
      return new Unauthenticated(message, challenge ? { challenge } : {});
    case 'FORBIDDEN': {
      const scope = challenge && /error="insufficient_scope"/.test(challenge) ? challengeParam(challenge, 'scope') : undefined;
      return scope === undefined ? new Forbidden(message) : new InsufficientScope(message, scope.split(' ').filter(Boolean), challengeParam(challenge!, 'resource_metadata'));
    }
    case 'NOT_FOUND':
      return new NotFound(message);
    case 'CONFLICT':
      return new Conflict(message);
    case 'RATE_LIMITED': {
      const retryAfter = Number(headers.get('Retry-After'));
      return new RateLimited(message, Number.isFinite(retryAfter) && retryAfter >= 0 ? retryAfter : 60);
    }
    case 'UPSTREAM':
      return new Upstream(message);
    case 'UNAVAILABLE':
      return new Unavailable(message);
  }
}
