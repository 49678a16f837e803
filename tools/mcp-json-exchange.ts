/**
 * A Node transport for the commonest stateless MCP exchange: one JSON-RPC request in one POST, answered with one JSON
 * body (MCP spec 2025-11-25 "Transports", Streamable HTTP: "the server MUST either return Content-Type:
 * text/event-stream … or Content-Type: application/json";
 * https://modelcontextprotocol.io/specification/2025-11-25/basic/transports). It implements the SDK's public
 * `Transport` interface (`@modelcontextprotocol/server`'s `Transport`, the one its own `PerRequestHTTPServerTransport`
 * implements), so the SDK's `Server` still does all of JSON-RPC: dispatch, the era ladder, result validation and error
 * responses. What it leaves out is the SDK's Node transport's round trip through WHATWG `Request` and `Response`
 * objects. With the output serialised once and the answer written in pieces ({@link responsePieces}), pds's CPU per
 * `tools/call` fell by 25–40 % (BENCHMARKS.md, "Third pass: MCP answers through a JSON exchange of our own").
 *
 * Only exchanges whose answer cannot differ from the SDK transport's come here ({@link jsonExchangeMessage}); every
 * other request (a notification, `initialize`, a progress token that needs SSE, a header the SDK would refuse) goes
 * to `NodeStreamableHTTPServerTransport` as before, which answers it exactly as it did.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  isInitializeRequest,
  isJsonContentType,
  parseJSONRPCMessage,
  SUPPORTED_PROTOCOL_VERSIONS,
  type JSONRPCMessage,
  type JSONRPCRequest,
  type Transport,
} from '@modelcontextprotocol/server';
import { outputJsonString } from './invoke.js';

/**
 * The message of a POST this transport may answer, or `undefined` when the SDK's transport must: the body is one
 * JSON-RPC request other than `initialize`, without a progress token (whose notifications need SSE); `Accept` names
 * both `application/json` and `text/event-stream` and `Content-Type` is JSON (else the SDK answers 406 or 415); and
 * `MCP-Protocol-Version` is absent or one the SDK supports (else 400). The message is parsed with the SDK's
 * `parseJSONRPCMessage`, as its transport parses it.
 * @param body the parsed request body (`rest/mcp.ts` has read it and refused batches).
 */
export function jsonExchangeMessage(req: IncomingMessage, body: unknown): JSONRPCRequest | undefined {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return undefined;
  const { id, method, params } = body as { id?: unknown; method?: unknown; params?: { _meta?: { progressToken?: unknown } } };
  if (id === undefined || typeof method !== 'string' || method === 'initialize') return undefined;
  if (params?._meta?.progressToken !== undefined) return undefined;
  const accept = req.headers.accept;
  if (!accept?.includes('application/json') || !accept.includes('text/event-stream')) return undefined;
  if (!isJsonContentType(req.headers['content-type'] ?? null)) return undefined;
  const version = req.headers['mcp-protocol-version'];
  if (version !== undefined && (typeof version !== 'string' || !SUPPORTED_PROTOCOL_VERSIONS.includes(version))) return undefined;
  let message: JSONRPCMessage;
  try {
    message = parseJSONRPCMessage(body);
  } catch {
    return undefined;
  }
  return 'id' in message && 'method' in message && !isInitializeRequest(message) ? (message as JSONRPCRequest) : undefined;
}

/** A tool's output and `JSON.stringify` of it, as {@link JsonExchangeTransport.noteStructuredOutput} receives them. */
export interface StructuredOutput {
  output: object;
  json: string;
}

type Entries = Record<string, unknown>;

/** A plain record `JSON.stringify` would serialise key by key (no array, no `toJSON`). */
function isRecord(value: unknown): value is Entries {
  return value !== null && typeof value === 'object' && !Array.isArray(value) && typeof (value as Entries).toJSON !== 'function';
}

/** Whether `copy` has the same own enumerable keys as `original`, in the same order, with identical values. */
function sameEntries(copy: Entries, original: Entries): boolean {
  const keys = Object.keys(copy);
  const originalKeys = Object.keys(original);
  if (keys.length !== originalKeys.length) return false;
  for (let i = 0; i < keys.length; i++) if (keys[i] !== originalKeys[i] || copy[keys[i]] !== original[keys[i]]) return false;
  return true;
}

/** Below this many characters, adjacent pieces are joined: a copy that small costs less than another chunk to write. */
const SMALL_PIECE = 256;

/** Text gathered in pieces; a large piece (a value's JSON) is kept as it is, never copied into a joined string. */
class Pieces {
  readonly list: string[] = [];
  add(text: string): void {
    const last = this.list.length - 1;
    if (last >= 0 && text.length < SMALL_PIECE && this.list[last].length < SMALL_PIECE) this.list[last] += text;
    else this.list.push(text);
  }
}

/**
 * Adds `record` as `JSON.stringify` writes it, member by member, each value's JSON a piece of its own; the values of
 * the members named in `keys` are written by `value(name)` instead. A value `JSON.stringify` leaves out (`undefined`,
 * a function) is left out here.
 */
function addObject(pieces: Pieces, record: Entries, keys: readonly string[], value: (name: string) => void): void {
  let separator = '{';
  for (const name of Object.keys(record)) {
    const own = keys.includes(name);
    const json = own ? '' : (JSON.stringify(record[name]) as string | undefined);
    if (json === undefined) continue;
    pieces.add(`${separator}${JSON.stringify(name)}:`);
    separator = ',';
    if (own) value(name);
    else pieces.add(json);
  }
  pieces.add(separator === '{' ? '{}' : '}');
}

/** Whether `content` is the one text block `tools/mcp.ts` makes of the output's JSON: `[{ type: 'text', text: json }]`. */
function isOutputTextBlock(content: unknown, json: string): boolean {
  if (!Array.isArray(content) || content.length !== 1 || !isRecord(content[0])) return false;
  const keys = Object.keys(content[0]);
  return keys.length === 2 && keys[0] === 'type' && keys[1] === 'text' && content[0].type === 'text' && content[0].text === json;
}

/**
 * The text of `JSON.stringify(message)`, in pieces to write one after the other. When `message.result.structuredContent`
 * is a copy of `structured.output` with the same entries (the SDK validates a `tools/call` result into a shallow copy),
 * its piece is `structured.json` itself rather than a second serialisation of the output, and no large value is
 * copied into a joined string. When `result.content` is the one text block of that JSON, its string is the one kept
 * per frozen output (`outputJsonString` of `tools/invoke.ts`). Anything else is one piece from `JSON.stringify`.
 * @example responsePieces({ jsonrpc: '2.0', id: 1, result: { isError: false } }) // ['{"jsonrpc":"2.0","id":1,"result":{"isError":false}}']
 */
export function responsePieces(message: JSONRPCMessage, structured?: StructuredOutput): string[] {
  const result = (message as { result?: unknown }).result;
  const content = isRecord(result) ? result.structuredContent : undefined;
  const reusable =
    structured && isRecord(message) && isRecord(result) && isRecord(content) && isRecord(structured.output) && sameEntries(content, structured.output);
  if (!reusable) return [JSON.stringify(message)];
  const pieces = new Pieces();
  const textBlock = isOutputTextBlock(result.content, structured.json);
  const addResult = (name: string) => {
    if (name === 'structuredContent') pieces.add(structured.json);
    else {
      pieces.add('[{"type":"text","text":');
      pieces.add(outputJsonString(structured.output, structured.json));
      pieces.add('}]');
    }
  };
  addObject(pieces, message, ['result'], () => addObject(pieces, result, textBlock ? ['structuredContent', 'content'] : ['structuredContent'], addResult));
  return pieces.list;
}

/**
 * One exchange: {@link JsonExchangeTransport.handle} hands the request to the connected server and writes the response
 * to that request as `200 application/json`, as the SDK's transport does in its JSON response mode. Notifications and
 * server-to-client requests related to the call are dropped, as there (a client that wants progress sends a progress
 * token and is served over SSE by the SDK). If the client goes away first, the transport closes, which aborts the
 * handler (the SDK's `Protocol` aborts in-flight handlers when its transport closes).
 */
export class JsonExchangeTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: Transport['onmessage'];
  #answered = false;
  #closed = false;
  #id: JSONRPCRequest['id'] | undefined;
  #structured: StructuredOutput | undefined;

  constructor(private readonly res: ServerResponse) {}

  async start(): Promise<void> {}

  /** Delivers `message` to the server; resolves once its response is written, or the client is gone. */
  handle(message: JSONRPCRequest): Promise<void> {
    this.#id = message.id;
    const done = new Promise<void>((resolve) => {
      this.res.once('finish', resolve);
      this.res.once('close', () => {
        if (!this.#answered) void this.close();
        resolve();
      });
    });
    this.onmessage?.(message);
    return done;
  }

  /**
   * Called by a `tools/call` handler with its output and the JSON text of it the handler has already made for the
   * result's text block (`tools/mcp.ts`), so the response reuses that text for `structuredContent` rather than
   * serialising the output a second time ({@link responsePieces}).
   */
  noteStructuredOutput(output: object, json: string): void {
    this.#structured = { output, json };
  }

  async send(message: JSONRPCMessage): Promise<void> {
    if (this.#answered || this.#closed) return;
    // The server's answer to the request: a result or an error with its id (a cheap look; the SDK's own predicates
    // validate the whole result again, which its encoder has just done).
    if (!('result' in message || 'error' in message) || !('id' in message) || message.id !== this.#id) return;
    this.#answered = true;
    // Written piece by piece, corked into one write: the output's JSON is sent as it is, never copied into a
    // joined string (each copy of a 24 KB answer was as much garbage again).
    const pieces = responsePieces(message, this.#structured);
    let length = 0;
    for (const piece of pieces) length += Buffer.byteLength(piece);
    this.res.writeHead(200, { 'content-type': 'application/json', 'content-length': length });
    this.res.cork();
    for (const piece of pieces) this.res.write(piece);
    this.res.end();
    this.res.uncork();
  }

  /** Closes without answering (the client left): the server aborts the handler. After an answer nothing is pending. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.onclose?.();
  }
}
