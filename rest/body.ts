/**
 * Request bodies and query strings at the HTTP edge (issue 7 item 11): JSON only, at most 1 MiB once decoded, and
 * every way a body can be unreadable answered with a 4xx `{ "error" }` that says what was wrong — never a 500, and
 * nothing for the log (a client's garbage is not a server fault).
 *
 * - {@link readJsonBody}: parses a POST body sent as `application/json` (gzip/deflate/br decoded first) with
 *   @koa/bodyparser. Bad JSON → 400 `invalid JSON body: …`; bytes that are not what `Content-Encoding` says → 400;
 *   an unknown encoding → 415; over the limit → 413.
 * - {@link jsonObjectBody}, {@link queryParameters}: what the REST adapter takes as tool input. A body that is not
 *   JSON → 415 naming the type expected; a key `__proto__`, `constructor` or `prototype` anywhere → 400 naming where.
 */
import { bodyParser } from '@koa/bodyparser';
import type { Context, Middleware } from 'koa';
import { InvalidParams } from '../core/errors.js';

/** Largest body accepted, after decompression, in bytes (1 MiB). */
export const BODY_LIMIT_BYTES = 1024 * 1024;

/** Keys refused in any body or query: they name `Object.prototype` machinery, never a parameter. */
const PROTOTYPE_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

const REFUSED_KEYS = `${[...PROTOTYPE_KEYS].join(', ')} are refused`;

interface BodyError {
  status?: number;
  type?: string;
  code?: string;
  message?: string;
}

/**
 * The caller-facing form of a body-reading failure, or `undefined` for one that is not the caller's fault.
 * co-body gives JSON syntax errors status 400 without a type; raw-body's errors have a status and a type.
 */
function describeBodyError(ctx: Context, err: BodyError): { status: number; message: string } | undefined {
  const encoding = ctx.get('content-encoding') || 'identity';
  if (err.status === 413 || err.type === 'entity.too.large') {
    return { status: 413, message: `request body too large: at most ${BODY_LIMIT_BYTES / 1024 / 1024} MiB of JSON (after decompression)` };
  }
  // zlib and brotli stream errors carry a code but no HTTP status: the bytes were not what the encoding promised.
  if (err.status === undefined && encoding !== 'identity') {
    return { status: 400, message: `request body could not be decoded: it is sent with Content-Encoding "${encoding}" but is not ${encoding} data` };
  }
  if (err.status === 415) {
    return { status: 415, message: `unsupported Content-Encoding "${encoding}": send the body uncompressed, or as gzip, deflate or br` };
  }
  if (err.status === 400 && err.message?.includes('forbidden prototype property')) {
    return { status: 400, message: `invalid JSON body: the key "__proto__" is not allowed (${REFUSED_KEYS})` };
  }
  if (err.status === 400 && !err.type) return { status: 400, message: `invalid JSON body: ${err.message}` };
  if (err.status && err.status >= 400 && err.status < 500) return { status: err.status, message: `request body could not be read: ${err.message}` };
  return undefined;
}

/**
 * Koa middleware: parse the JSON body of a POST into `ctx.request.body`; other methods and other content types pass
 * unread (`ctx.request.body` is then `{}` for a POST). Mount it after authentication, so a body is read only for a
 * caller who proved who they are.
 * @throws HttpError 400, 413 or 415 with a message saying what was wrong with the body.
 */
export function readJsonBody(): Middleware {
  const parse = bodyParser({ enableTypes: ['json'], jsonLimit: BODY_LIMIT_BYTES, encoding: 'utf-8' });
  return async (ctx, next) => {
    if (ctx.method !== 'POST' && ctx.method !== 'PUT') return next();
    try {
      await parse(ctx, async () => {});
    } catch (err) {
      const described = describeBodyError(ctx, err as BodyError);
      if (!described) throw err;
      ctx.throw(described.status, described.message);
    }
    return next();
  };
}

/**
 * Where `value` holds a refused key, as a dotted path (`parameters.constructor`), or `undefined`. Iterative, so a
 * body nested a million levels deep cannot overflow the stack.
 */
export function prototypeKeyPath(value: unknown, prefix = ''): string | undefined {
  const pending: [unknown, string][] = [[value, prefix]];
  while (pending.length > 0) {
    const [current, path] = pending.pop()!;
    if (current === null || typeof current !== 'object') continue;
    for (const key of Object.keys(current)) {
      const here = path ? `${path}.${key}` : key;
      if (PROTOTYPE_KEYS.has(key)) return here;
      pending.push([(current as Record<string, unknown>)[key], here]);
    }
  }
  return undefined;
}

function refusePrototypeKeys(value: unknown): void {
  const path = prototypeKeyPath(value);
  if (path !== undefined) {
    throw new InvalidParams(`invalid parameters: ${path}: "${path.split('.').at(-1)}" is not allowed as a name (${REFUSED_KEYS})`);
  }
}

/**
 * The JSON body of a REST POST as it was sent (`undefined` when there is none).
 * @throws HttpError 415 when a body was sent without `Content-Type: application/json`.
 * @throws InvalidParams when it holds a `__proto__`, `constructor` or `prototype` key, at any depth.
 */
export function jsonBody(ctx: Context): unknown {
  const type = ctx.request.is('application/json');
  // No body at all (`Content-Length: 0` too): the tool's validation names what is missing.
  if (type === null || ctx.request.length === 0) return undefined;
  if (type === false) {
    ctx.throw(415, `unsupported Content-Type "${ctx.get('content-type') || '(none)'}": send the parameters as JSON with "Content-Type: application/json"`);
  }
  const body = ctx.request.body;
  refusePrototypeKeys(body);
  return body;
}

/**
 * The JSON body of a REST POST as a parameter object (null prototype), `{}` when no body was sent.
 * @throws InvalidParams when the body is JSON but not an object (an array, for instance).
 */
export function jsonObjectBody(ctx: Context): Record<string, unknown> {
  const body = jsonBody(ctx);
  if (body === undefined) return Object.create(null);
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new InvalidParams('invalid parameters: the request body must be a JSON object of parameters, e.g. {"team": "acme"}');
  }
  return Object.assign(Object.create(null), body);
}

/**
 * The query string as parameters: a repeated name takes its last value.
 * @throws InvalidParams for a `__proto__`, `constructor` or `prototype` name.
 */
export function queryParameters(ctx: Pick<Context, 'query'>): Record<string, unknown> {
  refusePrototypeKeys(ctx.query);
  const out: Record<string, unknown> = Object.create(null);
  for (const [k, v] of Object.entries(ctx.query)) out[k] = Array.isArray(v) ? v[v.length - 1] : v;
  return out;
}
