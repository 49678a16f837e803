/**
 * MCP over stdio (MCP spec 2025-11-25 and 2026-07-28 "Transports: stdio"), for `pds mcp`: the SDK's `serveStdio`
 * pins each connection to the era its opening message speaks and serves it with one server from the builder.
 *
 * The wire is ours, not the SDK's `StdioServerTransport`, for two behaviours the spec asks of a JSON-RPC peer and the
 * SDK's reader does not have: a line that is not JSON gets a `-32700` parse error (the SDK's reader skips it
 * silently), and a line that is JSON but not one JSON-RPC message (a batch array, a missing `method`) gets `-32600`.
 * At the end of the input the requests already read are answered before the connection closes, so
 * `printf '…' | pds mcp` prints every answer.
 */
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import { parseJSONRPCMessage, type JSONRPCMessage, type Transport } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { silentLogger, type Logger } from '../core/logger.js';
import type { McpServerBuilder } from './mcp.js';
import { protoKeyToolCall } from './mcp-edge.js';

/** How long the end of the input waits for requests still being answered, in milliseconds. */
const DRAIN_TIMEOUT_MS = 60_000;

type Id = string | number;

/** The `id` of a parsed line when it has a usable one (for the error answer), else `null`. */
function idOf(value: unknown): Id | null {
  const id = (value as { id?: unknown } | null)?.id;
  return typeof id === 'string' || typeof id === 'number' ? id : null;
}

/**
 * Newline-delimited JSON-RPC on a pair of streams, one message per line (MCP "stdio": messages MUST NOT contain
 * embedded newlines). Answers malformed lines itself; see the module comment.
 */
export class LineTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  /** Requests read whose answer has not been written yet. */
  private readonly pending = new Set<Id>();
  private drained?: () => void;
  private closed = false;
  private markDone!: () => void;
  /** Settles once the transport has closed (input ended and answered, or closed by the server). */
  readonly done = new Promise<void>((resolve) => (this.markDone = resolve));

  constructor(
    private readonly input: Readable,
    private readonly output: Writable,
  ) {}

  async start(): Promise<void> {
    const lines = createInterface({ input: this.input, crlfDelay: Infinity });
    lines.on('line', (line) => this.receive(line));
    lines.on('close', () => void this.endOfInput());
  }

  private receive(line: string): void {
    if (!line.trim()) return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (err) {
      this.reject(null, -32700, `Parse error: ${(err as Error).message}`);
      return;
    }
    if (Array.isArray(value)) {
      this.reject(null, -32600, 'Invalid Request: JSON-RPC batches are not supported; send one message per line');
      return;
    }
    const refused = protoKeyToolCall(value);
    if (refused) {
      void this.write(refused);
      return;
    }
    let message: JSONRPCMessage;
    try {
      message = parseJSONRPCMessage(value);
    } catch {
      this.reject(idOf(value), -32600, 'Invalid Request: not a JSON-RPC 2.0 request, notification or response');
      return;
    }
    if ('method' in message && 'id' in message) this.pending.add(message.id);
    this.onmessage?.(message);
  }

  private reject(id: Id | null, code: number, message: string): void {
    this.write({ jsonrpc: '2.0', id, error: { code, message } });
  }

  private write(message: unknown): Promise<void> {
    return new Promise((resolve, reject) => {
      this.output.write(`${JSON.stringify(message)}\n`, (err) => (err ? reject(err) : resolve()));
    });
  }

  async send(message: JSONRPCMessage): Promise<void> {
    if (this.closed) return;
    await this.write(message);
    if (('result' in message || 'error' in message) && message.id !== undefined && this.pending.delete(message.id) && !this.pending.size) {
      this.drained?.();
    }
  }

  /** Answer what was already asked (bounded), then close. */
  private async endOfInput(): Promise<void> {
    if (this.pending.size) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, DRAIN_TIMEOUT_MS);
        this.drained = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
    await this.close();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.onclose?.();
    this.markDone();
  }
}

/**
 * Serve MCP on `input`/`output` (default stdin/stdout) until the input ends and the requests read are answered.
 * @param build makes the server of the connection (called once, when the opening message fixes the era).
 * @param log receives errors the SDK reports (never written to `output`, which carries only the protocol).
 */
export async function serveMcpStdio(
  build: McpServerBuilder,
  options: { input?: Readable; output?: Writable; log?: Logger } = {},
): Promise<void> {
  const log = options.log ?? silentLogger;
  const wire = new LineTransport(options.input ?? process.stdin, options.output ?? process.stdout);
  serveStdio(() => build(), { transport: wire, onerror: (err) => log.debug({ err }, 'MCP stdio message refused') });
  await wire.done;
}
