/**
 * The measurement behind keeping the sandbox's log lines in the record store rather than in the bounded `logs.jsonl`
 * (README "Records"): for one workflow step's lines (4 lines), the cost added to the step's commit when they go into
 * `log_lines` in the same transaction, against appending them to a file as the
 * journal did; and reading a service's newest 100 lines of 5,000. SQLite with `synchronous=FULL`, as pds runs it.
 *
 * Run: `npx tsx bench/log-lines.ts` (not part of `npm run bench`; a one-off, figures in README "Records").
 */
import { appendFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { openRecordStore, type LogRecord } from '../adapters/sql/index.js';

const N = 1000;
const dir = await mkdtemp(path.join(tmpdir(), 'pds-log-lines-'));
const store = await openRecordStore({ dataDir: dir });
const lines = (i: number): LogRecord[] =>
  Array.from({ length: 4 }, (_, k) => ({
    team: 'acme',
    app: 'web',
    timestamp: new Date(1_762_000_000_000 + i).toISOString(),
    line: `step ${k + 1}/9: something the step printed, about this long, number ${i}`,
    labels: { source: 'workflow', workflow: 'deploy-service-x7k2p', step: 'build image' },
  }));

function stats(samples: number[]): string {
  samples.sort((a, b) => a - b);
  const at = (q: number) => samples[Math.min(samples.length - 1, Math.floor(q * samples.length))]!.toFixed(3);
  return `p50 ${at(0.5)} ms, p99 ${at(0.99)} ms`;
}

async function timed(what: (i: number) => Promise<unknown>): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < N; i++) {
    const t = performance.now();
    await what(i);
    samples.push(performance.now() - t);
  }
  return samples;
}

// A service at its bound.
for (let i = 0; i < 5_000 / 4; i++) await store.logs.append(lines(i));
const commitAlone = await timed((i) => store.transaction((tx) => tx.meta.put('step', String(i))));
const commitWithLines = await timed((i) => store.transaction(async (tx) => {
  await tx.meta.put('step', String(i));
  await tx.logs.append(lines(i));
}));
const file = path.join(dir, 'logs.jsonl');
const fileAppend = await timed((i) => appendFile(file, lines(i).map((l) => JSON.stringify(l)).join('\n') + '\n', 'utf8'));
const read = await timed(() => store.logs.read('acme', 'web', { since: '1970-01-01T00:00:00.000Z', limit: 100 }));
console.log(`step commit alone:            ${stats(commitAlone)}`);
console.log(`step commit with its 4 lines: ${stats(commitWithLines)}`);
console.log(`logs.jsonl append of 4 lines: ${stats(fileAppend)} (no fsync: the journal never synced)`);
console.log(`read newest 100 of 5,000:     ${stats(read)}`);
await store.close();
await rm(dir, { recursive: true, force: true });
