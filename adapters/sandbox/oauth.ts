/**
 * The sandbox's {@link OAuthStore}: the authorization server's records live in the durable state (`state.json`,
 * key `<kind>:<id>`), so codes, refresh tokens, grants and registered clients survive a restart. Expired records are
 * dropped as records are written and at start-up. One process owns the state, so a find followed by a write cannot
 * interleave with another replica's.
 */
import type { OAuthStore } from '../../core/ports.js';
import type { SandboxState } from './state.js';
import { own } from './state.js';
import type { StateStore } from './store.js';

const keyOf = (kind: string, id: string): string => `${kind}:${id}`;

/** Create the persisted OAuth store; every write resolves once it is on disk. */
export function sandboxOAuthStore(store: StateStore, now: () => Date): OAuthStore {
  const live = (kind: string, id: string) => {
    const record = own(store.latest.oauth, keyOf(kind, id));
    return record && (record.expiresAt === undefined || record.expiresAt > now().getTime()) ? record : undefined;
  };
  return {
    async upsert(kind, id, payload, expiresInSeconds) {
      const at = now().getTime();
      await store.mutate((draft) => {
        dropExpiredOAuthRecords(draft, at);
        draft.oauth[keyOf(kind, id)] = {
          payload: structuredClone(payload),
          ...(expiresInSeconds !== undefined && { expiresAt: at + expiresInSeconds * 1000 }),
        };
      });
    },
    async find(kind, id) {
      const record = live(kind, id);
      return record && structuredClone(record.payload);
    },
    async findBy(kind, field, value) {
      const prefix = `${kind}:`;
      const at = now().getTime();
      for (const [key, record] of Object.entries(store.latest.oauth)) {
        if (!key.startsWith(prefix) || record.payload[field] !== value) continue;
        if (record.expiresAt === undefined || record.expiresAt > at) return structuredClone(record.payload);
      }
      return undefined;
    },
    async consume(kind, id) {
      const record = live(kind, id);
      if (!record || record.payload.consumed !== undefined) return;
      await store.mutate((draft) => {
        const record = own(draft.oauth, keyOf(kind, id));
        // The first use is the one that counts: a replay must not move it.
        if (record && record.payload.consumed === undefined) record.payload.consumed = Math.floor(now().getTime() / 1000);
      });
    },
    async destroy(kind, id) {
      if (!own(store.latest.oauth, keyOf(kind, id))) return;
      await store.mutate((draft) => {
        delete draft.oauth[keyOf(kind, id)];
      });
    },
    async revokeGrant(grantId) {
      await store.mutate((draft) => {
        for (const [key, record] of Object.entries(draft.oauth)) if (record.payload.grantId === grantId) delete draft.oauth[key];
      });
    },
  };
}

/** Remove records whose expiry (milliseconds since the epoch) is at or before `at`. */
export function dropExpiredOAuthRecords(draft: SandboxState, at: number): void {
  for (const [key, record] of Object.entries(draft.oauth)) if (record.expiresAt !== undefined && record.expiresAt <= at) delete draft.oauth[key];
}
