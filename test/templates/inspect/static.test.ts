/** The static site inspector (templates/inspect/static.ts): whether the image builds the site, and what nginx serves. */
import { describe, expect, it } from 'vitest';
import { staticSettings } from '../../../templates/inspect/static.js';
import { Repo } from '../../../templates/repo.js';

const repo = (paths: string[], pkg?: object) => new Repo({ paths, contents: pkg ? { 'package.json': JSON.stringify(pkg) } : {} });
const ids = (notes: { id: string }[]) => notes.map((n) => n.id);

describe('staticSettings', () => {
  it('serves committed output from dist/ without building', () => {
    const s = staticSettings(repo(['dist/index.html']));
    expect(s).toMatchObject({ build: false, outputDir: 'dist' });
    expect(ids(s.notes)).toEqual([]);
  });

  it('builds with node when package.json has a build script; react-scripts writes build/', () => {
    const vite = staticSettings(repo(['package.json', 'package-lock.json'], { scripts: { build: 'vite build' }, devDependencies: { vite: '5' } }));
    expect(vite).toMatchObject({ build: true, outputDir: 'dist', installAll: 'npm ci' });
    expect(staticSettings(repo(['package.json', 'package-lock.json'], { scripts: { build: 'react-scripts build' }, dependencies: { 'react-scripts': '5' } })).outputDir).toBe('build');
  });

  it('says where Angular writes, and when nothing builds the output it serves', () => {
    const angular = staticSettings(repo(['package.json', 'package-lock.json'], { scripts: { build: 'ng build' }, devDependencies: { '@angular/cli': '18' } }));
    expect(ids(angular.notes)).toEqual(['static-output']);
    expect(ids(staticSettings(repo(['index.html'])).notes)).toEqual(['static-output']);
  });

  it("takes the caller's output directory and refuses one outside the repository", () => {
    expect(staticSettings(repo(['public/index.html']), './public/').outputDir).toBe('public');
    for (const bad of ['../site', '/srv/www', 'a b']) {
      expect(() => staticSettings(repo(['index.html']), bad), bad).toThrow(expect.objectContaining({ code: 'INVALID_PARAMS' }));
    }
  });
});
