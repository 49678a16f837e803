/**
 * The service (component) name a repository implies when the caller gives none: the name in package.json,
 * pyproject.toml or go.mod, then the repository name, then the local directory name, made into a DNS label.
 */
import { InvalidParams } from '../core/errors.js';
import { ServiceName } from '../core/model.js';
import type { Repo } from './repo.js';

/**
 * Lowercase DNS label from a package or directory name, or `undefined` when nothing usable is left.
 * @example toServiceName('@acme/Web_App'); // 'web-app'
 */
export function toServiceName(raw: string): string | undefined {
  const name = raw
    .replace(/^@[^/]+\//, '')
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/-{2,}/g, '-')
    .replace(/^[^a-z]+/, '')
    .slice(0, 40)
    .replace(/-+$/, '');
  return ServiceName.safeParse(name).success ? name : undefined;
}

/**
 * The first usable name of: package.json `name`, pyproject.toml `[project].name` or `[tool.poetry].name`, the last
 * go.mod module path element (skipping a `/vN` suffix), the `<repo>` of `dockerfileRepo`, `directoryName`.
 * @throws InvalidParams when none yields a DNS label (asks for `component_name`); when package.json or pyproject.toml
 * cannot be parsed.
 */
export function impliedComponentName(repo: Repo, dockerfileRepo: string | undefined, directoryName: string | undefined): string {
  const py = repo.pyproject();
  const project = py?.project as { name?: unknown } | undefined;
  const poetry = (py?.tool as { poetry?: { name?: unknown } } | undefined)?.poetry;
  const module = repo.text('go.mod')?.match(/^module\s+(\S+)/m)?.[1]?.split('/').filter((s) => !/^v\d+$/.test(s)).pop();
  const sources = [
    repo.packageJson()?.name,
    typeof project?.name === 'string' ? project.name : undefined,
    typeof poetry?.name === 'string' ? poetry.name : undefined,
    module,
    dockerfileRepo?.split('/')[1],
    directoryName,
  ];
  for (const s of sources) {
    const name = s ? toServiceName(s) : undefined;
    if (name) return name;
  }
  throw new InvalidParams('component_name is needed: no usable name in package.json, pyproject.toml, go.mod or the repository name. Pass component_name, e.g. "web".');
}
