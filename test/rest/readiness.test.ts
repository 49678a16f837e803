/**
 * `/readyz` from a cached probe (issue 17 item 10): many unauthenticated requests cause at most one store check per
 * second, concurrent ones share the check in flight. (That it still turns 503 while the store cannot be written and
 * recovers by itself is test/e2e/records-processes.test.ts.)
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { cachedProbe } from '../../rest/readiness.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

describe('cachedProbe', () => {
  it('shares one check among concurrent callers, reuses its answer for the interval, then checks again', async () => {
    let clock = 0;
    let checks = 0;
    let release!: (ready: boolean) => void;
    const probe = cachedProbe(() => {
      checks += 1;
      return new Promise<boolean>((resolve) => (release = resolve));
    }, 1000, () => clock);
    const waiting = Array.from({ length: 100 }, () => probe());
    expect(checks).toBe(1);
    clock = 5000; // a check slower than the interval is still shared
    expect(probe()).toBe(waiting[0]);
    release(false);
    expect(await Promise.all(waiting)).toEqual(Array(100).fill(false));
    clock = 999; // settled, and inside the interval counted from the check's start (0)
    expect(await probe()).toBe(false);
    expect(checks).toBe(1);
    clock = 1000;
    const next = probe();
    expect(checks).toBe(2);
    release(true);
    expect(await next).toBe(true);
  });

  it('answers false when the check throws, and checks again after the interval', async () => {
    let clock = 0;
    let fail = true;
    const probe = cachedProbe(async () => {
      if (fail) throw new Error('store closed');
      return true;
    }, 1000, () => clock);
    expect(await probe()).toBe(false);
    fail = false;
    expect(await probe()).toBe(false);
    clock = 1000;
    expect(await probe()).toBe(true);
  });
});

describe('GET /readyz', () => {
  let pds: TestServer;
  beforeAll(async () => {
    pds = await startTestServer();
  });
  afterAll(() => pds?.stop());

  it('checks the store at most once a second however many requests come', async () => {
    const ready = vi.spyOn(pds.platform, 'ready');
    const started = performance.now();
    for (let round = 0; round < 6; round += 1) {
      const answers = await Promise.all(Array.from({ length: 50 }, () => fetch(`${pds.url}/readyz`).then((r) => r.status)));
      expect(answers).toEqual(Array(50).fill(200));
    }
    const seconds = (performance.now() - started) / 1000;
    // 300 requests; the bound is in checks per elapsed second, not in time.
    expect(ready.mock.calls.length).toBeGreaterThanOrEqual(1);
    expect(ready.mock.calls.length).toBeLessThanOrEqual(Math.floor(seconds) + 1);
    ready.mockRestore();
  });
});
