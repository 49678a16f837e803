/**
 * The deploy job's shell, run for real (`docs/api.md#ci-deploy-job`; issue 12 §3): the `run:` of each deploy step, in
 * order, under bash -eo pipefail as GitHub runs it, in a clone whose origin is a local bare repository, against a local
 * HTTP server standing in for {base_url} — the execute call, then the REST wait (`GET /api/v1/workflows/{name}
 * ?wait_seconds=45`) repeated until pds says the workflow settled. `uses:` steps are skipped (the clone is the
 * checkout); `if:` is the gate.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { parse as parseYaml } from 'yaml';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { WORKFLOW_PATH, scaffold, type PatternId } from '../../templates/index.js';

const run = promisify(execFile);
const GATE_IF = "steps.gate.outputs.enabled == 'true'";
const SECRET = 'ghp_0123456789abcdefABCDEF0123456789abcd';

interface Recorded {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

let server: Server;
let baseUrl: string;
let requests: Recorded[] = [];
const ACCEPTED = { status: 200, body: { workflowName: 'deploy-service-x7k2p', operation: 'deploy-service', status: 'submitted', message: '' } };
let answer: { status: number; body: object } = ACCEPTED;
/** What `GET /api/v1/workflows/{name}?wait_seconds=…` answers, one per call; the last one repeats. */
const SUCCEEDED = {
  workflow: 'deploy-service-x7k2p',
  audit: { status: 'succeeded', message: 'deployed 0.1.1' },
  note: 'succeeded in Argo Workflows',
  settled: true,
  host: 'acme-web.apps.example.com',
};
let waits: { status: number; body: object }[] = [{ status: 200, body: SUCCEEDED }];
/** How many of the next waits are answered by dropping the connection (pds restarting). */
let dropped = 0;

beforeAll(async () => {
  for (const tool of ['git', 'curl', 'jq', 'bash']) {
    await run('sh', ['-c', `command -v ${tool}`]).catch(() => {
      throw new Error(`${tool} must be installed for the deploy job test (the GitHub runner image has it)`);
    });
  }
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      requests.push({ method: req.method!, url: req.url!, headers: req.headers, body });
      if (req.method === 'GET' && dropped > 0) {
        dropped--;
        req.socket.destroy();
        return;
      }
      const reply = req.method === 'GET' ? (waits.length > 1 ? waits.shift()! : waits[0]!) : answer;
      res.writeHead(reply.status, { 'content-type': 'application/json' }).end(JSON.stringify(reply.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const dirs: string[] = [];
afterEach(() => {
  requests = [];
  answer = ACCEPTED;
  waits = [{ status: 200, body: SUCCEEDED }];
  dropped = 0;
  while (dirs.length) rmSync(dirs.pop()!, { recursive: true, force: true });
});

/** A clone of a bare `origin` with one commit, and `tags` (annotated) pushed before the run. */
async function repository(tags: string[]): Promise<{ root: string; work: string; origin: string; env: NodeJS.ProcessEnv }> {
  const root = mkdtempSync(path.join(tmpdir(), 'pds-deploy-'));
  dirs.push(root);
  const env = { PATH: process.env.PATH, HOME: root, GIT_CONFIG_NOSYSTEM: '1', LANG: 'C' };
  const origin = path.join(root, 'origin.git');
  const work = path.join(root, 'work');
  const git = (...args: string[]) => run('git', args, { cwd: work, env });
  await run('git', ['init', '-q', '--bare', '-b', 'main', origin], { env });
  await run('git', ['clone', '-q', origin, work], { env });
  await git('config', 'user.email', 'dev@example.com');
  await git('config', 'user.name', 'Dev');
  for (const [i, tag] of tags.entries()) {
    writeFileSync(path.join(work, 'file.txt'), `change ${i}\n`);
    await git('add', 'file.txt');
    await git('commit', '-q', '-m', `change ${i}`);
    await git('tag', '-a', tag, '-m', tag);
  }
  writeFileSync(path.join(work, 'file.txt'), 'head\n');
  await git('add', 'file.txt');
  await git('commit', '-q', '-m', 'head');
  await git('push', '-q', '--follow-tags', 'origin', 'main');
  return { root, work, origin, env };
}

/** Run the deploy job's steps as the runner would. Returns the exit code of the first failing step (or 0) and output. */
async function runDeployJob(pattern: PatternId, opts: { secret: string; ref: string; base?: string }, repo: Awaited<ReturnType<typeof repository>>) {
  const plan = scaffold({ repo: { paths: ['package.json', 'server.js'] }, team: 'acme', component: 'web', baseUrl: opts.base ?? baseUrl, pattern });
  const wf = parseYaml(plan.files.find((f) => f.path === WORKFLOW_PATH)!.content) as {
    jobs: { deploy: { env: Record<string, string>; steps: { id?: string; if?: string; uses?: string; run?: string }[] } };
  };
  const job = wf.jobs.deploy;
  const jobEnv = Object.fromEntries(
    Object.entries(job.env).map(([k, v]) => [k, v === '${{ secrets.PLATFORM_GITHUB_TOKEN }}' ? opts.secret : v]),
  );
  for (const v of Object.values(jobEnv)) expect(v).not.toContain('${{');
  const outputFile = path.join(repo.root, 'github_output');
  const envFile = path.join(repo.root, 'github_env');
  let env: NodeJS.ProcessEnv = {
    ...repo.env,
    ...jobEnv,
    GITHUB_ACTIONS: 'true',
    GITHUB_REF: opts.ref,
    GITHUB_REPOSITORY: 'acme/web',
    GITHUB_OUTPUT: outputFile,
    GITHUB_ENV: envFile,
    // The job's pause before asking again after a lost connection (5 s on a runner).
    PDS_WAIT_RETRY_SECONDS: '0',
  };
  const outputs: Record<string, Record<string, string>> = {};
  let log = '';
  for (const step of job.steps) {
    if (step.if !== undefined) {
      expect(step.if).toBe(GATE_IF);
      if (outputs.gate?.enabled !== 'true') continue;
    }
    if (step.uses) continue;
    writeFileSync(outputFile, '');
    writeFileSync(envFile, '');
    try {
      const r = await run('bash', ['--noprofile', '--norc', '-eo', 'pipefail', '-c', step.run!], { cwd: repo.work, env });
      log += r.stdout + r.stderr;
    } catch (err) {
      const e = err as { code: number; stdout: string; stderr: string };
      return { code: e.code, log: log + e.stdout + e.stderr };
    }
    const kv = (file: string) => Object.fromEntries(readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]));
    if (step.id) outputs[step.id] = kv(outputFile);
    env = { ...env, ...kv(envFile) };
  }
  return { code: 0, log };
}

async function remoteTags(origin: string, env: NodeJS.ProcessEnv): Promise<string[]> {
  const { stdout } = await run('git', ['--git-dir', origin, 'tag', '--list'], { env });
  return stdout.split('\n').filter(Boolean).sort();
}

/** The execute call, then the waits: each `GET /api/v1/workflows/deploy-service-x7k2p?wait_seconds=45` with the token. */
function expectDeployRequest(tag: string, waitCalls = 1) {
  expect(requests.map((r) => r.method)).toEqual(['POST', ...Array<string>(waitCalls).fill('GET')]);
  for (const wait of requests.slice(1)) {
    expect(wait.url).toBe('/api/v1/workflows/deploy-service-x7k2p?wait_seconds=45');
    expect(wait.headers.authorization).toBe(`Bearer ${SECRET}`);
  }
  const [req] = requests as [Recorded];
  expect(req.method).toBe('POST');
  expect(req.url).toBe('/api/v1/operations/deploy-service/execute');
  expect(req.headers.authorization).toBe(`Bearer ${SECRET}`);
  expect(req.headers['content-type']).toBe('application/json');
  expect(JSON.parse(req.body)).toEqual({ action: 'deploy', team_name: 'acme', component_name: 'web', dockerfile_repo: 'acme/web', git_tag: tag });
  expect(Object.keys(JSON.parse(req.body))).toEqual(['action', 'team_name', 'component_name', 'dockerfile_repo', 'git_tag']);
}

describe.each([{ pattern: 'continuous' as const }, { pattern: 'manual' as const }])('$pattern deploy job', ({ pattern }) => {
  const ref = 'refs/heads/main';

  it('bumps 0.1.0 to 0.1.1, pushes it annotated to origin and deploys it', async () => {
    const repo = await repository(['0.1.0']);
    const r = await runDeployJob(pattern, { secret: SECRET, ref }, repo);
    expect(r.code, r.log).toBe(0);
    expect(await remoteTags(repo.origin, repo.env)).toEqual(['0.1.0', '0.1.1']);
    const { stdout: type } = await run('git', ['--git-dir', repo.origin, 'cat-file', '-t', '0.1.1'], { env: repo.env });
    expect(type.trim()).toBe('tag');
    const { stdout: tagged } = await run('git', ['--git-dir', repo.origin, 'rev-parse', '0.1.1^{commit}', 'main'], { env: repo.env });
    const [commit, main] = tagged.trim().split('\n');
    expect(commit).toBe(main);
    expectDeployRequest('0.1.1');
    expect(r.log).toContain('deploy-service-x7k2p');
    expect(r.log).toContain('::notice title=Deployed::0.1.1 of acme/web is live at https://acme-web.apps.example.com');
  });

  it('waits again while pds answers "settled": false, then reports the status and the service URL', async () => {
    const running = { workflow: 'deploy-service-x7k2p', audit: { status: 'submitted', message: '' }, note: 'running: step 3/9: build image', settled: false };
    waits = [{ status: 200, body: running }, { status: 200, body: running }, { status: 200, body: SUCCEEDED }];
    const repo = await repository(['0.1.0']);
    const r = await runDeployJob(pattern, { secret: SECRET, ref }, repo);
    expect(r.code, r.log).toBe(0);
    expectDeployRequest('0.1.1', 3);
    expect(r.log).toContain('still running: running: step 3/9: build image');
    expect(r.log).toMatch(/^status: succeeded$/m);
    expect(r.log).toMatch(/^service URL: https:\/\/acme-web\.apps\.example\.com$/m);
  });

  it('fails the job when the deploy fails, printing the status, the service URL, the failed step and its log', async () => {
    waits = [{
      status: 200,
      body: {
        ...SUCCEEDED,
        audit: { status: 'failed', message: 'image build failed: exit code 1' },
        failedStep: { name: 'build image', message: 'exit code 1', logTail: ['npm ERR! missing script: build', 'error: build failed'] },
      },
    }];
    const repo = await repository(['0.1.0']);
    const r = await runDeployJob(pattern, { secret: SECRET, ref }, repo);
    expect(r.code).not.toBe(0);
    expectDeployRequest('0.1.1');
    expect(r.log).toMatch(/^status: failed$/m);
    expect(r.log).toMatch(/^service URL: https:\/\/acme-web\.apps\.example\.com$/m);
    expect(r.log).toContain('::error title=Deploy failed::0.1.1 of acme/web failed at build image: image build failed: exit code 1 (https://acme-web.apps.example.com)');
    expect(r.log).toContain('npm ERR! missing script: build\nerror: build failed');
    expect(r.log).not.toContain('::notice title=Deployed::');
  });

  it('asks again when the connection is lost while waiting (pds restarting), and gives up after three', async () => {
    dropped = 2;
    const repo = await repository(['0.1.0']);
    const r = await runDeployJob(pattern, { secret: SECRET, ref }, repo);
    expect(r.code, r.log).toBe(0);
    expectDeployRequest('0.1.1', 3);
    expect(r.log).toContain('::warning title=pds did not answer::curl exit 52; asking again (2/3)');
    dropped = 4;
    requests = [];
    const again = await runDeployJob(pattern, { secret: SECRET, ref }, await repository(['0.1.0']));
    expect(again.code).not.toBe(0);
    expect(again.log).toContain('::error title=Deploy status unknown::no answer from');
  });

  it('fails the job when pds cannot say how the deploy went', async () => {
    waits = [{ status: 404, body: { error: 'workflow not found: deploy-service-x7k2p' } }];
    const repo = await repository(['0.1.0']);
    const r = await runDeployJob(pattern, { secret: SECRET, ref }, repo);
    expect(r.code).not.toBe(0);
    expect(r.log).toContain('::error title=Deploy status unknown::{"error":"workflow not found: deploy-service-x7k2p"}');
  });

  it('starts at 0.0.1 when there is no tag', async () => {
    const repo = await repository([]);
    const r = await runDeployJob(pattern, { secret: SECRET, ref }, repo);
    expect(r.code, r.log).toBe(0);
    expect(await remoteTags(repo.origin, repo.env)).toEqual(['0.0.1']);
    expectDeployRequest('0.0.1');
  });

  it('bumps the highest X.Y.Z tag by version, ignoring other tags', async () => {
    const repo = await repository(['0.1.9', '0.1.10', 'v7.0.0', 'nightly', '0.1.2']);
    const r = await runDeployJob(pattern, { secret: SECRET, ref }, repo);
    expect(r.code, r.log).toBe(0);
    expect(await remoteTags(repo.origin, repo.env)).toContain('0.1.11');
    expectDeployRequest('0.1.11');
  });

  it('warns and skips everything when the secret is empty', async () => {
    const repo = await repository(['0.1.0']);
    const r = await runDeployJob(pattern, { secret: '', ref }, repo);
    expect(r.code).toBe(0);
    expect(r.log).toMatch(/^::warning title=Deploy skipped::.*PLATFORM_GITHUB_TOKEN/m);
    expect(await remoteTags(repo.origin, repo.env)).toEqual(['0.1.0']);
    expect(requests).toEqual([]);
  });

  it('fails the job with pds\'s answer when the deploy is refused', async () => {
    answer = { status: 403, body: { error: 'access denied to this tenant' } };
    const repo = await repository(['0.1.0']);
    const r = await runDeployJob(pattern, { secret: SECRET, ref }, repo);
    expect(r.code).not.toBe(0);
    expect(r.log).toContain('::error title=Deploy refused::{"error":"access denied to this tenant"}');
    expect(requests).toHaveLength(1);
  });

  it('fails the job when pds cannot be reached', async () => {
    const repo = await repository([]);
    const r = await runDeployJob(pattern, { secret: SECRET, ref, base: 'http://127.0.0.1:9' }, repo);
    expect(r.code).not.toBe(0);
    expect(r.log).toContain('::error title=Deploy refused::');
  });
});

describe.each([{ pattern: 'tag' as const }, { pattern: 'hybrid' as const }])('$pattern deploy job', ({ pattern }) => {
  it('deploys the pushed tag as it is, pushing nothing', async () => {
    const repo = await repository(['0.1.0', '1.4.2']);
    const r = await runDeployJob(pattern, { secret: SECRET, ref: 'refs/tags/1.4.2' }, repo);
    expect(r.code, r.log).toBe(0);
    expect(await remoteTags(repo.origin, repo.env)).toEqual(['0.1.0', '1.4.2']);
    expectDeployRequest('1.4.2');
  });

  it('refuses a tag that is not X.Y.Z without calling pds', async () => {
    const repo = await repository(['v1.4.2']);
    const r = await runDeployJob(pattern, { secret: SECRET, ref: 'refs/tags/v1.4.2' }, repo);
    expect(r.code).not.toBe(0);
    expect(r.log).toContain('::error title=Not a release tag::');
    expect(requests).toEqual([]);
  });

  it('warns and skips when the secret is empty', async () => {
    const repo = await repository(['1.4.2']);
    const r = await runDeployJob(pattern, { secret: '', ref: 'refs/tags/1.4.2' }, repo);
    expect(r.code).toBe(0);
    expect(r.log).toContain('::warning title=Deploy skipped::');
    expect(requests).toEqual([]);
  });
});
