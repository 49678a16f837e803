/**
 * The sandbox's {@link AuditStore} (SPEC "Audit entry"): entries live in the durable state, in submission order, each
 * with the uid of the tenant it belongs to. The workflow engine records an execution's entry in the same atomic write
 * as its workflow and settles it in the same write that settles the workflow, so `settle` from an `onSettled`
 * listener is harmless but not needed.
 */
import { Conflict } from '../../core/errors.js';
import type { AuditEntry, AuditStatus } from '../../core/model.js';
import type { AuditQuery, AuditRecord, AuditStore, AuditVisibility } from '../../core/ports.js';
import { own, type SandboxState } from './state.js';
import type { StateStore } from './store.js';

/** Create the audit store over the sandbox state. */
export function sandboxAuditStore(store: StateStore): AuditStore {
  return {
    /**
     * Record the entry; resolves once it is on disk. Its tenant is `context.tenantUid`, else the live tenant named
     * `parameters.team_name` (if any). When its workflow already settled (it ran before the entry was appended), the
     * entry is recorded with the workflow's final status and message, so it cannot stay `submitted`.
     * @throws Conflict when an entry for the same workflow exists; Unavailable when it could not be written.
     */
    async append(entry: AuditEntry, context: { tenantUid?: string } = {}): Promise<void> {
      await store.mutate((draft) => appendEntry(draft, entry, context.tenantUid));
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

    async get(workflowName: string): Promise<AuditRecord | undefined> {
      const entry = findLast(store.state.audit, workflowName);
      return entry && copy(entry);
    },

    /**
     * Newest first (submission order), at most `query.limit`: the entries of the visible tenants (by uid) and the
     * caller's own, narrowed by the filters — the rule of the record store's indexed query (`adapters/sql/audit.ts`).
     */
    async query(query: AuditQuery): Promise<AuditRecord[]> {
      const limit = Math.max(0, Math.floor(query.limit));
      const result: AuditRecord[] = [];
      const entries = store.state.audit;
      for (let i = entries.length - 1; i >= 0 && result.length < limit; i--) {
        const entry = entries[i]!;
        if (query.service !== undefined && entry.parameters.component_name !== query.service) continue;
        if (query.userId !== undefined && entry.userId !== query.userId) continue;
        if (!visibleRecord(query.visible, { tenant: entry.parameters.team_name, tenantUid: entry.tenantUid, userId: entry.userId }, query.tenant)) continue;
        result.push(copy(entry));
      }
      return result;
    },
  };
}

/**
 * Whether a record (audit entry or workflow) passes `visible` and the optional tenant filter: for `all`, by tenant
 * name; otherwise records of a visible tenant's current identity (uid), and the caller's own records.
 */
export function visibleRecord(
  visible: AuditVisibility,
  record: { tenant?: string; tenantUid?: string; userId: string },
  tenant: string | undefined,
): boolean {
  if (tenant !== undefined && record.tenant !== tenant) return false;
  if (visible === 'all') return true;
  if (record.userId === visible.userId) return true;
  return record.tenantUid !== undefined && visible.tenants.some((t) => t.uid === record.tenantUid);
}

/**
 * Append `entry` to the draft's trail (see {@link AuditStore.append}); used by the engine to record an execution's
 * entry in the same write as its workflow.
 * @throws Conflict when an entry for the same workflow exists.
 */
export function appendEntry(draft: SandboxState, entry: AuditEntry, tenantUid: string | undefined): void {
  if (draft.audit.some((e) => e.workflowName === entry.workflowName)) {
    throw new Conflict(`an audit entry for workflow ${entry.workflowName} exists already`);
  }
  const record: AuditRecord = { ...entry, parameters: { ...entry.parameters } };
  const uid = tenantUid ?? own(draft.tenants, entry.parameters.team_name ?? '')?.uid;
  if (uid !== undefined) record.tenantUid = uid;
  const run = own(draft.workflows, entry.workflowName);
  if (run && run.phase !== 'submitted' && record.status === 'submitted') {
    record.status = run.phase;
    record.message = run.message;
    if (record.tenantUid === undefined && run.tenantUid !== undefined) record.tenantUid = run.tenantUid;
  }
  draft.audit.push(record);
}

function copy(entry: AuditRecord): AuditRecord {
  return { ...entry, parameters: { ...entry.parameters } };
}

function findLast<T extends AuditEntry>(entries: readonly T[], workflowName: string): T | undefined {
  for (let i = entries.length - 1; i >= 0; i--) if (entries[i]!.workflowName === workflowName) return entries[i];
  return undefined;
}
