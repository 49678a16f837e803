/**
 * invoke(): the one path every call takes, whichever transport it came by (DESIGN.md "One capability, one
 * definition"): read-only gate → parse input with zod → token scopes → authorize → write limit → handler. REST and MCP only
 * translate to and from it. Operation tools audit inside their handler, where the workflow name is known.
 */
import { Forbidden } from '../core/errors.js';
import { protectedResourceMetadataUrl } from '../core/names.js';
import type { Platform } from '../core/ports.js';
import type { Identity } from '../auth/identity.js';
import { authorize } from './access.js';
import { authorizeCi, refuseCiTool } from './ci.js';
import type { AnyStream, AnyTool, StreamEvent, ToolContext, ToolSettings, WriteLimiter } from './define.js';
import type { Door } from '../core/operations/index.js';
import { MCP_DOOR } from './door.js';
import type { CallInteraction } from './interaction.js';
import { requireScopes } from './scopes.js';
import { parseInput } from './validation.js';

/** Validated outputs of frozen (constant) handler results, so a static answer is checked once, not per call. */
const frozenOutputs = new WeakMap<object, unknown>();

/** Freeze a value and everything it holds. */
export function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

/** `make()` once per frozen object `output`, kept in `cache`; anything else (not frozen, not an object) every time. */
function oncePerFrozen<T>(cache: WeakMap<object, T>, output: unknown, make: () => T): T {
  if (output === null || typeof output !== 'object' || !Object.isFrozen(output)) return make();
  let value = cache.get(output);
  if (value === undefined) cache.set(output, (value = make()));
  return value;
}

/** JSON text of frozen outputs, serialized once. */
const frozenJson = new WeakMap<object, string>();

/** A tool output as JSON text (the REST body, the MCP text block); a frozen output is serialized only once. */
export function outputJson(output: unknown): string {
  return oncePerFrozen(frozenJson, output, () => JSON.stringify(output));
}

/** {@link outputJsonString}'s answers for frozen outputs. */
const frozenJsonStrings = new WeakMap<object, string>();

/**
 * `JSON.stringify(json)`, where `json` is {@link outputJson} of `output`: the output's JSON as a JSON string, as an MCP
 * text block's `text` is written (`tools/mcp-json-exchange.ts`). Made once per frozen output, as `outputJson` is; built
 * anew per call it and the flat copy V8 made of it to count its bytes were a third of what a `tools/call` of the
 * operation catalog allocated (BENCHMARKS.md, "The drain's `Set` of responses in flight").
 * @example outputJsonString(output, outputJson(output)) // '"{\"operations\":[…]}"'
 */
export function outputJsonString(output: unknown, json: string): string {
  return oncePerFrozen(frozenJsonStrings, output, () => {
    const text = JSON.stringify(json);
    // JSON.stringify answers a large string as a tree of parts; counting its bytes once flattens it in place, so every
    // answer that counts its bytes before writing it reads it without copying it again.
    Buffer.byteLength(text);
    return text;
  });
}

/**
 * The settings invoke() reads, named as in `config.ts`: `readOnly` here, the rest becomes the {@link ToolSettings}
 * handed to handlers. Never the whole configuration, which holds secrets.
 */
export interface InvokeConfig {
  /** `PDS_READ_ONLY`: refuse every write tool. */
  readOnly: boolean;
  /** `PDS_BASE_URL`, e.g. `https://pds.example.com`. */
  baseUrl: string;
  /** `PDS_DOMAIN`. */
  domain: string;
  /** `PDS_WORKFLOW_NAMESPACE`. */
  workflowNamespace: string;
  /** `PDS_ARGOCD_NAMESPACE`. */
  argocdNamespace: string;
}

/** What invoke() needs besides the call itself; built once by the composition root. */
export interface InvokeDeps {
  platform: Platform;
  config: InvokeConfig;
  confirmSecret: Uint8Array;
  /** The 20/min per-user write budget; absent means unlimited (tests, stdio without a server). */
  writeLimiter?: WriteLimiter;
}

/** How a call reached pds: the door whose words its messages use, and (MCP) its interaction. */
export interface CallVia {
  /** Default: MCP words (`tools/door.ts`); the REST edge passes its own. */
  door?: Door;
  /** Progress, cancellation and questions, when the call came over MCP; handed to the handler. */
  interaction?: CallInteraction;
}

/**
 * Run one tool for one caller.
 * @param raw the input as the transport received it (REST path+query+body merged, or MCP `arguments`).
 * @param via the caller's door and, over MCP, its interaction.
 * @returns the tool's output (the REST body and the MCP `structuredContent`).
 * @throws PlatformError — `INVALID_PARAMS`, `FORBIDDEN` (also for any write when `PDS_READ_ONLY=true`),
 *   `NOT_FOUND`, `RATE_LIMITED`, `UPSTREAM`, … as the tool and its adapters decide.
 */
export async function invoke(tool: AnyTool, raw: unknown, identity: Identity, deps: InvokeDeps, via: CallVia = {}): Promise<unknown> {
  if (tool.kind === 'write' && deps.config.readOnly) {
    throw new Forbidden(`${tool.name} changes the platform and this pds is read-only (PDS_READ_ONLY=true)`);
  }
  if (identity.ci) refuseCiTool(tool, identity.ci);
  const input = parseInput(tool.input, raw);
  if (tool.dispatch) {
    const next = tool.dispatch(input);
    return invoke(next.tool, next.input, identity, deps, via);
  }
  // A CI caller is no tenant member: its own rule (tools/ci.ts) stands in for the role check.
  if (identity.ci) await authorizeCi(tool, input, { userId: identity.userId, ci: identity.ci }, deps.platform);
  requireScopes(tool, identity, protectedResourceMetadataUrl(deps.config.baseUrl));
  if (!identity.ci) await authorize(tool.access, input, identity, deps.platform.backend);
  if (tool.kind === 'write') await deps.writeLimiter?.consume(identity);
  const ctx: ToolContext = {
    identity,
    platform: deps.platform,
    settings: settingsOf(deps.config),
    confirmSecret: deps.confirmSecret,
    interaction: via.interaction,
    door: via.door ?? MCP_DOOR,
  };
  // The output schema is the contract: extra adapter fields are stripped, a wrong shape is a bug (500), never sent.
  const result = await tool.handler(input, ctx);
  if (result === null || typeof result !== 'object' || !Object.isFrozen(result)) return tool.output.parse(result);
  // A frozen result cannot change, so its validated (and equally frozen) form is reused.
  let output = frozenOutputs.get(result);
  if (output === undefined) frozenOutputs.set(result, (output = deepFreeze(tool.output.parse(result))));
  return output;
}

/**
 * Start one stream for one caller (`tools/define.ts` {@link AnyStream}): the same door as {@link invoke} — parse input
 * with zod → token scopes → authorize — then the stream's handler, whose own checks (e.g. "may this caller see this
 * workflow") run before the first event. Each event is checked against the stream's event schema as it is read.
 * @param signal aborted when the caller goes away; the events then end.
 * @returns the events, once the stream has started.
 * @throws PlatformError — `INVALID_PARAMS`, `FORBIDDEN`, `NOT_FOUND`, … before any event.
 */
export async function invokeStream(
  stream: AnyStream,
  raw: unknown,
  identity: Identity,
  deps: InvokeDeps,
  via: CallVia & { signal: AbortSignal },
): Promise<AsyncIterable<StreamEvent>> {
  if (identity.ci) throw new Forbidden(`${stream.name} is not for CI: a GitHub Actions token may only run deploy-service with action=deploy`);
  const input = parseInput(stream.input, raw);
  requireScopes(stream, identity, protectedResourceMetadataUrl(deps.config.baseUrl));
  await authorize(stream.access, input, identity, deps.platform.backend);
  const events = await stream.handler(input, {
    identity,
    platform: deps.platform,
    settings: settingsOf(deps.config),
    confirmSecret: deps.confirmSecret,
    door: via.door ?? MCP_DOOR,
    signal: via.signal,
  });
  return (async function* checked() {
    for await (const { event, data } of events) yield { event, data: stream.event.parse(data) };
  })();
}

const settingsByConfig = new WeakMap<InvokeConfig, ToolSettings>();
/** The part of the configuration handlers read, made once per configuration. */
function settingsOf(config: InvokeConfig): ToolSettings {
  let settings = settingsByConfig.get(config);
  if (!settings) {
    const namespaces = Object.freeze({ workflows: config.workflowNamespace, argocd: config.argocdNamespace });
    settingsByConfig.set(config, (settings = Object.freeze({ baseUrl: config.baseUrl, domain: config.domain, namespaces })));
  }
  return settings;
}
