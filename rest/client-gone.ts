/**
 * A signal that aborts when the caller of a request goes away before its answer was sent (issue 17 item 10): waits
 * (`wait_seconds`) listen to it, so an abandoned wait drops its engine subscription and timer at once instead of
 * holding them until the workflow settles — 1,500 abandoned waits once held 40 MB of heap.
 */
import type { Context } from 'koa';
import { NO_INTERACTION, type CallInteraction } from '../tools/interaction.js';

/**
 * Aborted when the response's connection closes before the response finished (the client disconnected or timed
 * out); never aborted for a request that was answered.
 * @example const interaction = { ...NO_INTERACTION, signal: clientGone(ctx) };
 */
export function clientGone(ctx: Pick<Context, 'res'>): AbortSignal {
  const gone = new AbortController();
  // Asked for while the handler runs (REST makes it at the first read): the connection may have closed already.
  if (ctx.res.destroyed && !ctx.res.writableFinished) {
    gone.abort(new Error('the client closed the connection before the answer'));
    return gone.signal;
  }
  // 'close' comes for an answered response too, after 'finish': only an unfinished one means the caller left.
  ctx.res.once('close', () => {
    if (!ctx.res.writableFinished) gone.abort(new Error('the client closed the connection before the answer'));
  });
  return gone.signal;
}

/**
 * `interaction` whose `signal` also aborts when the caller of `ctx` goes away ({@link clientGone}). The signal is made
 * at its first read: most calls never wait, and a controller and a listener per request were 1.3 % of a REST read's
 * CPU (BENCHMARKS.md, "Request path"). Over REST `interaction` is `NO_INTERACTION` (nothing else aborts a call); over
 * MCP it carries the SDK's signal for the request, and the two are combined.
 *
 * The lazy `signal` is a getter on a class's prototype, not on each object: an object with an accessor property of its
 * own (an object literal's `get signal()`) is kept alive by V8 through the young generation's collections, with what
 * its getter's closure holds (here the whole request), and each request's objects then went to the old generation
 * (BENCHMARKS.md, "Warm reads at a fixed rate, open loop").
 * @example const interaction = withClientGone(ctx, NO_INTERACTION);
 */
export function withClientGone(ctx: Pick<Context, 'res'>, interaction: CallInteraction): CallInteraction {
  return new ClientGoneInteraction(ctx, interaction);
}

class ClientGoneInteraction implements CallInteraction {
  readonly wantsProgress: boolean;
  readonly progress: CallInteraction['progress'];
  readonly canAsk: boolean;
  readonly answer: CallInteraction['answer'];
  readonly state: unknown;
  #signal: AbortSignal | undefined;

  constructor(
    private readonly ctx: Pick<Context, 'res'>,
    private readonly inner: CallInteraction,
  ) {
    this.wantsProgress = inner.wantsProgress;
    this.progress = inner.progress;
    this.canAsk = inner.canAsk;
    this.answer = inner.answer;
    this.state = inner.state;
  }

  get signal(): AbortSignal {
    return (this.#signal ??= this.inner === NO_INTERACTION ? clientGone(this.ctx) : AbortSignal.any([this.inner.signal, clientGone(this.ctx)]));
  }
}
