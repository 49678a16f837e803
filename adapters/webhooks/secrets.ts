/**
 * Webhook signing secrets at rest (issue 20 item 5): pds must read a hook's secret to sign each delivery, so it is
 * kept encrypted, not hashed — a compact JWE (RFC 7516, `dir` + `A256GCM`, made and opened by jose) whose 256-bit key
 * is derived with HKDF-SHA256 (RFC 5869) from the server secret (`PDS_JWT_SECRET`, or the one the sandbox keeps) for
 * this one purpose. A copy of the database alone does not reveal any secret; every replica with the same server
 * secret opens what another sealed.
 */
import { hkdfSync, randomBytes } from 'node:crypto';
import { CompactEncrypt, compactDecrypt } from 'jose';

/** Seals and opens webhook secrets. */
export interface SecretBox {
  seal(secret: string): Promise<string>;
  /**
   * @throws Error when `sealed` was made with another server secret or changed.
   */
  open(sealed: string): Promise<string>;
}

/**
 * @param serverSecret the server secret (the same on every replica).
 * @example
 * const box = secretBox(secret);
 * await box.open(await box.seal('pdswh_…')) // 'pdswh_…'
 */
export function secretBox(serverSecret: Uint8Array): SecretBox {
  const key = new Uint8Array(hkdfSync('sha256', serverSecret, 'pds', 'pds webhook secret A256GCM', 32));
  return {
    seal: (secret) => new CompactEncrypt(new TextEncoder().encode(secret)).setProtectedHeader({ alg: 'dir', enc: 'A256GCM' }).encrypt(key),
    async open(sealed) {
      const { plaintext } = await compactDecrypt(sealed, key, { keyManagementAlgorithms: ['dir'], contentEncryptionAlgorithms: ['A256GCM'] });
      return new TextDecoder().decode(plaintext);
    },
  };
}

/** A new signing secret: `pdswh_` and 32 random bytes, base64url. */
export function newWebhookSecret(): string {
  return `pdswh_${randomBytes(32).toString('base64url')}`;
}
