/**
 * The `requestState` of an MCP `input_required` answer (MCP 2026-07-28), sealed so the client can neither read nor
 * change it (issue 17 item 8). The state carries what the second round needs — for a confirmation, the confirm value
 * of `tools/confirm-with-person.ts` — and a client that could read that value could send `confirm` itself and skip
 * the person's "yes". So the state is encrypted, not only signed: a compact JWE (RFC 7516, `dir` + `A256GCM`, made
 * and opened by jose) whose 256-bit key is derived with HKDF-SHA256 (RFC 5869) from the server secret for this one
 * purpose. AES-GCM's tag also authenticates it: a changed byte fails to open. Every replica with the same secret opens
 * what another sealed; a state lives {@link REQUEST_STATE_TTL} seconds.
 */
import { hkdfSync } from 'node:crypto';
import { EncryptJWT, jwtDecrypt } from 'jose';

/** Lifetime of a sealed state, seconds. */
export const REQUEST_STATE_TTL = 600;

/** Seals a payload into an opaque `requestState` and opens it again. */
export interface RequestStateCodec<T> {
  /** The payload, encrypted and authenticated, as a string to send the client. */
  mint(payload: T): Promise<string>;
  /**
   * The payload of a state this codec (or one with the same secret) minted.
   * @throws Error when the state was changed, made with another key, malformed or older than its lifetime; the MCP
   *   SDK answers the request with an error and the handler never runs.
   */
  verify(state: string): Promise<T>;
}

/** The AES-256-GCM key for `requestState`: HKDF-SHA256 of the server secret, with a label of its own. */
function stateKey(secret: Uint8Array): Uint8Array {
  return new Uint8Array(hkdfSync('sha256', secret, 'pds', 'pds MCP requestState A256GCM', 32));
}

/**
 * @param secret the server secret (≥ 32 bytes; the same on every replica).
 * @example
 * const codec = createRequestStateCodec<{ confirm: string }>(secret);
 * const state = await codec.mint({ confirm }); // "eyJhbGciOiJkaXIiLCJlbmMiOiJBMjU2R0NNIn0..…" — nothing readable
 * (await codec.verify(state)).confirm === confirm;
 */
export function createRequestStateCodec<T>(secret: Uint8Array, ttlSeconds = REQUEST_STATE_TTL): RequestStateCodec<T> {
  if (secret.byteLength < 32) throw new RangeError(`requestState secret must be at least 32 bytes (got ${secret.byteLength})`);
  const key = stateKey(secret);
  return {
    mint: (payload) =>
      new EncryptJWT({ p: payload as unknown })
        .setProtectedHeader({ alg: 'dir', enc: 'A256GCM' })
        .setIssuedAt()
        .setExpirationTime(`${ttlSeconds}s`)
        .encrypt(key),
    async verify(state) {
      const { payload } = await jwtDecrypt(state, key, { keyManagementAlgorithms: ['dir'], contentEncryptionAlgorithms: ['A256GCM'] });
      return payload.p as T;
    },
  };
}
