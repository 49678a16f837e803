/**
 * Confirmation values for operations with `requiresConfirm` (issue 2 §4): the first call answers 400 with what would
 * happen and a value the caller must send back as `confirm`. The value is an HMAC-SHA256 over the caller, the
 * operation, its parameters and an expiry, so a model cannot invent one, and its nonce is claimed in the
 * {@link OnceStore} so it works once.
 *
 * Format: `<expiry unix seconds>.<nonce>.<signature>` (base64url).
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { InvalidParams } from '../../core/errors.js';
import type { OnceStore } from '../../core/ports.js';

/** How long a confirmation value stays valid, seconds. */
export const CONFIRM_TTL_SECONDS = 300;

/** What a confirmation value is bound to: the caller, the operation and its parameters as recorded. */
export interface Binding {
  userId: string;
  operation: string;
  parameters: Record<string, string>;
}

function sign(secret: Uint8Array, binding: Binding, expiry: number, nonce: string): string {
  const params = Object.keys(binding.parameters)
    .sort()
    .map((k) => [k, binding.parameters[k]]);
  return createHmac('sha256', secret)
    .update(JSON.stringify(['pds-confirm-v1', binding.userId, binding.operation, params, expiry, nonce]))
    .digest('base64url');
}

/**
 * A fresh confirmation value bound to this caller, operation and parameters.
 * @returns the value and when it expires (ISO 8601 UTC).
 */
export function createConfirmation(secret: Uint8Array, binding: Binding, nowMs = Date.now()): { value: string; expiresAt: string } {
  const expiry = Math.floor(nowMs / 1000) + CONFIRM_TTL_SECONDS;
  const nonce = randomBytes(12).toString('base64url');
  return { value: `${expiry}.${nonce}.${sign(secret, binding, expiry, nonce)}`, expiresAt: new Date(expiry * 1000).toISOString() };
}

/**
 * Accept a confirmation value once.
 * @throws InvalidParams when it is malformed, was made for another caller/operation/parameters, has expired, or was
 *   already used; the message says to call again without `confirm` for a new one.
 */
export async function redeemConfirmation(
  secret: Uint8Array,
  once: OnceStore,
  binding: Binding,
  value: string,
  nowMs = Date.now(),
): Promise<void> {
  const again = 'call again without "confirm" to get a new value';
  const [expiryText, nonce, signature, ...rest] = value.split('.');
  const expiry = Number(expiryText);
  if (rest.length || !nonce || !signature || !Number.isInteger(expiry)) {
    throw new InvalidParams(`confirm: not a confirmation value issued by pds; ${again}`);
  }
  const expected = Buffer.from(sign(secret, binding, expiry, nonce));
  const given = Buffer.from(signature);
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) {
    throw new InvalidParams(`confirm: the value does not match this caller, operation and parameters; ${again}`);
  }
  if (expiry * 1000 < nowMs) throw new InvalidParams(`confirm: the value has expired; ${again}`);
  if (!(await once.claim(`confirm:${nonce}`, CONFIRM_TTL_SECONDS))) {
    throw new InvalidParams(`confirm: the value was already used; ${again}`);
  }
}
