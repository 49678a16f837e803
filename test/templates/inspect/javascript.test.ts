/** The JavaScript server inspector (templates/inspect/javascript.ts): which script node runs. */
import { describe, expect, it } from 'vitest';
import { javascriptSettings } from '../../../templates/inspect/javascript.js';
import { Repo } from '../../../templates/repo.js';

const repo = (paths: string[], pkg?: object) => new Repo({ paths, contents: pkg ? { 'package.json': JSON.stringify(pkg) } : {} });
const ids = (notes: { id: string }[]) => notes.map((n) => n.id);

describe('javascriptSettings', () => {
  it('takes the script of a "node …" start script, flags and ./ dropped', () => {
    const s = javascriptSettings(repo(['package.json', 'package-lock.json'], { scripts: { start: 'node --enable-source-maps ./dist/main.js' } }));
    expect(s).toMatchObject({ entry: 'dist/main.js', command: '["node", "dist/main.js"]', install: true });
    expect(ids(s.notes)).toEqual([]);
  });

  it('takes "main" when the file exists or a build script makes it', () => {
    expect(javascriptSettings(repo(['package.json', 'package-lock.json', 'lib/app.js'], { main: 'lib/app.js' })).entry).toBe('lib/app.js');
    expect(javascriptSettings(repo(['package.json', 'package-lock.json'], { main: 'out/app.js', scripts: { build: 'tsc' } })).entry).toBe('out/app.js');
  });

  it('runs "npm start" when the start script is not node on a file, and says so', () => {
    const s = javascriptSettings(repo(['package.json', 'package-lock.json', 'src/main.ts'], { scripts: { start: 'tsx src/main.ts' } }));
    expect(s).toMatchObject({ entry: 'npm start', command: '["npm", "start"]' });
    // tsx is not a production dependency, so the image would not have it (issue 19 item 6).
    expect(ids(s.notes)).toEqual(['js-entry', 'js-entry-dev-tool']);
    const prod = javascriptSettings(repo(['package.json', 'package-lock.json', 'src/main.ts'], { scripts: { start: 'tsx src/main.ts' }, dependencies: { tsx: '^4' } }));
    expect(ids(prod.notes)).toEqual(['js-entry']);
  });

  it('falls back to a conventional file, then to server.js with a note', () => {
    expect(javascriptSettings(repo(['app.js'])).entry).toBe('app.js');
    const none = javascriptSettings(repo(['lib/util.js']));
    expect(none.entry).toBe('server.js');
    expect(none.install).toBe(false);
    expect(ids(none.notes)).toEqual(['js-entry']);
  });

  it('takes the caller\'s entry, and refuses one outside the repository or with shell characters', () => {
    expect(javascriptSettings(repo(['package.json']), './bin/www.js').entry).toBe('bin/www.js');
    for (const bad of ['../x.js', 'a b.js', 'x.js;rm']) {
      expect(() => javascriptSettings(repo(['package.json']), bad), bad).toThrow(expect.objectContaining({ code: 'INVALID_PARAMS' }));
    }
  });
});
