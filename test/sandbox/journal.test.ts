import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { LogJournal, type JournalLine } from '../../adapters/sandbox/journal.js';
import { tempDir } from './helpers.js';

const line = (app: string, n: number): JournalLine => ({
  team: 'acme',
  app,
  timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, n)).toISOString(),
  line: `${app} ${n}`,
  labels: { source: 'workflow' },
});

describe('sandbox log journal', () => {
  it('keeps the newest lines per service, in memory and, after a reopen, on disk', async () => {
    const file = path.join(await tempDir(), 'logs.jsonl');
    const journal = await LogJournal.open(file, { maxPerKey: 3 });
    for (let n = 0; n < 10; n++) await journal.append([line('web', n), line('api', n)]);
    expect(journal.read('acme', 'web').map((l) => l.line)).toEqual(['web 7', 'web 8', 'web 9']);
    await journal.flush();

    const reopened = await LogJournal.open(file, { maxPerKey: 3, keep: (_team, app) => app === 'web' });
    expect(reopened.read('acme', 'web').map((l) => l.line)).toEqual(['web 7', 'web 8', 'web 9']);
    expect(reopened.read('acme', 'api')).toEqual([]);
    const onDisk = (await readFile(file, 'utf8')).trim().split('\n').map((l) => (JSON.parse(l) as JournalLine).line);
    expect(onDisk).toEqual(['web 7', 'web 8', 'web 9']);
  });

  it('skips garbage and a torn last line', async () => {
    const file = path.join(await tempDir(), 'logs.jsonl');
    await writeFile(file, [JSON.stringify(line('web', 1)), 'not json', '{"team":1}', JSON.stringify(line('web', 2)), '{"team":"acme","ap'].join('\n'));
    const journal = await LogJournal.open(file);
    expect(journal.read('acme', 'web').map((l) => l.line)).toEqual(['web 1', 'web 2']);
    await journal.append([line('web', 3)]);
    const again = await LogJournal.open(file);
    expect(again.read('acme', 'web').map((l) => l.line)).toEqual(['web 1', 'web 2', 'web 3']);
  });
});
