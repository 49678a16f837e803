/** Shared set-up for the auth tests: config pointing at the fixtures, and error capture. */
import { loadConfig, type Config } from '../../config.js';
import { PlatformError } from '../../core/errors.js';

export const SECRET = new TextEncoder().encode('s'.repeat(40));
export const BASE = 'http://pds.test';

export function testConfig(env: Record<string, string | undefined> = {}): Config {
  return loadConfig({ PDS_BASE_URL: BASE, PDS_JWT_SECRET: 's'.repeat(40), ...env });
}

/** The PlatformError a promise rejects with (fails the test if it resolves or throws something else). */
export async function refusal(promise: Promise<unknown>): Promise<PlatformError> {
  const err = await promise.then(
    () => {
      throw new Error('expected a refusal, got a result');
    },
    (e: unknown) => e,
  );
  if (!(err instanceof PlatformError)) throw err;
  return err;
}
