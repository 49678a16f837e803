/**
 * Toolsets (issue 11 item 6): named groups of tools an MCP client selects, so an agent session lists only what it
 * needs. Each tool names its set in its own definition (`toolset` in {@link ToolDefinition}); nothing here lists tools.
 *
 * Selection: the operator bounds the sets with `PDS_TOOLSETS` (default `all`); a client narrows them per request with
 * `?toolsets=a,b` on the MCP URL or an `X-PDS-Toolsets: a,b` header (default {@link DEFAULT_TOOLSETS}, within the
 * bound). Read-only mode applies on top of any selection.
 */
import { InvalidParams } from '../core/errors.js';
import type { AnyTool } from './define.js';

/** Every toolset, in listing order. */
export const TOOLSETS = ['observe', 'deploy', 'repos', 'scaffold', 'tenants', 'catalog'] as const;
export type Toolset = (typeof TOOLSETS)[number];

/** What a client gets when it names no sets: the sets an agent needs to ship a service. */
export const DEFAULT_TOOLSETS: readonly Toolset[] = ['observe', 'deploy', 'repos', 'scaffold'];

/** The word that selects every set. */
export const ALL_TOOLSETS = 'all';

const KNOWN = new Set<string>(TOOLSETS);

/**
 * Parse a comma-separated selection (`"observe,deploy"`, `"all"`; spaces and empty items ignored, case-sensitive).
 * @returns the sets in {@link TOOLSETS} order, without duplicates.
 * @throws InvalidParams naming the unknown names and every valid one, e.g. `unknown toolset "deploys"; toolsets:
 *   observe, deploy, repos, scaffold, tenants, catalog, or all`; also for an empty selection.
 */
export function parseToolsets(spec: string): Toolset[] {
  const names = spec.split(',').map((s) => s.trim()).filter(Boolean);
  const unknown = names.filter((n) => n !== ALL_TOOLSETS && !KNOWN.has(n));
  const valid = `toolsets: ${TOOLSETS.join(', ')}, or ${ALL_TOOLSETS}`;
  if (unknown.length) {
    throw new InvalidParams(`unknown toolset${unknown.length > 1 ? 's' : ''} ${unknown.map((n) => `"${n}"`).join(', ')}; ${valid}`);
  }
  if (!names.length) throw new InvalidParams(`no toolset named; ${valid}`);
  if (names.includes(ALL_TOOLSETS)) return [...TOOLSETS];
  return TOOLSETS.filter((t) => names.includes(t));
}

/**
 * The sets one request gets.
 * @param allowed the operator's bound (`PDS_TOOLSETS`, parsed).
 * @param requested the client's selection (`?toolsets=` or `X-PDS-Toolsets`), unparsed; `undefined` for none.
 * @returns `requested` when it is within `allowed` (`all` means every allowed set); without a request, the
 *   {@link DEFAULT_TOOLSETS} that are allowed, or every allowed set when the operator allowed none of the defaults.
 * @throws InvalidParams for unknown names, or a set the operator did not allow (naming the allowed ones).
 */
export function selectToolsets(allowed: readonly Toolset[], requested: string | undefined): Toolset[] {
  if (requested === undefined) {
    const defaults = allowed.filter((t) => DEFAULT_TOOLSETS.includes(t));
    return defaults.length ? defaults : [...allowed];
  }
  const names = requested.split(',').map((s) => s.trim());
  const asked = parseToolsets(requested);
  if (names.includes(ALL_TOOLSETS)) return [...allowed];
  const refused = asked.filter((t) => !allowed.includes(t));
  if (refused.length) {
    throw new InvalidParams(
      `toolset${refused.length > 1 ? 's' : ''} ${refused.map((t) => `"${t}"`).join(', ')} not enabled on this pds ` +
        `(PDS_TOOLSETS); enabled: ${allowed.join(', ')}`,
    );
  }
  return asked;
}

const selections = new WeakMap<readonly AnyTool[], Map<string, AnyTool[]>>();
/**
 * The tools of `tools` in the given sets (and, with `readOnly`, only the `read` ones), in inventory order. Computed
 * once per distinct selection and returned as the same array afterwards, so per-selection caches keyed by the array
 * (the MCP listing) are built once too.
 */
export function toolsIn(tools: readonly AnyTool[], sets: readonly Toolset[], readOnly = false): AnyTool[] {
  let byKey = selections.get(tools);
  if (!byKey) selections.set(tools, (byKey = new Map()));
  const key = `${[...sets].sort().join(',')}${readOnly ? ':ro' : ''}`;
  let selected = byKey.get(key);
  if (!selected) {
    selected = tools.filter((t) => sets.includes(t.toolset) && (!readOnly || t.kind === 'read'));
    byKey.set(key, selected);
  }
  return selected;
}

/** Where a session's toolsets come from, for refusals that say how to select another set. */
export interface ToolsetSelection {
  /** Every tool pds has (the inventory the selection was made from). */
  inventory: readonly AnyTool[];
  /** The sets this session selected. */
  selected: readonly Toolset[];
  /** The sets the operator allows (`PDS_TOOLSETS`). */
  allowed: readonly Toolset[];
  /**
   * How this door selects sets, given the selection to ask for (`"observe,deploy,tenants"`), e.g.
   * `` (s) => `?toolsets=${s} on the MCP URL` ``.
   */
  howToSelect: (sets: string) => string;
}

/**
 * The answer to a `tools/call` naming a tool this session does not list.
 * @returns for a tool of another set: `unknown tool "platform_create_tenant" in this session: it is in the "tenants"
 *   toolset, which this session did not select (selected: observe, deploy, repos, scaffold); select it with
 *   ?toolsets=observe,deploy,repos,scaffold,tenants on the MCP URL …`, or that the operator does not enable the set
 *   (`PDS_TOOLSETS`); for a name no set has, `unknown tool "<name>"; see tools/list`.
 */
export function unknownToolMessage(name: string, selection?: ToolsetSelection): string {
  const tool = selection?.inventory.find((t) => t.name === name);
  if (!selection || !tool || selection.selected.includes(tool.toolset)) return `unknown tool "${name}"; see tools/list`;
  const where = `unknown tool "${name}" in this session: it is in the "${tool.toolset}" toolset`;
  if (!selection.allowed.includes(tool.toolset)) {
    return `${where}, which this pds does not enable (PDS_TOOLSETS allows ${selection.allowed.join(', ')}); an operator enables it`;
  }
  const wanted = TOOLSETS.filter((t) => t === tool.toolset || selection.selected.includes(t)).join(',');
  return (
    `${where}, which this session did not select (selected: ${selection.selected.join(', ')}); ` +
    `select it with ${selection.howToSelect(wanted)}, then call it again`
  );
}
