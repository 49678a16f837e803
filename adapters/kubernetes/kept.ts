/**
 * What the kubernetes platform keeps in memory of records that no longer change (issue 23 item 3: warm reads of a
 * workflow without a round trip): a settled audit entry here, settled workflows and finished steps' log tails in
 * `engine.ts`. Each is a bound of the newest, not a cache of all.
 */
import type { AuditRecord, AuditStore } from '../../core/ports.js';

/** Settled audit entries kept (about 1 KB each). */
export const AUDIT_KEPT = 2_000;

/** Set `key` in `map` as its newest entry, dropping the oldest beyond `max` (a Map iterates in insertion order). */
export function keepNewest<K, V>(map: Map<K, V>, key: K, value: V, max: number): void {
  map.delete(key);
  map.set(key, value);
  if (map.size > max) map.delete(map.keys().next().value!);
}

/**
 * `store` with its settled entries kept once read, at most `max`: a settled entry is final (the record store settles
 * an entry once, with its workflow, from `submitted`; a later `settle` of the same outcome changes nothing), so every
 * replica may keep it. An entry still `submitted` is read from the store each time.
 */
export function keptAudit(store: AuditStore, max = AUDIT_KEPT): AuditStore {
  const kept = new Map<string, AuditRecord>();
  return {
    append: (entry, context) => store.append(entry, context),
    async settle(workflowName, status, message) {
      kept.delete(workflowName);
      await store.settle(workflowName, status, message);
    },
    async get(workflowName) {
      const entry = kept.get(workflowName);
      if (entry) return { ...entry, parameters: { ...entry.parameters } };
      const read = await store.get(workflowName);
      if (read && read.status !== 'submitted') keepNewest(kept, workflowName, { ...read, parameters: { ...read.parameters } }, max);
      return read;
    },
    query: (query) => store.query(query),
  };
}
