/**
 * The one-time import of the sandbox's old log journal, `<dataDir>/logs.jsonl` (one JSON line per log line, written
 * before the log lines moved into the record store): the newest lines of each service (as many as the store keeps)
 * go into `log_lines` in one transaction, and the file is renamed `logs.jsonl.imported` (kept, never deleted). Torn or
 * unparsable lines are skipped, as the journal itself skipped them. A crash between the commit and the rename is
 * harmless: the marker in `pds_meta` is committed with the lines, and the next start only renames the file.
 */
import { rename } from 'node:fs/promises';
import { silentLogger, type Logger } from '../../core/logger.js';
import { readLegacyFile } from './legacy-file.js';
import type { RecordStore } from './index.js';
import { DEFAULT_MAX_LINES_PER_SERVICE, type LogRecord } from './logs.js';

/** The file imported. */
export const LEGACY_LOG_FILE = 'logs.jsonl';
/** What it is renamed to once imported. */
export const IMPORTED_LOG_FILE = 'logs.jsonl.imported';
const IMPORT_MARKER = 'logs_jsonl_imported';
const BATCH = 500;

/**
 * Import `<dataDir>/logs.jsonl` if there is one, then rename it `logs.jsonl.imported`.
 * @returns how many lines were imported, or `undefined` when there was no file.
 */
export async function importLogJournal(
  store: RecordStore,
  options: { dataDir: string; maxPerKey?: number; log?: Logger },
): Promise<number | undefined> {
  const log = options.log ?? silentLogger;
  const legacy = await readLegacyFile(options.dataDir, LEGACY_LOG_FILE, IMPORTED_LOG_FILE);
  if (!legacy) return undefined;
  const { file, text, digest, target } = legacy;
  const marker = await store.meta.get(IMPORT_MARKER);
  let imported = 0;
  if (!marker || (JSON.parse(marker) as { sha256?: string }).sha256 !== digest) {
    const max = options.maxPerKey ?? DEFAULT_MAX_LINES_PER_SERVICE;
    const byKey = new Map<string, LogRecord[]>();
    for (const raw of text.split('\n')) {
      const line = parseLine(raw);
      if (!line) continue;
      const key = `${line.team}/${line.app}`;
      let list = byKey.get(key);
      if (!list) byKey.set(key, (list = []));
      list.push(line);
    }
    const kept = [...byKey.values()].flatMap((list) => list.slice(-max)).sort((a, b) => (a.timestamp < b.timestamp ? -1 : a.timestamp > b.timestamp ? 1 : 0));
    await store.transaction(async (tx) => {
      for (let i = 0; i < kept.length; i += BATCH) await tx.logs.append(kept.slice(i, i + BATCH));
      await tx.meta.put(IMPORT_MARKER, JSON.stringify({ sha256: digest, at: new Date().toISOString(), lines: kept.length }));
    });
    imported = kept.length;
  }
  await rename(file, target);
  log.info({ file, renamedTo: target, lines: imported }, `imported ${imported} log lines from ${file}; the file is kept as ${target}`);
  return imported;
}

function parseLine(raw: string): LogRecord | undefined {
  if (raw.trim() === '') return undefined;
  try {
    const v = JSON.parse(raw) as Partial<LogRecord> | null;
    if (!v || typeof v.team !== 'string' || typeof v.app !== 'string' || typeof v.timestamp !== 'string' || typeof v.line !== 'string') {
      return undefined;
    }
    const labels: Record<string, string> = {};
    if (v.labels && typeof v.labels === 'object') for (const [k, value] of Object.entries(v.labels)) if (typeof value === 'string') labels[k] = value;
    return { team: v.team, app: v.app, timestamp: v.timestamp, line: v.line, labels };
  } catch {
    return undefined;
  }
}
