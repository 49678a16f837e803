/**
 * A person behind destructive calls (issue 11 item 5): when an operation answers with a confirmation request
 * (`ConfirmationRequired`) and the MCP client can show a question (`interaction.canAsk`), pds asks the person with a
 * form — the plan, yes or no — and runs the operation only on "yes", by repeating the call with the confirm value it
 * was given. The model never sees the value; a client without elicitation gets the confirmation request as before
 * (the `isError` result with `{ confirm, expiresAt, plan }` in `structuredContent`), and so does every REST caller.
 *
 * It wraps a {@link ToolCaller}, so it serves both transports the same way: invoke() in-process for `POST /mcp`, and
 * the REST bridge of `pds mcp` on stdio (which turns the `PDS-Confirm*` headers back into `ConfirmationRequired`).
 * The question and answer follow `tools/interaction.ts`: an {@link InputRequired} with the confirm value as sealed
 * state, and a second round with the person's answer. The value stays bound to the caller, the operation and its
 * parameters, expires and works once (`tools/operations/confirm.ts`), so changed arguments in the second round are
 * refused, not run.
 *
 * A request only the person may answer (`personOnly`: an approval decision) is never handed to the model: a client
 * that cannot ask gets a refusal instead of the value.
 */
import { ConfirmationRequired, Forbidden, PlatformError } from '../core/errors.js';
import type { AnyTool } from './define.js';
import { InputRequired, type CallInteraction, type Question } from './interaction.js';
import type { ToolCaller } from './mcp.js';
import { parseInput } from './validation.js';

/** The key of the question in the `input_required` round, and the boolean field of its form. */
export const CONFIRM_QUESTION = 'confirm';

/** What the first round seals for the second: the value that confirms exactly this call. */
interface Asked {
  confirm: string;
}

function isAsked(state: unknown): state is Asked {
  return typeof (state as Asked | null)?.confirm === 'string';
}

/** The tool that runs a call and its input: a dispatching tool (`platform_execute_operation`) stands for another. */
function resolve(tool: AnyTool, args: unknown): { tool: AnyTool; input: Record<string, unknown> } {
  if (!tool.dispatch) return { tool, input: { ...(args as Record<string, unknown>) } };
  const next = tool.dispatch(parseInput(tool.input, args));
  return { tool: next.tool, input: { ...(next.input as Record<string, unknown>) } };
}

/** The form put to the person: the plan, and one yes/no field. */
export function confirmationQuestion(tool: AnyTool, request: ConfirmationRequired): Question {
  const what = tool.operation?.id ?? tool.name;
  return {
    message: request.personOnly
      ? `${tool.title}: ${request.plan}. This is your decision, recorded under your name. Proceed?`
      : `${tool.title}: ${what} will ${request.plan}. This cannot be undone. Proceed?`,
    requestedSchema: {
      type: 'object',
      properties: {
        [CONFIRM_QUESTION]: { type: 'boolean', title: 'Proceed', description: `Yes: ${request.plan}. No: nothing is changed.`, default: false },
      },
      required: [CONFIRM_QUESTION],
    },
  };
}

/** The refusal when the person said no or closed the question: nothing ran. */
function notConfirmed(tool: AnyTool, action: 'accept' | 'decline' | 'cancel'): PlatformError {
  const what = tool.operation?.id ?? tool.name;
  const why = action === 'cancel' ? 'the question was cancelled' : 'the person did not confirm it';
  return new PlatformError('CONFIRMATION_REQUIRED', `${what} was not run: ${why}. Nothing was changed.`);
}

/**
 * `call`, with confirmation requests put to the person when the client can be asked.
 * @returns a {@link ToolCaller} that (first round) passes the call through and turns a `ConfirmationRequired` into
 *   an {@link InputRequired} when `interaction.canAsk`; (second round) repeats the call with the sealed confirm value
 *   on "yes", and throws a `CONFIRMATION_REQUIRED` error saying nothing was changed on "no" or cancel.
 */
export function confirmingCaller(call: ToolCaller): ToolCaller {
  return async (tool: AnyTool, args: unknown, interaction: CallInteraction) => {
    const answer = interaction.answer(CONFIRM_QUESTION);
    if (answer.kind === 'elicit' && isAsked(interaction.state)) {
      const target = resolve(tool, args);
      if (answer.action !== 'accept' || answer.content?.[CONFIRM_QUESTION] !== true) throw notConfirmed(target.tool, answer.action);
      return call(target.tool, { ...target.input, confirm: interaction.state.confirm }, interaction);
    }
    try {
      return await call(tool, args, interaction);
    } catch (err) {
      if (!(err instanceof ConfirmationRequired)) throw err;
      if (!interaction.canAsk) {
        // The agent must never answer for the person: no value, a refusal saying where the person can decide.
        if (err.personOnly) {
          throw new Forbidden(
            `${resolve(tool, args).tool.name} needs the person's own answer, and this MCP client cannot ask them (it does not ` +
              'offer elicitation); nothing was changed. Decide with "pds approvals approve|reject ID" or in the console',
          );
        }
        throw err;
      }
      const asked: Asked = { confirm: err.confirm };
      throw new InputRequired({ [CONFIRM_QUESTION]: confirmationQuestion(resolve(tool, args).tool, err) }, asked);
    }
  };
}
