/** The Python ASGI inspector (templates/inspect/python.ts): version, dependencies and the `<module>:<app>` served. */
import { describe, expect, it } from 'vitest';
import { pythonEntryCandidates, pythonSettings } from '../../../templates/inspect/python.js';
import { Repo } from '../../../templates/repo.js';

const repo = (paths: string[], contents: Record<string, string> = {}) => new Repo({ paths, contents });
const ids = (notes: { id: string }[]) => notes.map((n) => n.id);

describe('pythonEntryCandidates', () => {
  it('lists the usual app modules, shallowest and most likely first, never tests or scripts', () => {
    const paths = ['tests/main.py', 'scripts/app.py', 'lib/util.py', 'src/shop/__init__.py', 'src/shop/main.py', 'app.py', 'api/server.py', 'a/b/c/main.py', '__init__.py'];
    expect(pythonEntryCandidates(paths)).toEqual(['app.py', 'src/shop/main.py', 'api/server.py', 'src/shop/__init__.py']);
  });
});

describe('pythonSettings', () => {
  it('finds the application object and the framework in a src layout', () => {
    const s = pythonSettings(repo(['requirements.txt', 'src/shop/main.py'], { 'src/shop/main.py': 'from fastapi import FastAPI\napi: FastAPI = FastAPI()\n' }));
    expect(s).toMatchObject({ app: 'shop.main:api', appDir: 'src', uvicornArgs: ['--app-dir', 'src'], requirements: true, dependencyFile: 'requirements.txt' });
    expect(ids(s.notes)).toEqual([]);
  });

  it('serves Flask as WSGI and says so', () => {
    const s = pythonSettings(repo(['requirements.txt', 'app.py'], { 'app.py': 'app = Flask(__name__)\n' }));
    expect(s).toMatchObject({ app: 'app:app', uvicornArgs: ['--interface', 'wsgi'] });
    expect(ids(s.notes)).toEqual(['wsgi']);
  });

  it('assumes "<module>:app" from an unread candidate, or the placeholder main:app, with a note each', () => {
    expect(pythonSettings(repo(['requirements.txt', 'app/main.py']))).toMatchObject({ app: 'app.main:app', notes: [expect.objectContaining({ id: 'python-app' })] });
    expect(pythonSettings(repo(['requirements.txt']))).toMatchObject({ app: 'main:app', notes: [expect.objectContaining({ id: 'python-app' })] });
  });

  it('installs an installable project; passes [project].dependencies as exec-form arguments when it is not', () => {
    const built = pythonSettings(repo(['pyproject.toml', 'main.py'], { 'pyproject.toml': '[project]\nname = "x"\n[build-system]\nrequires = ["hatchling"]\n', 'main.py': 'app = FastAPI()\n' }));
    expect(built).toMatchObject({ installProject: true, dependencies: undefined, dependencyFile: 'pyproject.toml' });
    const bare = pythonSettings(repo(['pyproject.toml', 'main.py'], { 'pyproject.toml': '[project]\nname = "x"\ndependencies = ["starlette>=0.37", "it\'s"]\n', 'main.py': 'app = Starlette()\n' }));
    expect(bare).toMatchObject({ installProject: false, dependencies: ['starlette>=0.37', "it's"], pipInstall: '["pip", "install", "starlette>=0.37", "it\'s"]' });
  });

  it.each<[string | undefined, string | undefined, string]>([
    [undefined, undefined, '3.12'],
    ['>=3.9,<3.12', undefined, '3.11'],
    ['>=3.13', undefined, '3.13'],
    ['==3.10.*', undefined, '3.10'],
    ['>=3.11', '3.10.4\n', '3.10'],
  ])('requires-python %j, .python-version %j → Python %s', (requires, pinned, version) => {
    const toml = `[project]\nname = "x"\n${requires ? `requires-python = "${requires}"\n` : ''}`;
    const r = repo(['pyproject.toml', 'main.py'], { 'pyproject.toml': toml, 'main.py': 'app = FastAPI()\n', ...(pinned ? { '.python-version': pinned } : {}) });
    expect(pythonSettings(r).pythonVersion).toBe(version);
  });

  it("takes the caller's <module>:<app> and refuses anything else", () => {
    expect(pythonSettings(repo(['requirements.txt']), 'service.asgi:application').app).toBe('service.asgi:application');
    for (const bad of ['main', 'main:app; rm -rf /', '../x:app']) {
      expect(() => pythonSettings(repo(['requirements.txt']), bad), bad).toThrow(expect.objectContaining({ code: 'INVALID_PARAMS' }));
    }
  });
});
