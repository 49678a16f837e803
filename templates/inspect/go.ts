/**
 * Inspector of the Go server template (`docs/api.md#scaffolding-templates`): the Go version from
 * go.mod and the package built into the static binary (`./cmd/server`, the root `main.go`, or the only command
 * under `cmd/`).
 */
import { InvalidParams } from '../../core/errors.js';
import type { Repo } from '../repo.js';
import { execForm } from '../render.js';
import { fitting, GO_PATH_ELEMENT } from './grammar.js';
import type { Note } from './note.js';

/** Go major.minor used when go.mod names none, or one older than 1.21. */
const DEFAULT_GO = '1.24';

/** What the Go Dockerfile renders. */
export interface GoSettings {
  /** Go major.minor of the build image, e.g. `1.24`. */
  goVersion: string;
  /** Files copied before `go mod download`: `go.mod`, and `go.sum` when present. */
  modFiles: string;
  /** Package path built into the binary, e.g. `./cmd/server` or `.`. */
  package: string;
  /** The build step in exec form, JSON, e.g. `["go", "build", …, "./cmd/server"]`: the package is an argument, never shell text. */
  buildCommand: string;
  /** Assumptions for the checklist: which package was built when none was obvious. */
  notes: Note[];
}

const GO_PACKAGE = /^\.(\/[\w.-]+)*$/;

/**
 * Settings of the Go server template.
 * @param entryOverride the caller's `entry`: a package path inside the repository, `./` optional, e.g. `cmd/api`.
 * @throws InvalidParams for an `entryOverride` that is not a package path inside the repository.
 */
export function goSettings(repo: Repo, entryOverride?: string): GoSettings {
  const notes: Note[] = [];
  let pkg: string;
  if (entryOverride) {
    const dir = entryOverride.replace(/(.)\/+$/, '$1');
    const p = dir === '.' || dir.startsWith('./') ? dir : `./${dir}`;
    if (!GO_PACKAGE.test(p) || p.split('/').includes('..')) throw new InvalidParams(`entry "${entryOverride}" must be a Go package path inside the repository, e.g. "./cmd/server"`);
    pkg = p;
  } else {
    const goIn = (dir: string) => [...repo.paths].some((p) => p.startsWith(`${dir}/`) && p.endsWith('.go') && !p.endsWith('_test.go') && p.split('/').length === dir.split('/').length + 1);
    const commands = new Map<string, string>();
    for (const p of repo.paths) {
      const dir = p.match(/^cmd\/([^/]+)\/[^/]+\.go$/)?.[1];
      if (dir && !commands.has(dir)) commands.set(dir, p);
    }
    const cmdDirs = [...commands.keys()];
    const unambiguous = goIn('cmd/server') || repo.has('main.go');
    // A directory name reaches the Dockerfile and the checklist only once it is a Go path element.
    if (!unambiguous) for (const [dir, file] of commands) fitting(file, 'Go package directory', dir, GO_PATH_ELEMENT, 'letters, digits and ._- (a Go import path element)');
    if (goIn('cmd/server')) pkg = './cmd/server';
    else if (repo.has('main.go')) pkg = '.';
    else if (cmdDirs.length === 1) pkg = `./cmd/${cmdDirs[0]}`;
    else {
      pkg = './cmd/server';
      notes.push({
        id: 'go-package',
        text: cmdDirs.length
          ? `Several commands under cmd/ (${cmdDirs.join(', ')}): the image builds ./cmd/server. Pass entry=./cmd/<name> for the server.`
          : 'No ./cmd/server and no main.go at the root: the image builds ./cmd/server. Pass entry=<package path> or edit the Dockerfile.',
      });
    }
  }
  return {
    goVersion: goVersion(repo.text('go.mod')),
    modFiles: repo.has('go.sum') ? 'go.mod go.sum' : 'go.mod',
    package: pkg,
    buildCommand: execForm(['go', 'build', '-trimpath', '-ldflags=-s -w', '-o', '/out/server', pkg]),
    notes,
  };
}

/** Go major.minor from go.mod: the higher of `go` and `toolchain`, else 1.24. */
function goVersion(goMod: string | undefined): string {
  if (!goMod) return DEFAULT_GO;
  const versions = [goMod.match(/^go\s+(\d+\.\d+)/m)?.[1], goMod.match(/^toolchain\s+go(\d+\.\d+)/m)?.[1]].filter((v): v is string => Boolean(v));
  if (!versions.length) return DEFAULT_GO;
  const minor = (v: string) => Number(v.split('.')[1]);
  const best = versions.sort((a, b) => minor(b) - minor(a))[0]!;
  // Images exist from 1.21 on with the toolchain model; older go directives build fine on the default.
  return minor(best) < 21 ? DEFAULT_GO : best;
}
