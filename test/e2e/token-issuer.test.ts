/**
 * Issue 7 item 19: `pds token` mints for the base URL `pds serve` uses (both from PORT when PDS_BASE_URL is unset),
 * and a pds-form token (HS256) from another issuer is refused saying whose it is and whose this pds is — not blamed on
 * external identity providers. Real `pds serve` and `pds token` processes.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../fixtures/free-port.js';

const exec = promisify(execFile);
const PDS = path.resolve('bin/pds-src.js');

let dataDir: string;
let port: number;
let child: ChildProcess;

/** The environment of a user's shell: nothing of pds's set, then `env`. */
function shell(env: Record<string, string>): NodeJS.ProcessEnv {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('PDS_') && k !== 'PORT' && k !== 'HOST'));
  return { ...clean, PDS_DATA_DIR: dataDir, ...env };
}

async function mint(env: Record<string, string>): Promise<string> {
  const { stdout } = await exec(process.execPath, [PDS, 'token', '--user', 'alice'], { env: shell(env) });
  return stdout.trim();
}

async function get(token: string): Promise<{ status: number; body: any }> {
  const res = await fetch(`http://127.0.0.1:${port}/api/v1/operations`, { headers: { authorization: `Bearer ${token}` } });
  return { status: res.status, body: await res.json() };
}

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(tmpdir(), 'pds-token-'));
  port = await freePort();
  child = spawn(process.execPath, [PDS, 'serve'], { env: shell({ PORT: String(port), HOST: '127.0.0.1' }), stdio: ['ignore', 'ignore', 'inherit'] });
  const deadline = Date.now() + 20_000;
  for (;;) {
    try {
      if ((await fetch(`http://127.0.0.1:${port}/readyz`)).ok) break;
    } catch {
      /* not listening yet */
    }
    if (Date.now() > deadline) throw new Error('pds serve did not become ready');
    await new Promise((r) => setTimeout(r, 100));
  }
});

afterAll(async () => {
  child.kill('SIGTERM');
  await new Promise((resolve) => child.once('exit', resolve));
  await rm(dataDir, { recursive: true, force: true });
});

describe('pds token and pds serve', () => {
  it('agree on the issuer when both run with the same PORT', async () => {
    const token = await mint({ PORT: String(port) });
    const claims = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString());
    expect(claims.iss).toBe(`http://localhost:${port}`);
    expect((await get(token)).status).toBe(200);
  });

  it('refuses a pds token minted for another base URL, naming both', async () => {
    const other = port === 65535 ? port - 1 : port + 1;
    const token = await mint({ PORT: String(other) });
    const res = await get(token);
    expect(res.status).toBe(401);
    expect(res.body.error).toContain(`issued for http://localhost:${other}`);
    expect(res.body.error).toContain(`this pds is http://localhost:${port}`);
    expect(res.body.error).not.toMatch(/identity.provider/i);
  });

  it('says the same of any HS256 token with pds-shaped claims from another issuer', async () => {
    const foreign = await new SignJWT({ groups: [] })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject('alice')
      .setIssuer('https://pds.elsewhere.example')
      .setAudience('https://pds.elsewhere.example')
      .setExpirationTime('5m')
      .sign(new TextEncoder().encode('k'.repeat(40)));
    const res = await get(foreign);
    expect(res.status).toBe(401);
    expect(res.body.error).toContain('issued for https://pds.elsewhere.example');
  });
});
