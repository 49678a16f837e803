/** The Node build settings the JavaScript and static inspectors share (templates/inspect/node.ts). */
import { describe, expect, it } from 'vitest';
import { nodeSettings } from '../../../templates/inspect/node.js';
import { Repo } from '../../../templates/repo.js';

const repo = (paths: string[], pkg?: object, more: Record<string, string> = {}) =>
  new Repo({ paths, contents: { ...(pkg ? { 'package.json': JSON.stringify(pkg) } : {}), ...more } });
const ids = (notes: { id: string }[]) => notes.map((n) => n.id);

describe('nodeSettings', () => {
  it('npm with a lockfile: frozen install, prune, setup-node cache, no notes', () => {
    const s = nodeSettings(repo(['package.json', 'package-lock.json'], { name: 'web' }));
    expect(s).toMatchObject({ packageManager: 'npm', installAll: 'npm ci', installProd: 'npm ci --omit=dev', prune: 'npm prune --omit=dev', corepack: false, cache: 'npm', manifests: 'package.json package-lock.json' });
    expect(s.notes).toEqual([]);
  });

  it('npm without a lockfile says so, and has no cache', () => {
    const s = nodeSettings(repo(['package.json'], { name: 'web' }));
    expect(s).toMatchObject({ installAll: 'npm install', cache: undefined });
    expect(ids(s.notes)).toEqual(['lockfile']);
  });

  it('pnpm from its lockfile, through corepack', () => {
    const s = nodeSettings(repo(['package.json', 'pnpm-lock.yaml', '.npmrc'], { name: 'web' }));
    expect(s).toMatchObject({ packageManager: 'pnpm', installAll: 'pnpm install --frozen-lockfile', prune: 'pnpm prune --prod', corepack: true, runBuild: 'pnpm run build', manifests: 'package.json pnpm-lock.yaml .npmrc' });
  });

  it('Yarn 2+ keeps devDependencies and says so', () => {
    const s = nodeSettings(repo(['package.json', 'yarn.lock'], { packageManager: 'yarn@4.1.0' }));
    expect(s).toMatchObject({ packageManager: 'yarn', installAll: 'yarn install --immutable', installProd: 'yarn install --immutable', prune: undefined });
    expect(ids(s.notes)).toEqual(['yarn-dev-dependencies']);
  });

  it.each<[string | undefined, string | undefined, string]>([
    [undefined, undefined, '22'],
    ['20.x', undefined, '20'],
    ['^20', undefined, '20'],
    ['>=24', undefined, '24'],
    ['>=16', undefined, '22'],
    ['^16', undefined, '22'],
    ['^20', 'v18.19.0\n', '18'],
  ])('engines.node %s, .nvmrc %j → Node %s', (engines, nvmrc, major) => {
    const r = repo(['package.json', 'package-lock.json'], { engines: engines ? { node: engines } : {} }, nvmrc ? { '.nvmrc': nvmrc } : {});
    expect(nodeSettings(r).nodeVersion).toBe(major);
  });

  it("npm's placeholder test script and an unread package.json are notes", () => {
    const placeholder = nodeSettings(repo(['package.json', 'package-lock.json'], { scripts: { test: 'echo "Error: no test specified" && exit 1' } }));
    expect(placeholder.testPlaceholder).toBe(true);
    expect(ids(placeholder.notes)).toEqual(['tests']);
    expect(ids(nodeSettings(repo(['package.json', 'package-lock.json'])).notes)).toEqual(['package-json-unread']);
  });
});
