import { describe, expect, it } from 'vitest';
import { ENGINES, freshStore } from './helpers.js';

describe.each(ENGINES)('single-use claims on %s', (engine) => {
  it('accept a key once until it expires, then again', async () => {
    let now = Date.parse('2026-11-01T12:00:00.000Z');
    const store = await freshStore(engine, { now: () => new Date(now) });
    expect(await store.once.claim('confirm:abc', 300)).toBe(true);
    expect(await store.once.claim('confirm:abc', 300)).toBe(false);
    expect(await store.once.claim('confirm:other', 300)).toBe(true);
    now += 299_999;
    expect(await store.once.claim('confirm:abc', 300)).toBe(false);
    now += 1;
    expect(await store.once.claim('confirm:abc', 300)).toBe(true);
    expect(await store.once.claim('confirm:abc', 300)).toBe(false);
  });

  it('accept exactly one of many concurrent claims of one key', async () => {
    const store = await freshStore(engine);
    const results = await Promise.all(Array.from({ length: 20 }, () => store.once.claim('confirm:race', 60)));
    expect(results.filter(Boolean)).toHaveLength(1);
  });

  it('refuse a ttl that is not a positive integer, and sweep expired claims', async () => {
    let now = 1_000_000;
    const store = await freshStore(engine, { now: () => new Date(now) });
    await expect(store.once.claim('k', 0)).rejects.toThrow(RangeError);
    await expect(store.once.claim('k', 1.5)).rejects.toThrow(RangeError);
    await store.once.claim('a', 1);
    await store.once.claim('b', 10);
    now += 1_000;
    expect(await store.once.sweep()).toBe(1);
    expect(await store.once.claim('b', 10)).toBe(false);
  });

  it('keep keys exactly as given, prototype names included', async () => {
    const store = await freshStore(engine);
    for (const key of ['__proto__', 'constructor', 'toString', 'ü'.repeat(300)]) {
      expect(await store.once.claim(key, 60)).toBe(true);
      expect(await store.once.claim(key, 60)).toBe(false);
    }
  });
});
