/**
 * The one client of pds's REST API, shared by `pds mcp` on stdio (`tools/remote.ts`) and the CLI verbs
 * (`bin/client/api.ts`): a call names a tool and its input, and the request is built from the tool's own REST binding
 * ({@link restRequest}: method, OpenAPI path, which fields go in the path, query or body), so no caller spells a path,
 * a parameter name or a limit again. One fetch, one timeout, one error decoding: an error answer becomes the
 * `PlatformError` the server threw, its class chosen by the `PDS-Error-Code` header (`errorFromResponse` in
 * `core/errors.ts`), its message the body's `error`, unchanged.
 */
import type { z } from 'zod';
import { errorFromResponse, Unavailable } from '../core/errors.js';
import { restRequest, type AnyTool, type ToolDefinition } from './define.js';
import { DOOR_HEADER } from './door.js';

/** How long one call may take before it is abandoned, milliseconds, on top of any `wait_seconds` it asks for. */
export const DEFAULT_TIMEOUT_MS = 30_000;

/** Options of {@link createRestClient}. */
export interface RestClientOptions {
  /** pds base URL, e.g. `http://localhost:8080`. */
  baseUrl: string;
  /** The bearer token, asked for before every request (a CLI session may have refreshed it). */
  token: () => string | Promise<string>;
  /** Called once when pds answers 401; resolves true when a new token is ready and the request should be sent again. */
  renew?: () => Promise<boolean>;
  /** Injectable fetch (tests, proxies); default the global one. */
  fetch?: typeof fetch;
  /** Per-call timeout, milliseconds (default {@link DEFAULT_TIMEOUT_MS}); a call's `wait_seconds` is added to it. */
  timeoutMs?: number;
  /** `X-PDS-Door`: `mcp` when an agent reads the messages (they then name tools and arguments, not paths). */
  door?: 'mcp';
  /** Appended to the message when pds cannot be reached, e.g. `start it with "npm start" or set PDS_BASE_URL`. */
  unreachableHint?: string;
}

/** The input a tool's schema accepts (what the caller writes: before defaults and coercion). */
export type ToolInput<T> = T extends ToolDefinition<infer I, z.ZodType> ? z.input<I> : never;
/** The output a tool's schema describes. */
export type ToolOutput<T> = T extends ToolDefinition<z.ZodObject, infer O> ? z.output<O> : never;

/** Runs tools on one pds over REST. */
export interface RestClient {
  /**
   * Call `tool` with `input` through its REST binding.
   * @returns the parsed JSON body of the 2xx answer.
   * @throws PlatformError as the server threw it (its `code` from `PDS-Error-Code`); `Unavailable` when pds cannot
   *   be reached or does not answer within the timeout.
   */
  call<T extends AnyTool>(tool: T, input: ToolInput<T>): Promise<ToolOutput<T>>;
}

/**
 * @example
 * const pds = createRestClient({ baseUrl: 'http://localhost:8080', token: () => process.env.PDS_TOKEN! });
 * const { items } = await pds.call(listServices, { team: 'acme' });
 */
export function createRestClient(options: RestClientOptions): RestClient {
  const fetchImpl = options.fetch ?? fetch;
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const send = async (tool: AnyTool, input: Record<string, unknown>): Promise<Response> => {
    const request = restRequest(tool, input);
    const waitSeconds = Number(input.wait_seconds ?? 0);
    const headers: Record<string, string> = { authorization: `Bearer ${await options.token()}`, accept: 'application/json' };
    if (request.body !== undefined) headers['content-type'] = 'application/json';
    if (options.door) headers[DOOR_HEADER] = options.door;
    try {
      return await fetchImpl(new URL(options.baseUrl + request.target), {
        method: request.method,
        headers,
        body: request.body === undefined ? undefined : JSON.stringify(request.body),
        signal: AbortSignal.timeout(timeoutMs + (Number.isFinite(waitSeconds) && waitSeconds > 0 ? waitSeconds * 1000 : 0)),
      });
    } catch (err) {
      const hint = options.unreachableHint ? `: ${options.unreachableHint}` : `: ${(err as Error).message}`;
      throw new Unavailable(`cannot reach pds at ${options.baseUrl}${hint}`, { cause: err });
    }
  };
  return {
    async call(tool, input) {
      const args = (input ?? {}) as Record<string, unknown>;
      let response = await send(tool, args);
      if (response.status === 401 && options.renew && (await options.renew())) response = await send(tool, args);
      let text: string;
      try {
        text = await response.text();
      } catch (err) {
        throw new Unavailable(`pds at ${options.baseUrl} stopped answering mid-response: ${(err as Error).message}`, { cause: err });
      }
      let payload: unknown;
      try {
        payload = text ? JSON.parse(text) : undefined;
      } catch {
        payload = undefined;
      }
      if (response.ok) return payload as never;
      const error = (payload as { error?: unknown } | undefined)?.error;
      throw errorFromResponse(response.status, response.headers, typeof error === 'string' ? error : `pds answered HTTP ${response.status}`);
    },
  };
}
