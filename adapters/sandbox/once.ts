/**
 * The sandbox's {@link OnceStore}: claims are kept in the durable state, so a confirmation used before a restart
 * stays used after it (the memory store in `adapters/memory/once.ts` forgets). Expired claims are dropped as new ones
 * are made and at start-up.
 */
import type { OnceStore } from '../../core/ports.js';
import type { SandboxState } from './state.js';
import type { StateStore } from './store.js';

/** Keys are prefixed so a caller's key can never collide with an `Object.prototype` name such as `__proto__`. */
const onceKey = (key: string): string => `k:${key}`;

/** Create the persisted once-store; resolves `claim` only after the claim is on disk. */
export function sandboxOnceStore(store: StateStore, now: () => Date): OnceStore {
  return {
    /** @throws RangeError when `ttlSeconds` is not a positive integer (same contract as the Redis store). */
    async claim(key, ttlSeconds) {
      if (!Number.isInteger(ttlSeconds) || ttlSeconds < 1) throw new RangeError('ttlSeconds must be a positive integer');
      const at = now().getTime();
      return store.mutate((draft) => {
        dropExpiredClaims(draft, at);
        const k = onceKey(key);
        if (Object.hasOwn(draft.once, k)) return false;
        draft.once[k] = at + ttlSeconds * 1000;
        return true;
      });
    },
  };
}

/** Remove claims whose expiry (milliseconds since the epoch) is at or before `at`. */
export function dropExpiredClaims(draft: SandboxState, at: number): void {
  for (const [k, expiresAt] of Object.entries(draft.once)) if (expiresAt <= at) delete draft.once[k];
}
