/**
 * A {@link ToolCaller} that runs tools on a pds over its REST API: what `pds mcp` (stdio) uses, so an IDE's local
 * MCP server and the HTTP endpoint share one platform, one audit trail and one set of limits. The request is built
 * from the tool's own REST binding (operation tools post to `/api/v1/operations/{name}/execute` with `name` pinned);
 * a dispatching tool (`platform_execute_operation`, MCP only) is first resolved to the tool it stands for. The calls
 * go through the shared REST client (`tools/rest-client.ts`): an error answer comes back as the `PlatformError` the
 * server threw (its code from `PDS-Error-Code`), so the agent sees the server's message and code unchanged, and a
 * confirmation request comes back as `ConfirmationRequired` with its data, so the MCP side can put the question to
 * the person. Requests say `X-PDS-Door: mcp`: the answers' messages then name tools and their arguments, as the agent
 * behind this bridge reads them.
 *
 * Waiting (`wait_seconds`, issue 11 item 2) goes through the REST wait. For a call that asked for progress, the
 * bridge makes the call without waiting and then waits itself, in slices of {@link WAIT_SLICE_SECONDS} through
 * `GET /api/v1/workflows/{name}?wait_seconds=`, sending the steps it reads as progress between slices.
 */
import type { AnyTool } from './define.js';
import { parseInput } from './validation.js';
import type { CallInteraction } from './interaction.js';
import type { ToolCaller } from './mcp.js';
import { createRestClient, type ToolOutput } from './rest-client.js';
import { progressReporter, type WaitOutcome } from './workflow-view.js';
import { getWorkflow } from './workflows.js';

/** Longest single REST wait while the bridge reports progress itself, seconds. */
export const WAIT_SLICE_SECONDS = 3;

/** `platform_get_workflow`'s answer (`GET /api/v1/workflows/{name}`), which the bridge reads to report progress. */
type WorkflowView = ToolOutput<typeof getWorkflow>;

/**
 * @param baseUrl pds base URL, e.g. `http://localhost:8080`.
 * @param token bearer token sent with every call.
 * @param fetchImpl injectable fetch (default global); each call times out after `timeoutMs` (default 30 000 ms).
 */
export function createRestToolCaller(
  baseUrl: string,
  token: string,
  fetchImpl: typeof fetch = fetch,
  timeoutMs = 30_000,
): ToolCaller {
  const client = createRestClient({
    baseUrl,
    token: () => token,
    fetch: fetchImpl,
    timeoutMs,
    // The agent behind this bridge reads MCP words: messages name tools and their arguments, not paths.
    door: 'mcp',
    unreachableHint: 'start it with "npm start" or set PDS_BASE_URL',
  });
  const send = (tool: AnyTool, input: Record<string, unknown>): Promise<Record<string, unknown>> => client.call(tool, input);

  /** Wait on workflow `name` for `seconds` in slices, reporting its steps; returns the last view read. */
  const waitReporting = async (name: string, seconds: number, interaction: CallInteraction, first?: WorkflowView): Promise<WorkflowView> => {
    const report = progressReporter(interaction);
    const deadline = Date.now() + seconds * 1000;
    let view = first ?? (await client.call(getWorkflow, { name }));
    for (;;) {
      await report({ phase: view.audit.status, steps: view.steps, message: view.audit.message || view.note, ...(view.approval ? { approval: view.approval } : {}) });
      const left = Math.ceil((deadline - Date.now()) / 1000);
      if (view.settled || left <= 0 || interaction.signal.aborted) return view;
      view = await client.call(getWorkflow, { name, wait_seconds: Math.min(WAIT_SLICE_SECONDS, left) });
    }
  };

  return async (requested, args, interaction) => {
    let tool = requested;
    let input = (args ?? {}) as Record<string, unknown>;
    if (tool.dispatch) {
      const next = tool.dispatch(parseInput(tool.input, input));
      tool = next.tool;
      input = (next.input ?? {}) as Record<string, unknown>;
    }
    const wait = Number(input.wait_seconds ?? 0);
    // Without a progress token (or a valid wait) pds's own REST wait does it all; its answer is the tool's.
    if (!interaction?.wantsProgress || !Number.isInteger(wait) || wait <= 0 || wait > 45) return send(tool, input);
    const { wait_seconds: _wait, ...rest } = input;
    if (tool === getWorkflow) return waitReporting(String(input.name), wait, interaction);
    const submitted = await send(tool, rest);
    if (typeof submitted.workflowName !== 'string') return submitted;
    const view = await waitReporting(submitted.workflowName, wait, interaction);
    const outcome: WaitOutcome = { phase: view.phase, settled: view.settled };
    if (view.host) outcome.host = view.host;
    if (view.failedStep) outcome.failedStep = view.failedStep;
    return { ...submitted, ...outcome };
  };
}
