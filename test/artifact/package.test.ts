/**
 * The CLI installs anywhere from `npm pack`'s tarball (issue 19 item 3): one pack of a copy of the checkout (its
 * prepack compiles from a clean dist/; the copy keeps the checkout's own dist/ untouched for the
 * suites running beside this one), one install of the tarball into an empty directory, then the installed `pds` run from
 * outside the checkout.
 *
 * The install takes its dependencies from npm's cache, else the registry, with the npm settings of a shell outside the
 * checkout (none of the `npm_config_*` that running under npm sets, such as this checkout's engine-strict), and with
 * `--ignore-scripts`: better-sqlite3's native build (minutes) is npm's business, and `--version` and `--help` never load
 * it. Slow (a clean compile and an install, a few minutes on a loaded machine), hence here beside the image test rather
 * than with the quick CLI tests.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const repo = path.resolve('.');
const { version } = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };
/** Not copied: installed packages (linked instead), build output, state, history. */
const LEFT_OUT = new Set(['node_modules', 'dist', '.pds', '.git', 'coverage']);

let scratch: string;
let copy: string;
let packed: { filename: string; files: { path: string }[] };
let prefix: string;

/** The environment of a shell outside the checkout: without what `npx vitest` adds (`npm_config_*`, `npm_package_*`). */
const outside = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^npm_(config|package|lifecycle)_/i.test(name)));

function npm(args: string[], cwd: string) {
  const result = spawnSync('npm', [...args, '--no-audit', '--no-fund', '--no-update-notifier'], { cwd, encoding: 'utf8', env: outside });
  expect(result.status, `npm ${args.join(' ')} failed:\n${result.stdout}\n${result.stderr}`).toBe(0);
  return result.stdout;
}

beforeAll(() => {
  scratch = mkdtempSync(path.join(tmpdir(), 'pds-package-'));
  copy = path.join(scratch, 'checkout');
  cpSync(repo, copy, { recursive: true, filter: (source) => !LEFT_OUT.has(path.relative(repo, source).split(path.sep)[0]!) });
  symlinkSync(path.join(repo, 'node_modules'), path.join(copy, 'node_modules'));
  // --json: the tarball's name and file list (the prepack's compile writes to stderr only).
  const out = npm(['pack', '--json', '--pack-destination', scratch], copy);
  [packed] = JSON.parse(out.slice(out.indexOf('[\n'))) as (typeof packed)[];
  prefix = path.join(scratch, 'installed');
  mkdirSync(prefix);
  npm(['install', '--prefix', prefix, '--prefer-offline', '--ignore-scripts', path.join(scratch, packed.filename)], prefix);
}, 600_000);
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('npm pack', () => {
  it('builds pds-<version>.tgz with the compiled tree, the launcher, the template files and README', () => {
    expect(packed.filename).toBe(`pds-${version}.tgz`);
    const files = packed.files.map((f) => f.path);
    for (const file of ['bin/pds.js', 'dist/bin/main.js', 'dist/bin/commands/dev.js', 'dist/server.js', 'README.md', 'package.json']) {
      expect(files).toContain(file);
    }
    expect(files.some((f) => f.startsWith('dist/templates/') && f.endsWith('.tmpl'))).toBe(true);
    // The web console, built by Vite (issue 21): its page and its script.
    expect(files).toContain('dist/console/index.html');
    expect(files.some((f) => /^dist\/console\/assets\/index-[\w-]+\.js$/.test(f))).toBe(true);
    // No sources, tests, benchmarks or source maps: only what runs.
    expect(files.filter((f) => f.endsWith('.ts') || f.endsWith('.map') || f.startsWith('dist/test/') || f.startsWith('dist/bench/'))).toEqual([]);
    expect(files.filter((f) => !/^(dist\/|bin\/pds\.js$|README\.md$|package\.json$)/.test(f))).toEqual([]);
  });
});

describe('the installed pds, run outside any checkout', () => {
  const pds = (args: string[]) =>
    spawnSync(path.join(prefix, 'node_modules/.bin/pds'), args, { cwd: scratch, encoding: 'utf8', env: { ...outside, NO_COLOR: '1' } });

  it('is the compiled tree, installed without sources', () => {
    const installed = path.join(prefix, 'node_modules/pds');
    expect(existsSync(path.join(installed, 'dist/bin/main.js'))).toBe(true);
    expect(existsSync(path.join(installed, 'tsconfig.build.json'))).toBe(false);
    expect(readdirSync(installed).filter((f) => f !== 'node_modules').sort()).toEqual(['README.md', 'bin', 'dist', 'package.json']);
  });

  it('prints its version', () => {
    const result = pds(['--version']);
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    expect(result.stdout.trim()).toBe(version);
  });

  it('prints its help, pds dev among the commands', () => {
    const result = pds(['--help']);
    expect(result.status, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^Usage: pds <command>/);
    expect(result.stdout).toMatch(/\n {2}dev +the sandbox on 127\.0\.0\.1/);
    expect(result.stdout).toMatch(/\n {2}deploy +/);
  });
});
