/**
 * What scaffolding knows about a repository: its file paths and the text of the few files it read (manifests,
 * candidate entry files). Paths are relative to the repository root with `/` separators.
 */
import { parse as parseToml } from 'smol-toml';
import { InvalidParams } from '../core/errors.js';

/** A repository as scaffolding sees it. */
export interface RepoSnapshot {
  /** Every file path (directories may be given with a trailing `/`), e.g. `["package.json", "src/server.js"]`. */
  paths: readonly string[];
  /** Text of files that were read, by path, e.g. `{"package.json": "{\"name\": \"web\"}"}`. */
  contents?: Readonly<Record<string, string>>;
}

/** Files whose text detection and inference use when available. */
export const MANIFESTS = ['package.json', 'pyproject.toml', 'go.mod', 'requirements.txt', '.python-version'] as const;

/** A normalized, queryable view of a {@link RepoSnapshot}. */
export class Repo {
  readonly paths: ReadonlySet<string>;
  readonly contents: Readonly<Record<string, string>>;
  readonly #dirs = new Set<string>();
  #pkg?: PackageJson | null;
  #pyproject?: Record<string, unknown> | null;

  constructor(snapshot: RepoSnapshot) {
    const paths = new Set<string>();
    for (const raw of snapshot.paths) {
      const p = normalizePath(raw);
      if (!p) continue;
      if (raw.endsWith('/')) {
        this.#dirs.add(p);
        continue;
      }
      paths.add(p);
      const parts = p.split('/');
      for (let i = 1; i < parts.length; i++) this.#dirs.add(parts.slice(0, i).join('/'));
    }
    // No prototype: a file called `constructor` or `__proto__` is a file like any other, and absent ones are absent.
    const contents: Record<string, string> = Object.create(null);
    for (const [k, v] of Object.entries(snapshot.contents ?? {})) {
      const p = normalizePath(k);
      if (p) {
        contents[p] = v;
        paths.add(p);
      }
    }
    this.paths = paths;
    this.contents = contents;
  }

  has(path: string): boolean {
    return this.paths.has(path);
  }

  hasDir(path: string): boolean {
    return this.#dirs.has(path);
  }

  /** Paths under `dir/` (recursive). */
  under(dir: string): string[] {
    const prefix = `${dir}/`;
    return [...this.paths].filter((p) => p.startsWith(prefix));
  }

  text(path: string): string | undefined {
    return this.contents[path];
  }

  /** package.json parsed, `null` when absent or not read. @throws InvalidParams when it is not a JSON object. */
  packageJson(): PackageJson | null {
    if (this.#pkg === undefined) {
      const text = this.text('package.json');
      this.#pkg = text === undefined ? null : parsePackageJson(text);
    }
    return this.#pkg;
  }

  /** pyproject.toml parsed, `null` when absent or not read. @throws InvalidParams when it is not valid TOML. */
  pyproject(): Record<string, unknown> | null {
    if (this.#pyproject === undefined) {
      const text = this.text('pyproject.toml');
      if (text === undefined) this.#pyproject = null;
      else {
        try {
          this.#pyproject = parseToml(text) as Record<string, unknown>;
        } catch (err) {
          throw new InvalidParams(`pyproject.toml is not valid TOML: ${(err as Error).message.split('\n')[0]}`, { cause: err });
        }
      }
    }
    return this.#pyproject;
  }
}

/** The fields of package.json scaffolding reads. */
export interface PackageJson {
  name?: string;
  main?: string;
  packageManager?: string;
  scripts: Record<string, string>;
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
  engines: Record<string, string>;
}

function parsePackageJson(text: string): PackageJson {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new InvalidParams(`package.json is not valid JSON: ${(err as Error).message}`, { cause: err });
  }
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw new InvalidParams('package.json must hold a JSON object');
  const o = raw as Record<string, unknown>;
  const str = (v: unknown) => (typeof v === 'string' && v.trim() ? v.trim() : undefined);
  const map = (v: unknown): Record<string, string> =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).filter((e): e is [string, string] => typeof e[1] === 'string'))
      : {};
  return {
    name: str(o.name),
    main: str(o.main),
    packageManager: str(o.packageManager),
    scripts: map(o.scripts),
    dependencies: map(o.dependencies),
    devDependencies: map(o.devDependencies),
    engines: map(o.engines),
  };
}

/** `./a\b/` → `a/b`; `undefined` for paths that leave the repository. */
export function normalizePath(raw: string): string | undefined {
  const parts = raw.replace(/\\/g, '/').split('/').filter((s) => s && s !== '.');
  if (parts.length === 0 || parts.includes('..')) return undefined;
  return parts.join('/');
}
