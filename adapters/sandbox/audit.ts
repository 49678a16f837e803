/**
 * The sandbox's {@link AuditStore} (SPEC "Audit entry"): entries live in the durable state, in submission order.
 * The workflow engine settles an entry in the same atomic write that settles its workflow, so `settle` from an
 * `onSettled` listener is harmless but not needed.
 */
import { Conflict } from '../../core/errors.js';
import type { AuditEntry, AuditStatus } from '../../core/model.js';
import type { AuditStore } from '../../core/ports.js';
import { own } from './state.js';
import type { StateStore } from './store.js';

/** Create the audit store over the sandbox state. */
export function sandboxAuditStore(store: StateStore): AuditStore {
  return {
    /**
     * Record the entry; resolves once it is on disk. When its workflow already settled (it ran before the entry was
     * appended), the entry is recorded with the workflow's final status and message, so it cannot stay `submitted`.
     * @throws Conflict when an entry for the same workflow exists; Unavailable when it could not be written.
     */
    async append(entry: AuditEntry): Promise<void> {
      await store.mutate((draft) => {
        if (draft.audit.some((e) => e.workflowName === entry.workflowName)) {
          throw new Conflict(`an audit entry for workflow ${entry.workflowName} exists already`);
        }
        const copy: AuditEntry = { ...entry, parameters: { ...entry.parameters } };
        const run = own(draft.workflows, entry.workflowName);
        if (run && run.phase !== 'submitted' && copy.status === 'submitted') {
          copy.status = run.phase;
          copy.message = run.message;
        }
        draft.audit.push(copy);
      });
    },

    /** Move the entry of `workflowName` to `status` with `message`; unknown names are ignored. */
    async settle(workflowName: string, status: AuditStatus, message: string): Promise<void> {
      const current = findLast(store.latest.audit, workflowName);
      if (!current || (current.status === status && current.message === message)) return; // nothing to write
      await store.mutate((draft) => {
        const entry = findLast(draft.audit, workflowName);
        if (entry) Object.assign(entry, { status, message });
      });
    },

    async get(workflowName: string): Promise<AuditEntry | undefined> {
      const entry = findLast(store.state.audit, workflowName);
      return entry && { ...entry, parameters: { ...entry.parameters } };
    },

    /** Newest first by `timestamp` (submission order among equal timestamps), at most `limit`, only those `visible`. */
    async recent(limit: number, visible: (entry: AuditEntry) => boolean): Promise<AuditEntry[]> {
      const ordered = store.state.audit
        .map((entry, index) => ({ entry, index }))
        .sort((a, b) => (a.entry.timestamp < b.entry.timestamp ? 1 : a.entry.timestamp > b.entry.timestamp ? -1 : b.index - a.index));
      const result: AuditEntry[] = [];
      for (const { entry } of ordered) {
        if (result.length >= limit) break;
        if (visible(entry)) result.push({ ...entry, parameters: { ...entry.parameters } });
      }
      return result;
    },
  };
}

function findLast(entries: readonly AuditEntry[], workflowName: string): AuditEntry | undefined {
  for (let i = entries.length - 1; i >= 0; i--) if (entries[i]!.workflowName === workflowName) return entries[i];
  return undefined;
}
