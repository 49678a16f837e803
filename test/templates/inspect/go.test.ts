/** The Go server inspector (templates/inspect/go.ts): the Go version and the package built. */
import { describe, expect, it } from 'vitest';
import { goSettings } from '../../../templates/inspect/go.js';
import { Repo } from '../../../templates/repo.js';

const repo = (paths: string[], goMod?: string) => new Repo({ paths, contents: goMod ? { 'go.mod': goMod } : {} });
const ids = (notes: { id: string }[]) => notes.map((n) => n.id);

describe('goSettings', () => {
  it.each<[string | undefined, string]>([
    [undefined, '1.24'],
    ['module x\n\ngo 1.22.3\n', '1.22'],
    ['module x\n\ngo 1.22\ntoolchain go1.23.4\n', '1.23'],
    ['module x\n\ngo 1.19\n', '1.24'],
  ])('go.mod %j → Go %s', (goMod, version) => {
    expect(goSettings(repo(['go.mod', 'main.go'], goMod)).goVersion).toBe(version);
  });

  it('copies go.sum when there is one', () => {
    expect(goSettings(repo(['go.mod', 'go.sum', 'main.go'])).modFiles).toBe('go.mod go.sum');
    expect(goSettings(repo(['go.mod', 'main.go'])).modFiles).toBe('go.mod');
  });

  it('builds ./cmd/server, else the root main.go, else the only command', () => {
    expect(goSettings(repo(['go.mod', 'main.go', 'cmd/server/main.go', 'cmd/server/main_test.go'])).package).toBe('./cmd/server');
    expect(goSettings(repo(['go.mod', 'main.go', 'cmd/tool/main.go'])).package).toBe('.');
    expect(goSettings(repo(['go.mod', 'cmd/api/main.go'])).package).toBe('./cmd/api');
  });

  it('says which package it assumed when several commands or none fit', () => {
    const several = goSettings(repo(['go.mod', 'cmd/api/main.go', 'cmd/worker/main.go']));
    expect(several.package).toBe('./cmd/server');
    expect(ids(several.notes)).toEqual(['go-package']);
    expect(ids(goSettings(repo(['go.mod', 'internal/x.go'])).notes)).toEqual(['go-package']);
  });

  it("takes the caller's package path and refuses one outside the repository", () => {
    expect(goSettings(repo(['go.mod']), 'cmd/api').package).toBe('./cmd/api');
    expect(goSettings(repo(['go.mod']), './cmd/api/').package).toBe('./cmd/api');
    expect(goSettings(repo(['go.mod']), '.').package).toBe('.');
    for (const bad of ['../x', './cmd/../..', 'cmd/a b']) {
      expect(() => goSettings(repo(['go.mod']), bad), bad).toThrow(expect.objectContaining({ code: 'INVALID_PARAMS' }));
    }
  });
});
