/**
 * Node settings shared by the two templates whose image runs a Node install: the JavaScript server (`javascript.ts`)
 * and the static site built with node (`static.ts`). Read from package.json, its lockfile and `.nvmrc`.
 */
import type { Repo } from '../repo.js';
import type { Note } from './note.js';

/** Node major used when neither `engines.node` nor `.nvmrc` names a usable one. */
const DEFAULT_NODE = '22';

/** What the Dockerfile and CI templates render for a Node build (install, cache, build script, Node version). */
export interface NodeSettings {
  /** Node major of the image and of actions/setup-node, e.g. `22`. */
  nodeVersion: string;
  packageManager: 'npm' | 'pnpm' | 'yarn';
  /** Files copied before installing: package.json and the lockfile(s) present. */
  manifests: string;
  /** Install with devDependencies (build, lint, test), e.g. `npm ci`. */
  installAll: string;
  /** Install without devDependencies, e.g. `npm ci --omit=dev`. */
  installProd: string;
  /** Drops devDependencies after a build, when the package manager can (Yarn 2+ cannot). */
  prune?: string;
  /** pnpm and yarn come through corepack. */
  corepack: boolean;
  /** actions/setup-node cache (needs a lockfile). */
  cache?: string;
  /** The build command, e.g. `npm run build`, or `npx tsc` for a TypeScript project without a build script. */
  runBuild: string;
  /** The image builds: package.json has a `build` script, or tsconfig.json and a `typescript` dependency. */
  buildScript: boolean;
  /** package.json "test" is npm's always-failing placeholder. */
  testPlaceholder: boolean;
  /** Assumptions for the checklist: lockfile, Yarn 2+ devDependencies, npm's placeholder test, unread package.json. */
  notes: Note[];
}

/**
 * What a Node build needs from the repository: Node version (from `engines.node` or `.nvmrc`), package manager (from
 * `packageManager` or the lockfile), install and prune commands (frozen with a lockfile), whether a build script and
 * a real test script exist, and notes for anything assumed. Reads package.json, the lockfile names and `.nvmrc`.
 * @throws InvalidParams when package.json was given but is not a JSON object.
 */
export function nodeSettings(repo: Repo): NodeSettings {
  const pkg = repo.packageJson();
  const notes: Note[] = [];
  const lockfiles = ['package-lock.json', 'npm-shrinkwrap.json', 'pnpm-lock.yaml', 'yarn.lock'].filter((f) => repo.has(f));
  const declared = pkg?.packageManager?.split('@')[0];
  const packageManager: NodeSettings['packageManager'] =
    declared === 'pnpm' || repo.has('pnpm-lock.yaml') ? 'pnpm' : declared === 'yarn' || repo.has('yarn.lock') ? 'yarn' : 'npm';
  const locked = lockfiles.length > 0;
  const berry = packageManager === 'yarn' && (repo.has('.yarnrc.yml') || /^yarn@[2-9]/.test(pkg?.packageManager ?? ''));
  const manifests = ['package.json', ...lockfiles, ...['.npmrc', '.yarnrc.yml'].filter((f) => repo.has(f))].join(' ');
  let installAll: string;
  let installProd: string;
  let prune: string | undefined;
  if (packageManager === 'pnpm') {
    installAll = locked ? 'pnpm install --frozen-lockfile' : 'pnpm install';
    installProd = `${installAll} --prod`;
    prune = 'pnpm prune --prod';
  } else if (packageManager === 'yarn') {
    installAll = berry ? 'yarn install --immutable' : locked ? 'yarn install --frozen-lockfile' : 'yarn install';
    installProd = berry ? installAll : `${installAll} --production`;
    if (berry) notes.push({ id: 'yarn-dev-dependencies', text: 'Yarn 2+ has no production-only install: the image keeps devDependencies. Prune them in the Dockerfile if the image gets large.' });
  } else {
    installAll = locked ? 'npm ci' : 'npm install';
    installProd = `${installAll} --omit=dev`;
    prune = 'npm prune --omit=dev';
    if (!locked && repo.has('package.json')) {
      notes.push({ id: 'lockfile', text: 'No package-lock.json: builds use "npm install" and may resolve different versions each time. Commit a lockfile (run "npm install") for repeatable images.' });
    }
  }
  const test = pkg?.scripts.test ?? '';
  const testPlaceholder = /no test specified/.test(test);
  if (testPlaceholder) {
    notes.push({ id: 'tests', text: 'package.json "test" is npm\'s placeholder that always fails; the CI test job prints "No tests yet" instead. Replace that step with "npm test" once tests exist.' });
  }
  const hasBuildScript = Boolean(pkg?.scripts.build);
  // TypeScript compiled by tsc alone (no build script) still ships compiled: the image runs tsc itself.
  const tscOnly = !hasBuildScript && repo.has('tsconfig.json') && Boolean(pkg && ('typescript' in pkg.dependencies || 'typescript' in pkg.devDependencies));
  if (tscOnly) {
    notes.push({ id: 'typescript-build', text: 'TypeScript without a "build" script: the image and CI compile it with tsc (tsconfig.json) before pruning devDependencies. Add "build": "tsc" to package.json to make that explicit.' });
  }
  if (repo.has('package.json') && !pkg) {
    notes.push({ id: 'package-json-unread', text: 'package.json was not read: no build step was assumed and the entry script was guessed from file names. Pass its contents for a better fit.' });
  }
  return {
    nodeVersion: nodeVersion(pkg?.engines.node, repo.text('.nvmrc')),
    packageManager,
    manifests,
    installAll,
    installProd,
    prune,
    corepack: packageManager !== 'npm',
    cache: locked ? packageManager : undefined,
    runBuild: tscOnly ? { npm: 'npx tsc', pnpm: 'pnpm exec tsc', yarn: 'yarn tsc' }[packageManager] : `${packageManager} run build`,
    buildScript: hasBuildScript || tscOnly,
    testPlaceholder,
    notes,
  };
}

/** Node major for the image: an exact major from `engines.node` (`20.x`, `^20`, `~20.1`) or .nvmrc, else 22. */
function nodeVersion(engines: string | undefined, nvmrc: string | undefined): string {
  const nvm = nvmrc?.trim().match(/^v?(\d+)/);
  if (nvm && Number(nvm[1]) >= 18) return nvm[1]!;
  if (!engines) return DEFAULT_NODE;
  const exact = engines.trim().match(/^(?:[\^~=v]\s*)?(\d+)(?:\.[\dx*]+)*$/);
  if (exact && Number(exact[1]) >= 18) return exact[1]!;
  const atLeast = engines.trim().match(/^>=?\s*v?(\d+)/);
  if (atLeast && Number(atLeast[1]) > Number(DEFAULT_NODE)) return atLeast[1]!;
  return DEFAULT_NODE;
}
