/**
 * Inspector of the static site template (`docs/api.md#scaffolding-templates`): whether the image
 * builds the site with node and which directory nginx serves (`dist`, `build` for react-scripts, or the caller's).
 */
import { InvalidParams } from '../../core/errors.js';
import { spaBuilder } from '../detect.js';
import type { Repo } from '../repo.js';
import { nodeSettings, type NodeSettings } from './node.js';

/** What the static Dockerfile renders, beyond the shared Node settings (used when `build` is true). */
export interface StaticSettings extends NodeSettings {
  /** package.json has a `build` script, so the image builds the site before serving it. */
  build: boolean;
  /** Directory nginx serves, relative to the repository root, e.g. `dist`. */
  outputDir: string;
}

const OUTPUT_DIR = /^[\w.-]+(\/[\w.-]+)*$/;

/**
 * Settings of the static site template.
 * @param entryOverride the caller's `entry`: the build output directory (`./` and a trailing `/` are dropped), e.g. `build`.
 * @throws InvalidParams for an `entryOverride` that is not a directory inside the repository; when package.json is
 * not a JSON object.
 */
export function staticSettings(repo: Repo, entryOverride?: string): StaticSettings {
  const node = nodeSettings(repo);
  const pkg = repo.packageJson();
  const build = Boolean(pkg?.scripts.build);
  let outputDir = 'dist';
  if (entryOverride) {
    const d = entryOverride.replace(/^\.\//, '').replace(/\/$/, '');
    if (!OUTPUT_DIR.test(d) || d.split('/').includes('..')) throw new InvalidParams(`entry "${entryOverride}" must be the build output directory, e.g. "dist"`);
    outputDir = d;
  } else if (spaBuilder(pkg) === 'react-scripts') {
    outputDir = 'build';
  } else if (pkg && /^@angular/.test(spaBuilder(pkg) ?? '')) {
    node.notes.push({ id: 'static-output', text: 'Angular writes its build to dist/<project>/browser: pass entry=dist/<project>/browser (see "outputPath" in angular.json).' });
  }
  if (!build && !repo.has(`${outputDir}/index.html`)) {
    node.notes.push({ id: 'static-output', text: `${outputDir}/index.html is not in the repository and nothing builds it: commit the build output or add a "build" script.` });
  }
  // The static image builds only through a "build" script; a tsc-only project is not compiled here.
  return { ...node, notes: node.notes.filter((n) => n.id !== 'typescript-build'), build, outputDir };
}
