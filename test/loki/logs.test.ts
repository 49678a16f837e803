/** Service logs from Loki (adapters/loki/logs.ts) against a query_range stand-in. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lokiLogSource, serviceSelector } from '../../adapters/loki/logs.js';
import { startLokiFixture, type LokiFixture } from '../fixtures/loki.js';

let loki: LokiFixture;
const now = new Date('2026-11-22T12:00:00Z');
const ago = (s: number) => new Date(now.getTime() - s * 1000);

beforeAll(async () => {
  loki = await startLokiFixture();
  loki.push({ namespace: 'acme', pod: 'acme-web-7d9f8-abcde' }, ago(7200), 'too old');
  loki.push({ namespace: 'acme', pod: 'acme-web-7d9f8-abcde' }, ago(30), 'a1');
  loki.push({ namespace: 'acme', pod: 'acme-web-7d9f8-fghij' }, ago(20), 'b1');
  loki.push({ namespace: 'acme', pod: 'acme-web-7d9f8-abcde' }, ago(10), 'a2');
  loki.push({ namespace: 'acme', pod: 'acme-web-preview-0-2-0-5c6d7-xyzab' }, ago(5), 'preview');
  loki.push({ namespace: 'other', pod: 'acme-web-7d9f8-abcde' }, ago(5), 'other tenant');
});
afterAll(() => loki.close());

describe('Loki log source', () => {
  it('reads the service\'s pods only, merged oldest first, the newest `lines` of the window', async () => {
    const source = lokiLogSource({ url: loki.url, now: () => now });
    const all = await source.read('acme', 'web', { lines: 100, sinceSeconds: 3600 });
    expect(all.lines.map((l) => l.line)).toEqual(['a1', 'b1', 'a2']);
    expect(all.lines[0]).toMatchObject({ timestamp: ago(30).toISOString(), labels: { pod: 'acme-web-7d9f8-abcde', source: 'loki' } });
    const two = await source.read('acme', 'web', { lines: 2, sinceSeconds: 3600 });
    expect(two.lines.map((l) => l.line)).toEqual(['b1', 'a2']);
    const q = loki.queries.at(-1)!;
    expect(q.get('query')).toBe(serviceSelector('acme', 'web'));
    expect(q.get('direction')).toBe('backward');
    expect(q.get('limit')).toBe('2');
    expect(BigInt(q.get('end')!) - BigInt(q.get('start')!)).toBe(3600n * 1_000_000_000n);
  });

  it('answers Upstream when Loki fails or cannot be reached', async () => {
    await expect(lokiLogSource({ url: `${loki.url}/nope` }).read('acme', 'web', { lines: 5, sinceSeconds: 60 })).rejects.toMatchObject({ code: 'UPSTREAM' });
    await expect(lokiLogSource({ url: 'http://127.0.0.1:1' }).read('acme', 'web', { lines: 5, sinceSeconds: 60 })).rejects.toMatchObject({ code: 'UPSTREAM' });
  });
});
