/**
 * What a running tool call can do with its caller besides returning a result: report progress, notice that the caller
 * went away, and ask the person behind the client a question (MCP elicitation). Only MCP offers these; a REST call has
 * no interaction, and a handler must then fall back (e.g. to the confirm value of a destructive operation).
 *
 * Asking follows MCP 2026-07-28's stateless multi-round-trip rules ("basic/patterns/mrtr"): the handler throws
 * {@link InputRequired}; the MCP adapter answers `input_required` with the questions and a sealed copy of `state`; the
 * client asks the person and calls the tool again with the answers, possibly on another replica; the handler then runs
 * again from the start and finds them in {@link CallInteraction.answer} and its state in {@link CallInteraction.state}.
 * On a 2025-11-25 stdio connection the SDK's legacy shim asks through `elicitation/create` and re-enters the handler
 * the same way; a stateless 2025-11-25 HTTP request cannot be asked anything (`canAsk` is false).
 */
import type { ElicitRequestFormParams } from '@modelcontextprotocol/server';

/** The answer to one question of the previous round (the SDK's `inputResponse()` view). */
export type Answer =
  | { kind: 'missing' }
  | { kind: 'elicit'; action: 'accept' | 'decline' | 'cancel'; content?: Record<string, unknown> }
  | { kind: 'other' };

/** A form question (MCP "Elicitation", form mode): what to show and the flat JSON Schema of the answer. */
export interface Question {
  message: string;
  requestedSchema: ElicitRequestFormParams['requestedSchema'];
}

/** The interaction of one MCP tool call; handlers receive it as `ToolContext.interaction`. */
export interface CallInteraction {
  /** Aborted when the caller cancels or its connection closes; long waits should stop then. */
  readonly signal: AbortSignal;
  /** Whether the caller asked for progress (sent a progress token); {@link progress} is a no-op otherwise. */
  readonly wantsProgress: boolean;
  /**
   * Send `notifications/progress` for this call (MCP "Progress"); over HTTP the answer then becomes an SSE stream.
   * @param progress must grow from one call to the next, e.g. the step number.
   * @param total the final value when known, e.g. the number of steps.
   * @param message a short status for people, e.g. "step 3/9: build image".
   */
  progress(progress: number, total?: number, message?: string): Promise<void>;
  /** Whether the client can show a form question now (declared `elicitation` and has a way back to pds). */
  readonly canAsk: boolean;
  /** The answer to question `key` of the previous round; `{ kind: 'missing' }` on a first call. */
  answer(key: string): Answer;
  /** The `state` thrown with the previous round's {@link InputRequired}, verified unchanged; `undefined` first. */
  readonly state: unknown;
}

/**
 * Thrown by a handler (only when `interaction.canAsk`) to ask questions and be called again with the answers.
 * Not a `PlatformError`: it never reaches a REST caller.
 */
export class InputRequired extends Error {
  /**
   * @param questions the questions by key, e.g. `{ confirm: { message, requestedSchema } }`.
   * @param state what the handler needs to continue (JSON; signed, not encrypted: the client can read it; at most
   *   10 minutes old when it comes back).
   */
  constructor(
    readonly questions: Record<string, Question>,
    readonly state: unknown = null,
  ) {
    super('input required');
    this.name = 'InputRequired';
  }
}

/** The interaction of a call that has none (REST, tests): no progress, no questions, never aborted. */
export const NO_INTERACTION: CallInteraction = {
  signal: new AbortController().signal,
  wantsProgress: false,
  progress: async () => {},
  canAsk: false,
  answer: () => ({ kind: 'missing' }),
  state: undefined,
};
