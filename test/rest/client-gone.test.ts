import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { withClientGone } from '../../rest/client-gone.js';
import { NO_INTERACTION } from '../../tools/interaction.js';

/** The least of a Koa context `clientGone` reads: the response's state and its 'close'. */
function fakeCtx() {
  const res = Object.assign(new EventEmitter(), { destroyed: false, writableFinished: false });
  return { ctx: { res } as never, res };
}

describe('withClientGone', () => {
  it('keeps the lazy signal getter on the prototype, never as an accessor of each object (BENCHMARKS.md: such objects outlive scavenges)', () => {
    const { ctx } = fakeCtx();
    const interaction = withClientGone(ctx, NO_INTERACTION);
    expect(Object.getOwnPropertyDescriptor(interaction, 'signal')).toBeUndefined();
    for (const key of Object.keys(interaction)) expect(Object.getOwnPropertyDescriptor(interaction, key)?.get).toBeUndefined();
  });

  it('copies the other fields, and its signal aborts when the connection closes before the answer, once', () => {
    const { ctx, res } = fakeCtx();
    const interaction = withClientGone(ctx, NO_INTERACTION);
    expect(interaction).toMatchObject({ wantsProgress: false, canAsk: false, state: undefined });
    expect(interaction.answer('x')).toEqual({ kind: 'missing' });
    const signal = interaction.signal;
    expect(interaction.signal).toBe(signal);
    expect(signal.aborted).toBe(false);
    res.emit('close');
    expect(signal.aborted).toBe(true);
  });

  it('does not abort for an answered response, and follows the transport signal it wraps', () => {
    const { ctx, res } = fakeCtx();
    const outer = new AbortController();
    const interaction = withClientGone(ctx, { ...NO_INTERACTION, signal: outer.signal });
    const signal = interaction.signal;
    res.writableFinished = true;
    res.emit('close');
    expect(signal.aborted).toBe(false);
    outer.abort();
    expect(signal.aborted).toBe(true);
  });
});
