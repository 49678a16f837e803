/**
 * jose verification failures → caller-facing reasons. The reasons name what is wrong (missing, malformed, expired,
 * bad signature, wrong issuer/audience, algorithm) and never contain the token or its claims' values.
 */
import { errors } from 'jose';

const CLAIM_REASONS: Record<string, string> = {
  iss: 'token issuer is not trusted by this pds',
  aud: 'token audience is not this pds',
  exp: 'token has no valid expiry (exp)',
  nbf: 'token is not valid yet (nbf)',
  iat: 'token issue time (iat) is invalid',
  sub: 'token has no subject (sub)',
};

/**
 * A caller-facing reason for a jose verification failure.
 * @example describeJoseError(new errors.JWTExpired('…', {})) // 'token expired'
 */
export function describeJoseError(err: unknown): string {
  if (err instanceof errors.JWTExpired) return 'token expired';
  if (err instanceof errors.JWSSignatureVerificationFailed) return 'token signature is invalid';
  if (err instanceof errors.JWTClaimValidationFailed) {
    if (err.reason === 'missing') return `token claim "${err.claim}" is missing`;
    return CLAIM_REASONS[err.claim] ?? `token claim "${err.claim}" is invalid`;
  }
  if (err instanceof errors.JOSEAlgNotAllowed || err instanceof errors.JOSENotSupported) return 'token algorithm is not allowed';
  if (err instanceof errors.JWKSNoMatchingKey) return 'token signing key is not one the identity provider publishes';
  if (err instanceof errors.JWKSMultipleMatchingKeys) return 'token signing key is ambiguous (no kid)';
  if (err instanceof errors.JWSInvalid || err instanceof errors.JWTInvalid) return 'token is malformed';
  return 'token is invalid';
}
