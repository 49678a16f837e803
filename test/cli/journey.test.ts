/**
 * The CLI finishes a person's first hour without curl (issue 19 item 2), run as real processes against a real pds:
 * `tenants create --wait` (as a platform admin), then as the tenant's admin `repos grant`/`sync`/list, `deploy --onboard --wait`, a deploy without `--repo` (the last
 * deploy's repository), `previews create`/list/`delete`, `rollback --wait`, `retire --yes --wait`; the server's REST
 * hints said as `pds` commands and its parameter names as flags; did-you-mean for options; borderless tables cut to 80
 * columns (full with `-o wide`), coloured only on a terminal without NO_COLOR; empty lists that say what to do next;
 * `pds login` failing fast when the server has no sign-in method.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';

const PDS = path.resolve('bin/pds-src.js');
const ESC = '\u001b[';
let pds: TestServer;
let home: string;
let env: Record<string, string>;

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** `pds args…` as a process with piped stdio; resolves when it exits (the test's own timeout is the deadline). */
function run(args: string[], extra: Record<string, string> = {}): Promise<Run> {
  const child = spawn(process.execPath, [PDS, ...args], { env: { ...process.env, XDG_CONFIG_HOME: home, NO_COLOR: '', ...env, ...extra }, stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  child.stdin.end();
  return new Promise((resolve) => child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr })));
}

/**
 * `pds args…` on a pseudo-terminal of `columns` columns (util-linux `script`), so stdout is a TTY. The arguments reach
 * the shell through the environment, never spliced into its command text.
 */
function onTerminal(args: string[], extra: Record<string, string> = {}): Promise<Run> {
  // NO_COLOR counts when set at all (Node's own colour check), so it is left out unless the test sets it.
  // CI=… makes Node report a terminal of two colours (tty getColorDepth), as on CI: a person's terminal is asked for.
  const { NO_COLOR: _unset, COLUMNS: _none, CI: _ci, FORCE_COLOR: _forced, ...inherited } = process.env;
  const child = spawn('script', ['-qefc', 'stty cols 80 rows 30; exec "$PDS_NODE" "$PDS_BIN" $PDS_ARGS', '/dev/null'], {
    env: { ...inherited, XDG_CONFIG_HOME: home, PDS_NODE: process.execPath, PDS_BIN: PDS, PDS_ARGS: args.join(' '), TERM: 'xterm-256color', ...env, ...extra },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  child.stdout.on('data', (d) => (stdout += d));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr: '' })));
}

beforeAll(async () => {
  home = await mkdtemp(path.join(tmpdir(), 'pds-cli-journey-'));
  pds = await startTestServer();
  env = { PDS_BASE_URL: pds.url, PDS_TOKEN: await pds.token('root') };
});

afterAll(async () => {
  await pds?.stop();
  await rm(home, { recursive: true, force: true });
});

describe('the journey, no curl', () => {
  it('empty lists say what to do next', async () => {
    const tenants = await run(['tenants', '-o', 'table']);
    expect(tenants.code, tenants.stderr).toBe(0);
    expect(tenants.stdout).toBe('');
    expect(tenants.stderr).toContain('no tenants yet — create one: pds tenants create TEAM');
    const services = await run(['services', '-o', 'table']);
    expect(services.stderr).toContain('no services yet — onboard one: pds deploy TEAM/APP --onboard');
  });

  it('tenants create --wait follows the workflow and exits 0 once the tenant exists', async () => {
    const created = await run(['tenants', 'create', 'acme', '--admins', 'alice', '--members', 'bob', '--wait', '-o', 'json']);
    expect(created.code, created.stderr).toBe(0);
    expect(JSON.parse(created.stdout)).toMatchObject({ settled: true, audit: { operation: 'create-tenant', status: 'succeeded' } });
    expect(created.stderr).toMatch(/^✔ step 1\/\d+ \S/m);
    expect((await pds.api('root', 'GET', '/api/v1/tenants/acme')).status).toBe(200);
    const list = await run(['tenants', '-o', 'json']);
    expect(JSON.parse(list.stdout).items.map((t: { name: string }) => t.name)).toContain('acme');
    // From here on the person is alice, acme's admin: only a member of the tenant named like the repository's owner
    // may register it (adapters/sandbox/code-host.ts), as on GitHub.
    env.PDS_TOKEN = await pds.token('alice');
  });

  it('a repository that is not registered: the hint names pds repos grant and pds repos sync, not REST', async () => {
    const refused = await run(['deploy', 'acme/web', '--onboard', '--port', '8787', '--tag', '0.1.0', '--repo', 'acme/web']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('pds repos grant acme acme/web');
    expect(refused.stderr).toContain('pds repos sync acme');
    expect(refused.stderr).not.toContain('/api/v1/');
  });

  it('repos: an empty list, grant prints the URL and the next command, sync registers, the list shows it', async () => {
    const empty = await run(['repos', '--team', 'acme', '-o', 'table']);
    expect(empty.code, empty.stderr).toBe(0);
    expect(empty.stderr).toContain('no repositories registered for acme — register one: pds repos grant acme OWNER/REPO');
    const grant = await run(['repos', 'grant', 'acme', 'acme/web', '--no-browser', '-o', 'table']);
    expect(grant.code, grant.stderr).toBe(0);
    expect(grant.stderr).toMatch(/at:\n {2}https?:\/\/\S+\nthen: pds repos sync acme\n/);
    const sync = await run(['repos', 'sync', 'acme', '-o', 'json']);
    expect(sync.code, sync.stderr).toBe(0);
    expect(JSON.parse(sync.stdout).items.map((r: { fullName: string }) => r.fullName)).toContain('acme/web');
    const list = await run(['repos', '--team', 'acme', '-o', 'table']);
    expect(list.stdout).toMatch(/^TEAM\s+REPOSITORY\s+BRANCH/m);
    expect(list.stdout).toMatch(/^acme\s+acme\/web\s/m);
    // Without --team, a platform admin sees every tenant's; a tenant member is asked for --team.
    const every = await run(['repos', '-o', 'json'], { PDS_TOKEN: await pds.token('root') });
    expect(JSON.parse(every.stdout).items).toContainEqual(expect.objectContaining({ team: 'acme', fullName: 'acme/web' }));
    const member = await run(['repos'], { PDS_TOKEN: await pds.token('bob') });
    expect(member.code).toBe(2);
    expect(member.stderr).toContain('pds repos needs --team');
  });

  it('deploy without --repo before any deploy says so; onboarding --wait; then a deploy takes the last repository', async () => {
    const none = await run(['deploy', 'acme/web', '--tag', '0.1.0']);
    expect(none.code).toBe(1);
    expect(none.stderr).toContain('no earlier deploy of acme/web names its repository');
    expect(none.stderr).toContain('pass --repo OWNER/REPO');

    const onboard = await run(['deploy', 'acme/web', '--onboard', '--port', '8787', '--tag', '0.1.0', '--repo', 'acme/web', '--wait', '-o', 'json']);
    expect(onboard.code, onboard.stderr).toBe(0);
    expect(JSON.parse(onboard.stdout)).toMatchObject({ settled: true, audit: { status: 'succeeded' } });
    expect(onboard.stderr).toMatch(/succeeded after \S+: https:\/\/acme-web\./);

    const again = await run(['deploy', 'acme/web', '--tag', '0.2.0', '--wait', '-o', 'json']);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toContain('Building acme/web, the repository of the last deploy');
    expect(JSON.parse(again.stdout).audit.parameters).toMatchObject({ dockerfile_repo: 'acme/web', git_tag: '0.2.0' });
  });

  it('a refused parameter is named by its flag', async () => {
    const bad = await run(['deploy', 'acme/web', '--tag', 'not-semver']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('--tag');
    expect(bad.stderr).not.toContain('git_tag');
  });

  it('previews: create --ttl --wait, listed with the expiry, delete --wait, then an empty list', async () => {
    const created = await run(['previews', 'create', 'acme/web', '--tag', '0.1.0', '--ttl', '2d', '--wait', '-o', 'json']);
    expect(created.code, created.stderr).toBe(0);
    expect(JSON.parse(created.stdout).audit.parameters).toMatchObject({ image_tag: '0.1.0', ttl_hours: '48' });
    const listed = await run(['previews', 'acme/web', '-o', 'json']);
    const [preview] = JSON.parse(listed.stdout).items;
    expect(preview).toMatchObject({ team: 'acme', name: 'web-preview-0-1-0', service: 'web', imageTag: '0.1.0' });
    const hours = (Date.parse(preview.expiresAt) - Date.now()) / 3_600_000;
    expect(hours).toBeGreaterThan(47);
    expect(hours).toBeLessThanOrEqual(48);
    const table = await run(['previews', 'acme', '-o', 'table']);
    expect(table.stdout).toMatch(/web-preview-0-1-0 .* in (47|48)h\n/);

    const deleted = await run(['previews', 'delete', 'acme/web', '--tag', '0.1.0', '--wait']);
    expect(deleted.code, deleted.stderr).toBe(0);
    const empty = await run(['previews', 'acme/web', '-o', 'table']);
    expect(empty.stderr).toContain('no previews of acme/web — open one: pds previews create acme/web --tag X.Y.Z --ttl 24h');
  });

  it('the old names stay: pds preview with --ttl-hours', async () => {
    const old = await run(['preview', 'acme/web', '--tag', '0.2.0', '--ttl-hours', '3', '--wait', '-o', 'json']);
    expect(old.code, old.stderr).toBe(0);
    expect(JSON.parse(old.stdout).audit.parameters).toMatchObject({ ttl_hours: '3' });
  });

  it('rollback --wait exits 0 when it succeeded; the submitted table fits 80 columns, -o wide does not cut', async () => {
    const waited = await run(['rollback', 'acme/web', '--to', '0.1.0', '--wait']);
    expect(waited.code, waited.stderr).toBe(0);
    expect(waited.stderr).toMatch(/rollback-service-\S+ succeeded after/);

    const cut = await run(['rollback', 'acme/web', '--to', '0.2.0', '-o', 'table'], { COLUMNS: '80' });
    expect(cut.code, cut.stderr).toBe(0);
    const lines = cut.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^WORKFLOW\s+OPERATION\s+STATUS\s+MESSAGE$/);
    for (const line of lines) expect([...line].length).toBeLessThanOrEqual(80);
    expect(lines[1]).toMatch(/…$/);
    expect(cut.stdout).not.toMatch(/[│─┌┐└┘├┤]/);
    expect(cut.stderr).toMatch(/Follow it with: pds wait (rollback-service-\S+)/);
    // The server's own hint in the message names pds wait, not GET /api/v1/workflows/….
    const wide = await run(['rollback', 'acme/web', '--to', '0.1.0', '-o', 'wide'], { COLUMNS: '80' });
    expect(wide.stdout.trimEnd().split('\n')[1]!.length).toBeGreaterThan(80);
    expect(wide.stdout).not.toContain('/api/v1/');
    expect(wide.stdout).toContain('pds wait rollback-service-');
  });

  it('workflows show relative times; phases are coloured on a terminal only, never with NO_COLOR or redirected', async () => {
    const piped = await run(['workflows', '--team', 'acme', '-o', 'table']);
    expect(piped.stdout).toMatch(/\d+[smh] ago|just now/);
    expect(piped.stdout).not.toContain(ESC);
    const terminal = await onTerminal(['workflows', '--team', 'acme']);
    expect(terminal.code).toBe(0);
    expect(terminal.stdout).toContain(`${ESC}32m`); // succeeded, green
    for (const line of terminal.stdout.replace(/\u001b\[[0-9;]*m/g, '').split(/\r?\n/)) expect([...line].length).toBeLessThanOrEqual(80);
    const plain = await onTerminal(['workflows', '--team', 'acme'], { NO_COLOR: '1' });
    expect(plain.stdout).toMatch(/succeeded/);
    expect(plain.stdout).not.toContain(`${ESC}32m`);
  });

  it('retire --yes --wait removes the service and says so', async () => {
    const retired = await run(['retire', 'acme/web', '--yes', '--wait']);
    expect(retired.code, retired.stderr).toBe(0);
    expect(retired.stderr).not.toContain('"confirm"');
    expect((await pds.api('root', 'GET', '/api/v1/services/acme/web')).status).toBe(404);
  });
});

describe('options', () => {
  it('a mistyped option gets a suggestion, not "required option not specified"', async () => {
    const tags = await run(['deploy', 'acme/web', '--tags', '0.1.0']);
    expect(tags.code).toBe(2);
    expect(tags.stderr).toContain('(Did you mean --tag?)');
    const missing = await run(['deploy', 'acme/web']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("required option '--tag <tag>' not specified");
    const sub = await run(['previews', 'create', 'acme/web', '--tag', '0.1.0', '--tll', '2h']);
    expect(sub.code).toBe(2);
    expect(sub.stderr).toContain('(Did you mean --ttl?)');
  });

  it('durations are one style: --ttl 24h, and a bad one names the flag', async () => {
    const bad = await run(['previews', 'create', 'acme/web', '--tag', '0.1.0', '--ttl', '24 hours']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--ttl must be whole hours between 1h and 720h');
    const timeout = await run(['deploy', 'acme/web', '--tag', '0.1.0', '--wait', '--timeout', 'soon']);
    expect(timeout.code).toBe(2);
    expect(timeout.stderr).toContain('--timeout must be a duration like 90s, 30m or 2h');
  });
});

describe('pds login on a pds without a sign-in method', () => {
  it('fails at once with the server\'s reason instead of waiting for a browser', async () => {
    const login = await run(['login', '--no-browser', '--server', pds.url], { PDS_TOKEN: '', PDS_BASE_URL: '' });
    expect(login.code).toBe(1);
    expect(login.stderr).toContain('no sign-in method is configured on this pds');
    expect(login.stderr).not.toContain('Waiting for the sign-in');
  });
});
