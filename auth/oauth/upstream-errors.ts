/**
 * openid-client failures → the error tree: the upstream said no (an OAuth error response, a refused code, a bad ID
 * token) is `Unauthenticated`; anything else (network, timeout, an answer that is not OAuth) is `Unavailable`.
 */
import * as oidc from 'openid-client';
import { Unauthenticated, Unavailable, isPlatformError } from '../../core/errors.js';

/**
 * @param upstream the upstream's name for the message, e.g. `Dex`.
 * @example catch (err) { throw upstreamError('Dex', err); }
 */
export function upstreamError(upstream: string, err: unknown): Error {
  if (isPlatformError(err)) return err;
  if (err instanceof oidc.AuthorizationResponseError || err instanceof oidc.ResponseBodyError) {
    return new Unauthenticated(`${upstream} refused the sign-in: ${err.error}${err.error_description ? ` (${err.error_description})` : ''}`, { cause: err });
  }
  if (err instanceof oidc.ClientError && /^OAUTH_(JWT|INVALID_RESPONSE|JSON_ATTRIBUTE|RESPONSE_IS_NOT_CONFORM)/.test(err.code ?? '')) {
    return new Unauthenticated(`${upstream}'s answer to the sign-in could not be accepted: ${err.message}`, { cause: err });
  }
  return new Unavailable(`${upstream} could not be reached to sign in; retry shortly`, { cause: err });
}
