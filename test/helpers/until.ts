/**
 * Await a condition with a deadline: call `probe` every `everyMs` until it returns something truthy, and return that.
 *
 * Tests wait for the event they need this way instead of sleeping or reading a value once, so a slow or loaded machine
 * only makes them slower, never wrong.
 *
 * @param what - what is awaited, named in the error ("timed out after 30 s waiting for <what>").
 * @param probe - returns the awaited value, or `undefined`, `null` or `false` while it is not there yet. May throw, which
 *   ends the wait with that error.
 * @param seconds - the deadline, in seconds (default 30).
 * @param everyMs - the pause between probes, in milliseconds (default 100).
 * @returns the first truthy value `probe` returned.
 * @throws Error when the deadline passes first.
 */
export async function until<T>(
  what: string,
  probe: () => Promise<T | undefined | null | false> | T | undefined | null | false,
  seconds = 30,
  everyMs = 100,
): Promise<T> {
  const deadline = Date.now() + seconds * 1000;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${seconds} s waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
