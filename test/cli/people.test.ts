/**
 * The `pds` command for people (issue 12 section 2), run as a real process with its own config directory
 * (`XDG_CONFIG_HOME`) against a real pds whose sign-in goes to the Dex fixture: `pds login` by loopback redirect and
 * by device code (the test is the person's browser), then `whoami`, `deploy --onboard`, `wait`, `workflows`, `status`,
 * `services`, `logs`,
 * `retire` (asked, refused, then confirmed), token refresh, `logout`; output formats, usage errors (exit 2), completion.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDexFixture, type DexFixture } from '../fixtures/dex.js';
import { Browser } from '../helpers/browser.js';
import { executeAndWait, registerRepository, startTestServer, waitForWorkflow, type TestServer } from '../helpers/server.js';

const PDS = path.resolve('bin/pds-src.js');
let dex: DexFixture;
let pds: TestServer;
let home: string;

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

interface Running {
  /** Resolves when stderr has printed something matching `pattern`; gives the match. */
  waitFor(pattern: RegExp): Promise<RegExpMatchArray>;
  done: Promise<Run>;
}

function start(args: string[], options: { env?: Record<string, string>; stdin?: string } = {}): Running {
  const child = spawn(process.execPath, [PDS, ...args], {
    env: { ...process.env, XDG_CONFIG_HOME: home, PDS_BASE_URL: '', PDS_TOKEN: '', ...options.env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  const waiters: { pattern: RegExp; resolve: (m: RegExpMatchArray) => void }[] = [];
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => {
    stderr += d;
    for (const w of [...waiters]) {
      const m = stderr.match(w.pattern);
      if (m) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(m);
      }
    }
  });
  child.stdin.end(options.stdin ?? '');
  return {
    waitFor: (pattern) =>
      new Promise((resolve, reject) => {
        const m = stderr.match(pattern);
        if (m) return resolve(m);
        waiters.push({ pattern, resolve });
        child.once('exit', () => reject(new Error(`pds ${args.join(' ')} exited before printing ${pattern}: ${stderr}`)));
      }),
    done: new Promise((resolve) => child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }))),
  };
}

const run = (args: string[], options?: { env?: Record<string, string>; stdin?: string }) => start(args, options).done;

/** What a person does in the browser: sign in at Dex, allow pds-cli. */
async function signInAt(url: string): Promise<string> {
  const browser = new Browser();
  let page = await browser.open(url);
  // The device URL answers a form its script submits at once (what a browser does), then the code's confirmation.
  if (page.body.includes('document.forms[0].submit()')) page = await browser.submit(page);
  if (page.body.includes('op.deviceConfirmForm')) page = await browser.submit(page);
  expect(page.url.startsWith(`${dex.issuer}/auth`), `${page.url} ${page.status} ${page.body.slice(0, 1500)}`).toBe(true);
  page = await browser.submit(page, { login: 'alice', password: 'pw' });
  expect(page.body).toContain('pds command line');
  page = await browser.submit(page);
  return page.body;
}

const configPath = () => path.join(home, 'pds', 'config.json');

beforeAll(async () => {
  home = await mkdtemp(path.join(tmpdir(), 'pds-cli-home-'));
  dex = await startDexFixture('pds');
  dex.setClientSecret('dex-secret');
  dex.addUser('alice', 'pw', { email: 'alice@example.com', email_verified: true });
  pds = await startTestServer({ PDS_AUTH_URL: dex.url, PDS_OIDC_AUDIENCE: 'pds', PDS_OIDC_CLIENT_SECRET: 'dex-secret' });
  await executeAndWait(pds, 'root', 'create-tenant', { team_name: 'acme', admins: 'alice@example.com' });
  await registerRepository(pds, 'root', 'acme', 'root/web');
});

afterAll(async () => {
  await pds?.stop();
  await dex?.close();
  await rm(home, { recursive: true, force: true });
});

describe('pds login (browser, loopback redirect)', () => {
  it('signs in, keeps the tokens in $XDG_CONFIG_HOME/pds with mode 0600, and whoami shows the person', async () => {
    const login = start(['login', '--no-browser', '--server', pds.url]);
    const [, url] = await login.waitFor(/Sign in at:\n {2}(\S+)\n/);
    expect(await signInAt(url!)).toContain('Signed in');
    const result = await login.done;
    expect(result.code).toBe(0);
    expect(result.stderr).toContain('as alice@example.com');

    const info = await stat(configPath());
    expect(info.mode & 0o777).toBe(0o600);
    const stored = JSON.parse(await readFile(configPath(), 'utf8'));
    expect(stored).toMatchObject({ server: pds.url, accessToken: expect.any(String), refreshToken: expect.any(String) });

    const who = await run(['whoami', '-o', 'json']);
    expect(who.code).toBe(0);
    expect(JSON.parse(who.stdout)).toMatchObject({ server: pds.url, user: 'alice@example.com', scopes: 'pds:read pds:write', source: 'pds login' });
  });

  it('deploys, shows status, services and logs, in every output format', async () => {
    const deploy = await run(['deploy', 'acme/web', '--onboard', '--port', '8787', '--tag', '0.1.0', '--repo', 'root/web', '-o', 'json']);
    expect(deploy.code, deploy.stderr).toBe(0);
    const submitted = JSON.parse(deploy.stdout);
    expect(submitted).toMatchObject({ operation: 'deploy-service', status: 'submitted' });
    // pds wait follows its event stream, a line per finished step on stderr, the workflow on stdout, exit 0.
    const waited = await run(['wait', submitted.workflowName, '-o', 'json']);
    expect(waited.code, waited.stderr).toBe(0);
    expect(JSON.parse(waited.stdout)).toMatchObject({ workflow: submitted.workflowName, settled: true, audit: { status: 'succeeded', userId: 'alice@example.com' } });
    expect(waited.stderr).toMatch(/^✔ step 1\/\d+ \S/m);
    expect(waited.stderr).toMatch(new RegExp(`${submitted.workflowName} succeeded after \\S+: https://acme-web\\.apps\\.test`));
    const history = await run(['workflows', '--team', 'acme', '--service', 'web', '-o', 'json']);
    expect(history.code, history.stderr).toBe(0);
    expect(JSON.parse(history.stdout).items[0]).toMatchObject({ name: submitted.workflowName, operation: 'deploy-service', phase: 'succeeded' });

    const status = await run(['status', 'acme/web', '-o', 'yaml']);
    expect(status.code).toBe(0);
    expect(parseYaml(status.stdout)).toMatchObject({ argocd: { name: 'acme-web', syncStatus: 'Synced' } });

    // Piped stdout without -o: JSON, the API's own body.
    const services = await run(['services', '--team', 'acme']);
    expect(JSON.parse(services.stdout)).toMatchObject({ count: 1, items: [{ team: 'acme', name: 'web', imageTag: '0.1.0' }] });
    const table = await run(['services', '--team', 'acme', '-o', 'table']);
    expect(table.stdout).toMatch(/acme.*web.*0\.1\.0/);

    const logs = await run(['logs', 'acme/web', '--lines', '5', '-o', 'json']);
    expect(logs.code).toBe(0);
    expect(JSON.parse(logs.stdout).lines.length).toBeLessThanOrEqual(5);
  });

  it('retire shows the plan and asks; "n" changes nothing, "y" sends the confirm value', async () => {
    const no = await run(['retire', 'acme/web', '-o', 'json'], { stdin: 'n\n' });
    expect(no.code).toBe(1);
    expect(no.stderr).toMatch(/confirm/i);
    expect(no.stderr).toContain('not retired');
    expect((await pds.api('root', 'GET', '/api/v1/services/acme/web')).status).toBe(200);

    const yes = await run(['retire', 'acme/web', '-o', 'json'], { stdin: 'y\n' });
    expect(yes.code, yes.stderr).toBe(0);
    const submitted = JSON.parse(yes.stdout);
    expect(submitted.operation).toBe('retire-service');
    await waitForWorkflow(pds, 'root', submitted.workflowName);
    expect((await pds.api('root', 'GET', '/api/v1/services/acme/web')).status).toBe(404);
  });

  it('refreshes an expired access token with the stored refresh token', async () => {
    const before = JSON.parse(await readFile(configPath(), 'utf8'));
    await writeFile(configPath(), JSON.stringify({ ...before, expiresAt: 1 }), { mode: 0o600 });
    const who = await run(['whoami', '-o', 'json']);
    expect(who.code, who.stderr).toBe(0);
    const after = JSON.parse(await readFile(configPath(), 'utf8'));
    expect(after.refreshToken).not.toBe(before.refreshToken);
    expect(after.expiresAt).toBeGreaterThan(Date.now() / 1000);
  });

  it('PDS_TOKEN and --server override what is stored', async () => {
    const who = await run(['whoami', '-o', 'json'], { env: { PDS_TOKEN: await pds.token('root'), PDS_BASE_URL: pds.url } });
    expect(JSON.parse(who.stdout)).toMatchObject({ user: 'root', source: 'PDS_TOKEN', scopes: 'every scope your roles allow' });
    const elsewhere = await run(['status', 'acme/web', '--server', 'http://127.0.0.1:9']);
    expect(elsewhere.code).toBe(3); // not signed in to that server
  });

  it('logout revokes the sign-in at the server and forgets it', async () => {
    const stored = JSON.parse(await readFile(configPath(), 'utf8'));
    const out = await run(['logout']);
    expect(out.code).toBe(0);
    await expect(stat(configPath())).rejects.toThrow();
    expect((await run(['services'])).code).toBe(3);
    // The revoked refresh token is refused by the token endpoint.
    const refused = await fetch(`${pds.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: stored.refreshToken, client_id: 'pds-cli' }),
    });
    expect((await refused.json()).error).toBe('invalid_grant');
  });
});

describe('pds login --device (a remote shell)', () => {
  it('prints a URL and code; confirming them in any browser signs the shell in', async () => {
    const login = start(['login', '--device', '--server', pds.url]);
    const [, url] = await login.waitFor(/open:\n {2}(\S+)\n/);
    expect(await signInAt(url!)).toContain('Signed in');
    const result = await login.done;
    expect(result.code, result.stderr).toBe(0);
    expect((await run(['whoami', '-o', 'json'])).code).toBe(0);
  }, 60_000);
});

describe('usage', () => {
  it('suggests a command for a typo and exits 2 for usage errors', async () => {
    const typo = await run(['stauts']);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain('Did you mean status?');
    expect((await run(['status'])).code).toBe(2);
    expect((await run(['deploy', 'acme/web'])).code).toBe(2); // --tag and --repo are required
    expect((await run(['status', 'acme'])).code).toBe(2); // not TEAM/APP
    expect((await run(['services', '-o', 'xml'])).code).toBe(2);
    expect((await run([])).code).toBe(2);
  });

  it('prints the version, a help that fits a screen, and a completion script naming the commands', async () => {
    const pkg = JSON.parse(await readFile('package.json', 'utf8'));
    expect((await run(['--version'])).stdout.trim()).toBe(pkg.version);
    const help = await run(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout.split('\n').length).toBeLessThanOrEqual(40);
    expect(help.stdout.split('\n').every((line) => line.length <= 100)).toBe(true);
    const completion = await run(['completion', 'bash']);
    expect(completion.stdout).toContain('complete -o default -F _pds_complete pds');
    expect(completion.stdout).toMatch(/deploy\) words="[^"]*--tag/);
  });
});
