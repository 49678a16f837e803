/** `pds scaffold` on a local checkout: dry run, --write, no overwrite without --force, exit codes. */
import { execFile } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';

const exec = promisify(execFile);
const PDS = path.resolve('bin/pds-src.js');
const dirs: string[] = [];
afterEach(() => {
  while (dirs.length) rmSync(dirs.pop()!, { recursive: true, force: true });
});

function checkout(files: Record<string, string>, name = 'shop-api'): string {
  const root = mkdtempSync(path.join(tmpdir(), 'pds-cli-'));
  dirs.push(root);
  const dir = path.join(root, name);
  for (const [p, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, p)), { recursive: true });
    writeFileSync(path.join(dir, p), text);
  }
  return dir;
}

async function pds(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const r = await exec('node', [PDS, 'scaffold', ...args], { env: { ...process.env, PDS_BASE_URL: '', ...env } });
    return { code: 0, ...r };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

const EXPRESS = { 'package.json': JSON.stringify({ name: '@acme/shop', scripts: { start: 'node app.js' } }), 'app.js': '', 'node_modules/x/package.json': '{}' };

describe('pds scaffold', () => {
  it('shows the plan and writes nothing without --write', async () => {
    const dir = checkout(EXPRESS);
    const r = await pds([dir, '--team', 'acme'], { PDS_BASE_URL: 'https://pds.example.com' });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^Template: {2}JavaScript server \(javascript\)/);
    expect(r.stdout).toContain('----- Dockerfile');
    expect(r.stdout).toContain('CMD ["node", "app.js"]');
    expect(r.stdout).toContain('PDS_BASE_URL: "https://pds.example.com"');
    expect(r.stdout).toContain('"component_name":"shop"');
    expect(r.stdout).toContain('Dry run: nothing written');
    expect(existsSync(path.join(dir, 'Dockerfile'))).toBe(false);
  });

  it('probes the health route the app serves and prints the pds command to onboard (issue 19 item 6)', async () => {
    const dir = checkout({
      'requirements.txt': 'fastapi==0.115.0\n',
      'app/__init__.py': '',
      'app/main.py': 'from fastapi import FastAPI\n\napp = FastAPI()\n\n@app.get("/health")\ndef health():\n    return {"ok": True}\n',
    });
    const r = await pds([dir, '--team', 'acme', '--component', 'api', '--repo', 'acme/api'], { PDS_BASE_URL: 'https://pds.example.com' });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('"http://127.0.0.1:${PORT:-8000}/health" || exit 1');
    expect(r.stdout).toContain('"health_check_path":"/health"');
    expect(r.stdout).toContain('Found the health route /health at app/main.py:5');
    expect(r.stdout).toContain('pds deploy acme/api --onboard --port 8000 --tag 0.1.0 --repo acme/api --health-check-path /health');
  });

  it('--write adds the files; a second --write keeps them; --force replaces them', async () => {
    const dir = checkout(EXPRESS);
    const first = await pds([dir, '--team', 'acme', '--base-url', 'https://pds.example.com', '--write', '--pattern', 'tag']);
    expect(first.code, first.stderr).toBe(0);
    for (const f of ['Dockerfile', '.dockerignore', '.github/workflows/ci.yml', '.github/dependabot.yml']) expect(first.stdout).toContain(`wrote    ${f}`);
    expect(readFileSync(path.join(dir, '.github/dependabot.yml'), 'utf8')).toContain('package-ecosystem: github-actions');
    expect(readFileSync(path.join(dir, '.github/workflows/ci.yml'), 'utf8')).toContain("tags: ['*.*.*']");

    writeFileSync(path.join(dir, 'Dockerfile'), 'FROM scratch\n');
    const second = await pds([dir, '--team', 'acme', '--base-url', 'https://pds.example.com', '--write']);
    expect(second.code).toBe(0);
    expect(second.stdout).toContain('skipped  Dockerfile (exists; --force replaces it)');
    expect(readFileSync(path.join(dir, 'Dockerfile'), 'utf8')).toBe('FROM scratch\n');
    expect(readFileSync(path.join(dir, '.github/workflows/ci.yml'), 'utf8')).toContain("tags: ['*.*.*']");

    const third = await pds([dir, '--team', 'acme', '--base-url', 'https://pds.example.com', '--write', '--force']);
    expect(third.code).toBe(0);
    expect(readFileSync(path.join(dir, 'Dockerfile'), 'utf8')).toMatch(/^# syntax=docker\/dockerfile:1/);
    expect(readFileSync(path.join(dir, '.github/workflows/ci.yml'), 'utf8')).toContain('branches: [main]');
  });

  it('defaults the component to the directory name when no manifest names it', async () => {
    const dir = checkout({ 'go.mod': 'go 1.22\n', 'main.go': 'package main\n' }, 'Inventory_Svc');
    const r = await pds([dir, '--team', 'acme', '--base-url', 'https://pds.example.com', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const plan = JSON.parse(r.stdout);
    expect(plan.template).toBe('go');
    expect(plan.onboarding).toEqual({ action: 'onboard', team_name: 'acme', component_name: 'inventory-svc', git_tag: '0.1.0', port: '8080', service_template: 'default' });
  });

  it('exits 1 with a clear message when no template fits', async () => {
    const dir = checkout({ 'README.md': '# hi\n' });
    const r = await pds([dir, '--team', 'acme', '--base-url', 'https://pds.example.com', '--write']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^pds scaffold: No template fits this repository/);
    expect(r.stderr).toContain('--template <id>');
    expect(existsSync(path.join(dir, 'Dockerfile'))).toBe(false);
  });

  it('exits 1 when several fit, and --template chooses', async () => {
    const dir = checkout({ 'go.mod': 'go 1.22\n', 'requirements.txt': '' });
    expect((await pds([dir, '--team', 'acme', '--base-url', 'https://pds.example.com'])).code).toBe(1);
    const r = await pds([dir, '--team', 'acme', '--base-url', 'https://pds.example.com', '--template', 'python', '--component', 'api']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('python');
  });

  it('exits 2 on usage errors: no --team, no base URL, unknown pattern', async () => {
    const dir = checkout(EXPRESS);
    expect((await pds([dir, '--base-url', 'https://pds.example.com'])).stderr).toContain('--team is required');
    const noBase = await pds([dir, '--team', 'acme']);
    expect(noBase.code).toBe(2);
    expect(noBase.stderr).toContain('PDS_BASE_URL');
    expect((await pds([dir, '--team', 'acme', '--base-url', 'https://x.example', '--pattern', 'weekly'])).code).toBe(2);
    expect((await pds([dir, '--team', 'acme', '--bogus'])).code).toBe(2);
  }, 60_000); // four processes

  it('exits 2 naming the option when a value breaks the rules the tool uses, and writes nothing', async () => {
    const dir = checkout(EXPRESS);
    const cases: [string[], string][] = [
      [['--team', 'Acme'], '--team:'],
      [['--team', 'acme', '--component', 'Web_1'], '--component:'],
      [['--team', 'acme', '--health-check-path', 'healthz"'], '--health-check-path:'],
      [['--team', 'acme', '--template', 'java'], '--template:'],
      [['--team', 'acme', '--repo', 'acme'], '--repo'],
    ];
    for (const [args, option] of cases) {
      const r = await pds([dir, ...args, '--base-url', 'https://pds.example.com', '--write']);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr).toMatch(new RegExp(`^pds scaffold: ${option}`));
    }
    const url = await pds([dir, '--team', 'acme', '--write'], { PDS_BASE_URL: 'ftp://pds.example.com' });
    expect(url.code).toBe(2);
    expect(url.stderr).toMatch(/^pds scaffold: --base-url \(or PDS_BASE_URL\):/);
    expect(existsSync(path.join(dir, 'Dockerfile'))).toBe(false);
  }, 120_000); // six processes, each a few seconds to start from source under load
});

/**
 * Issue 17 item 5: `--write` writes only inside the repository. A symbolic link on the way (dangling, to a file or to
 * a directory outside) is refused before anything is written, with or without --force, and nothing outside changes.
 */
describe('pds scaffold --write stays inside the repository', () => {
  const GO = { 'go.mod': 'module example.com/shop\n\ngo 1.23\n', 'main.go': 'package main\n' };
  const ARGS = ['--team', 'acme', '--base-url', 'https://pds.example.com', '--write'];
  /** A directory beside the checkout, standing for ~/.ssh or any place the scaffold must not touch. */
  const outside = (dir: string) => {
    const o = path.join(path.dirname(dir), 'outside');
    mkdirSync(o, { recursive: true });
    return o;
  };
  const refused = (r: { code: number; stderr: string }, file: string) => {
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toMatch(new RegExp(`^pds scaffold: refused to write ${file.replace(/[.]/g, '\\.')}: `));
  };

  it('refuses a dangling symbolic link where a file goes, and does not create its target', async () => {
    const dir = checkout(GO);
    const o = outside(dir);
    symlinkSync(path.join(o, 'authorized_keys'), path.join(dir, 'Dockerfile'));
    for (const force of [[], ['--force']]) {
      refused(await pds([dir, ...ARGS, ...force]), 'Dockerfile');
      expect(readdirSync(o)).toEqual([]);
    }
    expect(existsSync(path.join(dir, '.dockerignore'))).toBe(false); // checked before anything is written
  });

  it('refuses a symbolic link to a file outside, even with --force', async () => {
    const dir = checkout(GO);
    const o = outside(dir);
    writeFileSync(path.join(o, 'authorized_keys'), 'ssh-ed25519 AAAA alice\n');
    symlinkSync(path.join(o, 'authorized_keys'), path.join(dir, '.dockerignore'));
    refused(await pds([dir, ...ARGS, '--force']), '.dockerignore');
    expect(readFileSync(path.join(o, 'authorized_keys'), 'utf8')).toBe('ssh-ed25519 AAAA alice\n');
  });

  it('refuses a directory on the path that is a symbolic link to a directory outside', async () => {
    for (const link of ['.github', '.github/workflows']) {
      const dir = checkout(GO);
      const o = outside(dir);
      mkdirSync(path.join(dir, path.dirname(link)), { recursive: true });
      symlinkSync(o, path.join(dir, link));
      refused(await pds([dir, ...ARGS]), '.github/workflows/ci.yml');
      expect(readdirSync(o), link).toEqual([]);
      expect(existsSync(path.join(dir, 'Dockerfile'))).toBe(false);
    }
  });

  it('refuses a symbolic link that points back inside the repository too (one rule: no links)', async () => {
    const dir = checkout({ ...GO, 'docker/keep': '' });
    symlinkSync('docker', path.join(dir, '.github'));
    refused(await pds([dir, ...ARGS]), '.github/workflows/ci.yml');
    expect(readdirSync(path.join(dir, 'docker'))).toEqual(['keep']);
  });

  it('writes through a repository reached by a path with .. and a linked parent, inside it only', async () => {
    const dir = checkout(GO);
    const alias = path.join(path.dirname(dir), 'alias');
    symlinkSync(dir, alias); // the repository itself may be named through a link: only paths inside it are checked
    const r = await pds([path.join(alias, '..', 'alias'), ...ARGS]);
    expect(r.code, r.stderr).toBe(0);
    expect(lstatSync(path.join(dir, '.github/workflows/ci.yml')).isFile()).toBe(true);
    expect(readdirSync(path.dirname(dir)).sort()).toEqual(['alias', path.basename(dir)]);
  });
});
