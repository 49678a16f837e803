/**
 * `pds dev`: the sandbox on loopback with the caller as platform admin, and the two shell lines that reach it
 * (issue 19 item 4). What `npm start` plus `pds token` plus `PDS_ADMINS` do by hand, in one command a README can paste.
 */
import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { issueSelfToken, loadOrCreateSecret } from '../../auth/self-issued.js';
import { loadConfig } from '../../config.js';
import { createLogger } from '../../core/logger.js';
import { durationSeconds } from '../../tools/logs.js';
import { runUntilSignal } from './serve.js';

export const summary = 'the sandbox on 127.0.0.1, you as platform admin; prints exports';

const USAGE = `usage: pds dev [--user <id>] [--port <n>] [--data-dir <dir>] [--ttl 12h]

Runs pds with the sandbox backend, listening on 127.0.0.1 only, with --user as a platform admin (may create
tenants). Once /healthz answers it prints, on stdout:
  export PDS_BASE_URL=http://127.0.0.1:<port>
  export PDS_TOKEN=<a self-issued token for --user, as pds token mints>
Logs go to stderr. The same lines are in <data-dir>/dev.env (mode 0600), written before pds listens, so a script that
waited for /healthz can source it. Ctrl-C stops pds (and removes dev.env).
  --user      the platform admin, e.g. alice (default $USER, else "dev")
  --port      the port on 127.0.0.1 (default $PORT, else 8080; 0 picks a free one)
  --data-dir  the sandbox's state and token secret (default $PDS_DATA_DIR, else ./.pds)
  --ttl       the token's lifetime: s, m, h or d, e.g. 30m, 12h, 7d (default 12h, at most 365d)
Other PDS_* settings apply (e.g. PDS_SANDBOX_STEP_MS); PDS_BACKEND, HOST, PDS_BASE_URL, PDS_DATABASE_URL, REDIS_URL and
PDS_JWT_SECRET are ignored: pds dev keeps everything on this machine, in its data directory.`;

/** How long `/healthz` may take to answer once pds listens, milliseconds. */
const HEALTH_DEADLINE_MS = 30_000;

/** A port on 127.0.0.1 nobody listens on right now (the kernel's choice). */
async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve, reject) => probe.once('error', reject).listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

/** Poll `url` until it answers 200; false when `deadlineMs` passed first. */
async function answers(url: string, deadlineMs: number): Promise<boolean> {
  const deadline = Date.now() + deadlineMs;
  while (Date.now() < deadline) {
    const status = await fetch(url, { signal: AbortSignal.timeout(2000) }).then((r) => r.status, () => 0);
    if (status === 200) return true;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return false;
}

/**
 * Serve until SIGINT/SIGTERM; returns 0 after the shutdown, 2 for a bad option, 1 when pds could not start or
 * `/healthz` did not answer within 30 s.
 */
export async function run(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      user: { type: 'string', short: 'u' },
      port: { type: 'string', short: 'p' },
      'data-dir': { type: 'string' },
      ttl: { type: 'string', default: '12h' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const user = (values.user ?? process.env.USER ?? '').trim() || 'dev';
  const portText = values.port ?? process.env.PORT ?? '8080';
  const wanted = /^\d{1,5}$/.test(portText) ? Number(portText) : NaN;
  if (!(wanted >= 0 && wanted <= 65535)) {
    console.error(`pds dev: --port (or PORT) must be a port number from 0 to 65535, 0 for a free one (got "${portText}")`);
    return 2;
  }
  const ttl = durationSeconds(values.ttl!);
  if (!ttl || ttl > 365 * 86400) {
    console.error(`pds dev: --ttl must be a duration like 30m, 12h or 7d, at most 365d (got "${values.ttl}")`);
    return 2;
  }
  // Chosen before start-up, so the base URL (the token's issuer) and dev.env exist before anyone can reach pds.
  const port = wanted === 0 ? await freePort() : wanted;
  const baseUrl = `http://127.0.0.1:${port}`;
  const { PDS_DATABASE_URL: _db, REDIS_URL: _redis, PDS_JWT_SECRET: _secret, ...inherited } = process.env;
  const config = loadConfig({
    ...inherited,
    PDS_BACKEND: 'sandbox',
    HOST: '127.0.0.1',
    PORT: String(port),
    PDS_BASE_URL: baseUrl,
    PDS_DATA_DIR: values['data-dir'] ?? process.env.PDS_DATA_DIR ?? './.pds',
    PDS_ADMINS: [user, process.env.PDS_ADMINS].filter(Boolean).join(','),
  });

  mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  const secret = await loadOrCreateSecret(undefined, config.dataDir);
  const token = await issueSelfToken(secret, baseUrl, { sub: user, groups: [] }, ttl);
  // A JWT is base64url and dots, the URL is digits and punctuation: nothing a shell would read differently unquoted.
  const lines = `export PDS_BASE_URL=${baseUrl}\nexport PDS_TOKEN=${token}\n`;
  const envFile = path.join(config.dataDir, 'dev.env');
  writeFileSync(`${envFile}.tmp`, lines, { mode: 0o600 });
  renameSync(`${envFile}.tmp`, envFile);

  const log = createLogger({ level: config.logLevel, destination: process.stderr, pretty: process.stderr.isTTY === true });
  const { startServer } = await import('../../server.js');
  let server;
  try {
    server = await startServer(config, { log });
  } catch (err) {
    rmSync(envFile, { force: true });
    throw err;
  }
  const stopped = runUntilSignal(server);
  if (!(await answers(`${baseUrl}/healthz`, HEALTH_DEADLINE_MS))) {
    log.error({ url: `${baseUrl}/healthz` }, `pds dev: /healthz did not answer 200 within ${HEALTH_DEADLINE_MS / 1000} s; stopping`);
    rmSync(envFile, { force: true });
    await server.close();
    return 1;
  }
  process.stdout.write(lines);
  log.info(
    { baseUrl, admin: user, state: config.dataDir, envFile, tokenTtlSeconds: ttl },
    `pds dev: the sandbox at ${baseUrl} with ${user} as platform admin; in another shell: . ${path.relative(process.cwd(), envFile) || envFile} (or paste the export lines); the web console is ${baseUrl}/ (a sign-in link, there: npx pds console --user ${user}). Ctrl-C stops it`,
  );
  await stopped;
  rmSync(envFile, { force: true });
  return 0;
}
