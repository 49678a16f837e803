/**
 * oidc-provider's storage adapter over the {@link OAuthStore} port: each model (`AuthorizationCode`, `RefreshToken`,
 * `Grant`, `Session`, `Interaction`, `Client`, `DeviceCode`, …) is a `kind` of record. `revokeByGrantId` removes every
 * record of a grant, which is how a replayed refresh token revokes its whole family. oidc-provider stores a registered
 * client with no lifetime; it is given {@link CLIENT_IDLE_TTL}, which each use extends (`auth/oauth/registration.ts`).
 */
import type { Adapter, AdapterPayload } from 'oidc-provider';
import type { OAuthStore } from '../../core/ports.js';
import { CLIENT_IDLE_TTL } from './registration.js';

/**
 * @example new Provider(issuer, { adapter: storeAdapter(platform.oauth) })
 */
export function storeAdapter(store: OAuthStore): (model: string) => Adapter {
  return (model) => ({
    upsert: (id, payload, expiresIn) =>
      store.upsert(model, id, payload as Record<string, unknown>, expiresIn ?? (model === 'Client' ? CLIENT_IDLE_TTL : undefined)),
    find: async (id) => (await store.find(model, id)) as AdapterPayload | undefined,
    findByUid: async (uid) => (await store.findBy(model, 'uid', uid)) as AdapterPayload | undefined,
    findByUserCode: async (userCode) => (await store.findBy(model, 'userCode', userCode)) as AdapterPayload | undefined,
    consume: (id) => store.consume(model, id),
    destroy: (id) => store.destroy(model, id),
    revokeByGrantId: (grantId) => store.revokeGrant(grantId),
  });
}
