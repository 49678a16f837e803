/**
 * Inspector of the JavaScript server template (`docs/api.md#scaffolding-templates`, rule 4): the
 * entry script node runs, from package.json `scripts.start` or `main` or a conventional file name, on top of the
 * shared Node build settings.
 */
import { InvalidParams } from '../../core/errors.js';
import { execForm } from '../render.js';
import type { Repo } from '../repo.js';
import { fitting, RELATIVE_PATH } from './grammar.js';
import { nodeSettings, type NodeSettings } from './node.js';

/** What the JavaScript Dockerfile renders, beyond the shared Node settings. */
export interface JavaScriptSettings extends NodeSettings {
  /** package.json exists, so the image installs dependencies. */
  install: boolean;
  /** Script node runs, relative to the repository root, e.g. `src/server.js`; `npm start` when the image runs that. */
  entry: string;
  /** CMD in exec form, JSON, e.g. `["node", "src/server.js"]`. */
  command: string;
}

const ENTRY_FILE = /^[A-Za-z0-9._@/-]+$/;

/**
 * Settings of the JavaScript server template.
 * @param entryOverride the caller's `entry`: a script path inside the repository (`./` is dropped), e.g. `./bin/www.js`.
 * @throws InvalidParams for an `entryOverride` that is not a path inside the repository; when package.json is not a
 * JSON object.
 */
export function javascriptSettings(repo: Repo, entryOverride?: string): JavaScriptSettings {
  const node = nodeSettings(repo);
  const pkg = repo.packageJson();
  let entry: string | undefined;
  let command: string[] | undefined;
  if (entryOverride) {
    const e = entryOverride.replace(/^\.\//, '');
    if (!ENTRY_FILE.test(e) || e.split('/').includes('..')) {
      throw new InvalidParams(`entry "${entryOverride}" must be the path of a script inside the repository, e.g. "src/server.js"`);
    }
    entry = e;
  } else {
    const start = pkg?.scripts.start?.match(/^\s*node\s+(?:--?[\w-]+(?:=\S+)?\s+)*([\w./@-]+\.[cm]?js)(\s|$)/);
    const main = pkg?.main?.replace(/^\.\//, '');
    const inside = 'a path inside the repository of letters, digits and ._@- (no "." or ".." segment)';
    if (start) entry = fitting('package.json', 'scripts.start entry script', start[1]!.replace(/^\.\//, ''), RELATIVE_PATH, inside, 'fix it, or pass entry');
    else if (main && ENTRY_FILE.test(main) && (repo.has(main) || node.buildScript)) entry = fitting('package.json', '"main"', main, RELATIVE_PATH, inside, 'fix it, or pass entry');
    else entry = ['server.js', 'index.js', 'src/server.js', 'src/index.js', 'app.js', 'main.js'].find((f) => repo.has(f));
    if (!entry && pkg?.scripts.start) {
      command = ['npm', 'start'];
      node.notes.push({ id: 'js-entry', text: `The image starts with "npm start" ("${pkg.scripts.start}"); pass entry=<script> to run node on a script directly.` });
      // A start script that runs sources through a dev tool fails in an image that installs production dependencies only.
      const runner = pkg.scripts.start.match(/^\s*(?:npx\s+)?(tsx|ts-node|ts-node-dev|nodemon)(?:\s|$)/)?.[1];
      if (runner && !(runner in pkg.dependencies)) {
        node.notes.push({ id: 'js-entry-dev-tool', text: `"start" runs ${runner}, which is not in "dependencies" and so not in the image (production dependencies only): build to JavaScript and point "main" or "start": "node <file>" at the output, or pass entry=<compiled script>.` });
      }
    } else if (!entry) {
      entry = 'server.js';
      node.notes.push({ id: 'js-entry', text: 'No entry script found (package.json "scripts.start" / "main", server.js, index.js): the image runs "node server.js". Pass entry=<script> or edit the Dockerfile CMD.' });
    }
  }
  command ??= ['node', entry!];
  return { ...node, install: repo.has('package.json'), entry: entry ?? 'npm start', command: execForm(command) };
}
