/**
 * The view's side of the MCP Apps bridge (SEP-1865; `@modelcontextprotocol/ext-apps`'s `App` over `postMessage` to the
 * host): the one way a view reaches pds. Every read and every action is a `tools/call` the host makes for it, with the
 * person's rights and the host's consent; the view itself opens no connection (its CSP forbids any).
 */
import { App, applyDocumentTheme, applyHostFonts, applyHostStyleVariables, type McpUiHostContext } from '@modelcontextprotocol/ext-apps';

/** A tool's `isError` answer, or the host refusing the call: `message` is what to show the person. */
export class ToolFailed extends Error {}

/** The shapes the views read (the tools' `structuredContent`; `docs/api.md` names every field). */
export interface WorkflowStep {
  name: string;
  status: 'pending' | 'running' | 'succeeded' | 'failed' | 'skipped';
  message?: string;
  startedAt?: string;
  finishedAt?: string;
}
export interface Workflow {
  workflow: string;
  phase: 'submitted' | 'running' | 'succeeded' | 'failed';
  settled: boolean;
  note: string;
  steps: WorkflowStep[];
  host?: string;
  failedStep?: { name: string; message: string; logTail: string[] };
  audit: { operation: string; userId: string; parameters: Record<string, string>; status: string; timestamp: string };
}
export interface Status {
  argocd: { name: string; syncStatus: string; healthStatus: string; message: string };
  service: { team: string; name: string; imageTag: string; host: string };
}
export interface WorkflowSummary {
  name: string;
  operation: string;
  phase: Workflow['phase'];
  startedAt: string;
  finishedAt?: string;
  userId: string;
  parameters: Record<string, string>;
  message: string;
}

/** This view's connection to its host. */
export const app = new App({ name: 'pds-view', version: '0.1.0' }, {}, { autoResize: true });

/** The text of a tool result's first text block. */
export function resultText(result: { content?: { type: string; text?: string }[] }): string {
  return result.content?.find((c) => c.type === 'text')?.text ?? '';
}

/**
 * Call a pds tool through the host and return its `structuredContent`.
 * @throws ToolFailed with pds's message for an `isError` result, or the host's when it did not make the call (the
 *   person declined, the tool is not in the session's toolsets).
 */
export async function callTool<T>(name: string, args: Record<string, unknown>): Promise<T> {
  let result;
  try {
    result = await app.callServerTool({ name, arguments: args });
  } catch (err) {
    throw new ToolFailed(`the host did not run ${name}: ${(err as Error).message}`);
  }
  if (result.isError) throw new ToolFailed(resultText(result) || `${name} failed`);
  return (result.structuredContent ?? JSON.parse(resultText(result))) as T;
}

/** Follow the host's theme, colours and fonts (the view has its own defaults for what the host leaves out). */
export function applyHostContext(context: McpUiHostContext | undefined): void {
  if (!context) return;
  if (context.theme) applyDocumentTheme(context.theme);
  if (context.styles?.variables) applyHostStyleVariables(context.styles.variables);
  if (context.styles?.css?.fonts) applyHostFonts(context.styles.css.fonts);
}

/** Ask the host to open `url` in the person's browser (only when it can: `openLinks`). */
export function canOpenLinks(): boolean {
  return app.getHostCapabilities()?.openLinks !== undefined;
}
