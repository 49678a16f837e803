/**
 * The soak's own arithmetic and checks (`bench/soak-check.ts`, issue 23 item 4): the slope window, the exactly-once
 * settlement check across pds processes, and reading pds's settlement lines as pino writes them.
 */
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { checkSettlement, libcOf, percentile, problemLine, rssSlope, settleLine, slopeFrom } from '../../bench/soak-check.js';
import { createLogger } from '../../core/logger.js';

describe('slope window', () => {
  it('starts after minute 10 for a run of 20 minutes or more, after minute 2 for a shorter one, or where SOAK_SLOPE_FROM says', () => {
    expect(slopeFrom(3600, undefined)).toBe(10);
    expect(slopeFrom(1200, undefined)).toBe(10);
    expect(slopeFrom(1199, undefined)).toBe(2);
    expect(slopeFrom(600, '')).toBe(2);
    expect(slopeFrom(3600, '20')).toBe(20);
    expect(() => slopeFrom(600, '2.5')).toThrow(TypeError);
    expect(() => slopeFrom(600, '-1')).toThrow(/whole number/);
  });

  it('fits only the minutes after the window starts', () => {
    // Growth in the first minutes, flat afterwards: the slope after minute 2 is zero.
    expect(rssSlope([100, 150, 180, 180, 180, 180], 2)).toEqual({ slope: 0, first: 3, last: 6 });
    expect(rssSlope([100, 101, 102, 103], 0).slope).toBeCloseTo(1);
    // Minutes without a sample are left out, not read as zero.
    expect(rssSlope([100, 100, 100, undefined, 102], 2)).toEqual({ slope: 1, first: 3, last: 5 });
    expect(rssSlope([100, 100, 100], 2).slope).toBeNaN();
  });

  it('takes the nearest-rank percentile', () => {
    const sorted = Array.from({ length: 100 }, (_, i) => i + 1);
    expect(percentile(sorted, 99)).toBe(100);
    expect(percentile(sorted, 50)).toBe(51);
    expect(percentile([], 99)).toBeNaN();
  });
});

describe('settlement across processes', () => {
  const settled = (...names: string[]) => names.map((workflowName) => ({ workflowName, status: 'succeeded' }));

  it('passes when every accepted write has one settled entry that one process logged', () => {
    const r = checkSettlement(['a', 'b', 'c'], settled('a', 'b', 'c'), [['a', 'c'], ['b']]);
    expect(r).toMatchObject({ ok: true, accepted: 3, settled: 3, perProcess: [2, 1], missing: [], duplicates: [] });
  });

  it('reports a write with no entry, one still submitted, and one settled that no process logged', () => {
    const r = checkSettlement(['a', 'b', 'c', 'd'], [...settled('a', 'c'), { workflowName: 'b', status: 'submitted' }], [['a'], []]);
    expect(r.ok).toBe(false);
    expect(r.missing).toEqual(['d']);
    expect(r.unsettled).toEqual(['b']);
    expect(r.unlogged).toEqual(['c']);
    expect(r.settled).toBe(1);
  });

  it('reports a workflow two processes both logged settling, and one with two entries', () => {
    const r = checkSettlement(['a', 'b'], [...settled('a', 'b'), ...settled('b')], [['a'], ['a']]);
    expect(r.ok).toBe(false);
    expect(r.duplicates).toEqual([
      { workflow: 'a', entries: 1, settledBy: [1, 2] },
      { workflow: 'b', entries: 2, settledBy: [] },
    ]);
  });

  it('names entries no 2xx answer named without failing on them', () => {
    const r = checkSettlement(['a'], settled('a', 'lost'), [['a', 'lost']]);
    expect(r).toMatchObject({ ok: true, unanswered: ['lost'] });
  });

  it("reads the settlement line pds's logger writes, and not a step line or a request line", () => {
    const lines: string[] = [];
    const log = createLogger({
      level: 'info',
      pretty: false,
      destination: new Writable({
        write(chunk: Buffer, _enc, done) {
          lines.push(...chunk.toString().split('\n').filter(Boolean));
          done();
        },
      }),
    });
    // The shapes server.ts (onSettled) and adapters/sandbox/engine.ts (a step) log.
    log.info({ workflow: 'deploy-service-x1', operation: 'deploy-service', phase: 'succeeded', seconds: 1.2, message: 'done' }, 'workflow deploy-service-x1 succeeded');
    log.info({ workflow: 'deploy-service-x1', operation: 'deploy-service', step: 'build', status: 'succeeded', index: 1, of: 8 }, 'workflow deploy-service-x1 step 1/8 succeeded: build');
    log.info({ method: 'POST', route: '/api/v1/operations/{operation_id}/execute', status: 202, workflow: 'deploy-service-x1' }, 'POST /api/v1/operations/{operation_id}/execute 202');
    expect(lines).toHaveLength(3);
    expect(lines.map(settleLine)).toEqual([{ workflow: 'deploy-service-x1', phase: 'succeeded' }, undefined, undefined]);
    expect(settleLine('not json "phase": "msg":"workflow ')).toBeUndefined();
  });
});

describe("pds's warnings and errors", () => {
  it('sums up a warning or error line by message, code and cause, and leaves info lines out', () => {
    const lines: string[] = [];
    const log = createLogger({
      level: 'info',
      pretty: false,
      destination: new Writable({
        write(chunk: Buffer, _enc, done) {
          lines.push(...chunk.toString().split('\n').filter(Boolean));
          done();
        },
      }),
    });
    // A 503's request line as rest/request-log.ts writes it, an engine retry, and a 2xx request line.
    log.warn({ method: 'GET', route: '/api/v1/tenants/{team}', status: 503, code: 'UNAVAILABLE', err: new Error('the record store is unavailable') }, 'GET /api/v1/tenants/{team} 503');
    log.warn({ err: new Error('timeout exceeded\nwhen trying to connect') }, 'sandbox: could not claim workflows; retrying');
    log.info({ method: 'GET', route: '/api/v1/tenants/{team}', status: 200 }, 'GET /api/v1/tenants/{team} 200');
    expect(lines.map(problemLine)).toEqual([
      'GET /api/v1/tenants/{team} 503 UNAVAILABLE: the record store is unavailable',
      'sandbox: could not claim workflows; retrying: timeout exceeded when trying to connect',
      undefined,
    ]);
    expect(problemLine('{"level":50,"msg":"' + 'x'.repeat(300) + '"}')).toHaveLength(201);
  });
});

describe('libc', () => {
  it('names glibc by version, and anything else as not glibc', () => {
    expect(libcOf({ glibcVersionRuntime: '2.36' })).toBe('glibc 2.36');
    expect(libcOf({})).toMatch(/^not glibc/);
  });
});
