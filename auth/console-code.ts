/**
 * The one-time sign-in code of the web console on a sandbox (issue 21 item 2): `pds console --user alice`, an operator
 * command holding the server secret like `pds token`, signs a short HS256 JWT naming the person; the console's sign-in
 * page sends it back in a POST, and the server accepts it once (through the claim store) within its 10 minutes.
 *
 * The code is no bearer token: its audience is `{base}/console`, which {@link verifySelfToken} refuses, and its
 * `purpose` claim is checked here, so a code cannot call the API and a pds token cannot stand in for a code.
 */
import { randomBytes } from 'node:crypto';
import { SignJWT, jwtVerify } from 'jose';
import { Unauthenticated } from '../core/errors.js';
import { describeJoseError } from './jose-errors.js';

/** How long a sign-in code is valid, seconds (10 minutes). */
export const CONSOLE_CODE_TTL = 600;

const PURPOSE = 'pds console sign-in';

/** The audience of console sign-in codes: `{baseUrl}/console`, never one of the API's resources. */
export const consoleAudience = (baseUrl: string): string => `${baseUrl}/console`;

/** A verified sign-in code: who it signs in, its single-use id and its expiry (epoch seconds). */
export interface ConsoleCode {
  sub: string;
  jti: string;
  exp: number;
}

/**
 * Sign a one-time console sign-in code for `user`.
 * @param secret the server's HS256 secret (`PDS_JWT_SECRET` or the data directory's).
 * @param baseUrl `PDS_BASE_URL`: the issuer.
 * @returns the compact JWT, valid {@link CONSOLE_CODE_TTL} seconds.
 * @example await issueConsoleCode(secret, 'http://localhost:8080', 'alice')
 */
export function issueConsoleCode(secret: Uint8Array, baseUrl: string, user: string): Promise<string> {
  return new SignJWT({ purpose: PURPOSE })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(user)
    .setIssuer(baseUrl)
    .setAudience(consoleAudience(baseUrl))
    .setJti(randomBytes(16).toString('base64url'))
    .setIssuedAt()
    .setExpirationTime(`${CONSOLE_CODE_TTL}s`)
    .sign(secret);
}

/**
 * Verify a console sign-in code (signature, issuer, audience, purpose, expiry). Single use is the caller's: claim
 * `jti` in the {@link OnceStore} for the code's remaining life.
 * @throws Unauthenticated saying the code is expired or not a sign-in code (never echoing it).
 */
export async function verifyConsoleCode(secret: Uint8Array, baseUrl: string, code: string): Promise<ConsoleCode> {
  try {
    const { payload } = await jwtVerify(code, secret, {
      algorithms: ['HS256'],
      issuer: baseUrl,
      audience: consoleAudience(baseUrl),
      requiredClaims: ['exp', 'sub', 'jti'],
    });
    if (payload.purpose !== PURPOSE) throw new Error('not a console sign-in code');
    return { sub: payload.sub!, jti: payload.jti!, exp: payload.exp! };
  } catch (err) {
    throw new Unauthenticated(`console sign-in code refused (${describeJoseError(err)}): ask for a new one with "npx pds console --user <you>"`, { cause: err });
  }
}
