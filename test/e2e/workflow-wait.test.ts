/**
 * Workflow detail, history and waiting (issue 11 items 2 and 3) against a started pds whose sandbox takes a while per
 * step: steps as data and a `running` phase; `?wait_seconds=` on the workflow and on the execute path answering once
 * settled (host; failed step with its log tail) or, when time is up, with `settled: false` as a normal answer;
 * wait_seconds never recorded as an operation parameter; waits answering at once when pds shuts down; the workflow
 * history by tenant and service.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Identity } from '../../auth/identity.js';
import type { Platform } from '../../core/ports.js';
import { loadConfig } from '../../config.js';
import { getWorkflow } from '../../tools/workflows.js';
import { invoke, type InvokeDeps } from '../../tools/invoke.js';
import { execute, ONBOARD, openSandbox, run, tempDir } from '../sandbox/helpers.js';
import { executeAndWait, registerRepository, startTestServer, type TestServer } from '../helpers/server.js';

let pds: TestServer;
beforeAll(async () => {
  // 40 ms a step: a deploy's ~9 steps take a few hundred ms, long enough to be seen running and to be waited for.
  pds = await startTestServer({ PDS_SANDBOX_STEP_MS: '40' });
  await executeAndWait(pds, 'root', 'create-tenant', { team_name: 'acme', admins: 'alice', viewers: 'dave' });
  await executeAndWait(pds, 'root', 'create-tenant', { team_name: 'other', admins: 'olga' });
  await registerRepository(pds, 'alice', 'acme', 'acme/web');
});
afterAll(() => pds.stop());

/** Resolves once something (a waiting call) subscribes to `platform`'s workflow changes: the wait has begun. */
function subscribed(platform: Platform): Promise<void> {
  return new Promise((resolve) => {
    const onChange = platform.workflows.onChange.bind(platform.workflows);
    platform.workflows.onChange = (listener) => {
      resolve();
      return onChange(listener);
    };
  });
}

const onboard = { action: 'onboard', team_name: 'acme', component_name: 'web', dockerfile_repo: 'acme/web', git_tag: '0.1.0', port: '8080' };

describe('waiting on a workflow over REST', () => {
  it('answers the execute call once the workflow settled when ?wait_seconds= is given, with the host; records no wait_seconds', async () => {
    const res = await pds.api('alice', 'POST', '/api/v1/operations/deploy-service/execute?wait_seconds=30', onboard);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ status: 'submitted', phase: 'succeeded', settled: true, host: 'acme-web.apps.test' });
    const detail = await pds.api('alice', 'GET', `/api/v1/workflows/${res.body.workflowName}`);
    expect(detail.body.audit.status).toBe('succeeded');
    expect(detail.body.audit.parameters).not.toHaveProperty('wait_seconds');
    const operations = await pds.api('alice', 'GET', '/api/v1/operations/deploy-service');
    expect(operations.body.parameters.map((p: { name: string }) => p.name)).not.toContain('wait_seconds');
  });

  it('gives steps as data and a running phase while it runs, then settles within a wait', async () => {
    const res = await pds.api('alice', 'POST', '/api/v1/operations/deploy-service/execute', {
      action: 'deploy', team_name: 'acme', component_name: 'web', dockerfile_repo: 'acme/web', git_tag: '0.1.1',
    });
    expect(res.status).toBe(200);
    expect(res.body).not.toHaveProperty('settled'); // no wait asked: the contract's answer
    const name = res.body.workflowName;
    let running: any;
    for (let i = 0; i < 200 && !running; i++) {
      const now = (await pds.api('dave', 'GET', `/api/v1/workflows/${name}`)).body;
      if (now.phase === 'running') running = now;
      else await new Promise((r) => setTimeout(r, 5));
    }
    expect(running, 'seen running').toBeDefined();
    expect(running).toMatchObject({ settled: false, audit: { status: 'submitted' } });
    expect(running.steps.length).toBeGreaterThan(3);
    expect(running.steps.some((s: { status: string }) => s.status === 'running' || s.status === 'succeeded')).toBe(true);
    const settled = await pds.api('dave', 'GET', `/api/v1/workflows/${name}?wait_seconds=30`);
    expect(settled.body).toMatchObject({ phase: 'succeeded', settled: true, host: 'acme-web.apps.test', audit: { status: 'succeeded' } });
    for (const step of settled.body.steps) {
      expect(step).toMatchObject({ status: 'succeeded', startedAt: expect.any(String), finishedAt: expect.any(String) });
    }
  });

  it('answers without waiting when wait_seconds is 0, as a normal result with settled: false', async () => {
    const res = await pds.api('alice', 'POST', '/api/v1/operations/deploy-service/execute?wait_seconds=0', {
      action: 'deploy', team_name: 'acme', component_name: 'web', dockerfile_repo: 'acme/web', git_tag: '0.1.2',
    });
    expect(res.body).not.toHaveProperty('settled');
    const early = await pds.api('alice', 'GET', `/api/v1/workflows/${res.body.workflowName}?wait_seconds=0`);
    expect(early.status).toBe(200);
    expect(early.body.settled).toBe(false);
    await pds.api('alice', 'GET', `/api/v1/workflows/${res.body.workflowName}?wait_seconds=30`);
  });

  it('refuses wait_seconds out of range, and in an execute body, saying where it goes', async () => {
    const res = await pds.api('alice', 'GET', '/api/v1/workflows/deploy-service-x7k2p?wait_seconds=46');
    expect(res).toMatchObject({ status: 400, body: { error: expect.stringMatching(/wait_seconds: must be at most 45/) } });
    const body = await pds.api('alice', 'POST', '/api/v1/operations/deploy-service/execute', { ...onboard, wait_seconds: 5 });
    expect(body).toMatchObject({ status: 400, body: { error: 'wait_seconds: not a body field; pass it in the URL, e.g. ?wait_seconds=30' } });
  });
});

describe('the workflow history', () => {
  it('lists a tenant\'s and a service\'s workflows newest first, to members only', async () => {
    const all = await pds.api('dave', 'GET', '/api/v1/workflows?team=acme');
    expect(all.status, JSON.stringify(all.body)).toBe(200);
    expect(all.body.count).toBeGreaterThanOrEqual(4);
    const started = all.body.items.map((w: { startedAt: string }) => w.startedAt);
    expect(started).toEqual([...started].sort().reverse());
    const deploys = await pds.api('dave', 'GET', '/api/v1/workflows?team=acme&service=web&operation=deploy-service&limit=2');
    expect(deploys.body.items.map((w: any) => w.parameters.git_tag)).toEqual(['0.1.2', '0.1.1']);
    expect(deploys.body.items[0]).toMatchObject({ operation: 'deploy-service', userId: 'alice', phase: expect.stringMatching(/^(succeeded|running|submitted)$/) });
    expect((await pds.api('olga', 'GET', '/api/v1/workflows?team=acme')).status).toBe(403);
    // Without a team: only what the caller may see.
    const mine = await pds.api('olga', 'GET', '/api/v1/workflows');
    expect(mine.body.items.every((w: any) => w.parameters.team_name === 'other')).toBe(true);
    expect((await pds.api('dave', 'GET', '/api/v1/workflows?service=web')).body.error).toMatch(/^service: needs team/);
    expect((await pds.api('dave', 'GET', '/api/v1/workflows?team=acme&operation=deploy')).status).toBe(400);
  });
});

describe('waiting over MCP on the wire (2025-11-25)', () => {
  /** A raw `tools/call` of platform_get_workflow; with a progress token when `token` is given. */
  async function callWire(name: string, token?: string) {
    const res = await fetch(`${pds.url}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${await pds.token('alice')}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2025-11-25',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 7,
        method: 'tools/call',
        params: { name: 'platform_get_workflow', arguments: { name, wait_seconds: 30 }, ...(token && { _meta: { progressToken: token } }) },
      }),
    });
    return { type: res.headers.get('content-type') ?? '', text: await res.text() };
  }

  it('answers a call with a progress token as an SSE stream with progress before the result, others as JSON', async () => {
    const deploy = { action: 'deploy', team_name: 'acme', component_name: 'web', dockerfile_repo: 'acme/web' };
    const first = await pds.api('alice', 'POST', '/api/v1/operations/deploy-service/execute', { ...deploy, git_tag: '0.2.0' });
    const streamed = await callWire(first.body.workflowName, 'wait-1');
    expect(streamed.type).toMatch(/^text\/event-stream/);
    const events = streamed.text.split('\n').filter((l) => l.startsWith('data: ')).map((l) => JSON.parse(l.slice(6)));
    const progress = events.filter((e) => e.method === 'notifications/progress');
    expect(progress.length).toBeGreaterThan(0);
    expect(progress[0].params).toMatchObject({ progressToken: 'wait-1', message: expect.stringMatching(/^step \d+\/\d+: /) });
    expect(events.at(-1)).toMatchObject({ id: 7, result: { structuredContent: { settled: true, phase: 'succeeded' } } });

    const second = await pds.api('alice', 'POST', '/api/v1/operations/deploy-service/execute', { ...deploy, git_tag: '0.2.1' });
    const plain = await callWire(second.body.workflowName);
    expect(plain.type).toMatch(/^application\/json/);
    expect(JSON.parse(plain.text)).toMatchObject({ id: 7, result: { structuredContent: { settled: true } } });
  });
});

describe('waits on the platform itself', () => {
  const who = (userId: string): Identity => ({ userId, groups: [], admin: false, tokenKind: 'self-issued' });

  it('carries the failed step and the tail of its log', async () => {
    const sandbox = await openSandbox(await tempDir(), { stepMs: 0 });
    await run(sandbox, 'create-tenant', { team_name: 'acme', admins: 'alice' });
    await run(sandbox, 'deploy-service', ONBOARD);
    const deps: InvokeDeps = { platform: sandbox, config: loadConfig({ PDS_DOMAIN: 'apps.test' }), confirmSecret: new Uint8Array(32) };
    // A second onboarding, past the preflight, which refuses it: the workflow fails in its first step.
    const name = await execute(sandbox, 'deploy-service', ONBOARD);
    const view = (await invoke(getWorkflow, { name, wait_seconds: 10 }, who('alice'), deps)) as any;
    expect(view).toMatchObject({ phase: 'failed', settled: true, host: 'acme-web.apps.test' });
    expect(view.failedStep).toMatchObject({ name: 'validate onboarding of acme/web', message: expect.stringMatching(/already onboarded/) });
    expect(view.failedStep.logTail.length).toBeGreaterThan(0);
    expect(view.failedStep.logTail.at(-1)).toMatch(/failed/);
    expect(view.steps.filter((s: { status: string }) => s.status === 'skipped').length).toBe(view.steps.length - 1);
  });

  it('names the failed step of a tenant operation too, with no log tail (its lines belong to no service)', async () => {
    const sandbox = await openSandbox(await tempDir(), { stepMs: 0 });
    await run(sandbox, 'create-tenant', { team_name: 'acme', admins: 'alice' });
    const deps: InvokeDeps = { platform: sandbox, config: loadConfig({ PDS_DOMAIN: 'apps.test' }), confirmSecret: new Uint8Array(32) };
    const name = await execute(sandbox, 'create-tenant', { team_name: 'acme', admins: 'alice' });
    const view = (await invoke(getWorkflow, { name, wait_seconds: 10 }, who('alice'), deps)) as any;
    expect(view).toMatchObject({ phase: 'failed', settled: true, failedStep: { name: expect.any(String), message: 'tenant acme already exists', logTail: [] } });
    expect(view).not.toHaveProperty('host');
  });

  it('answers a wait whose time is up with the current state and settled: false, not an error', async () => {
    const slow = await openSandbox(await tempDir(), { stepMs: 60_000 });
    const name = await execute(slow, 'create-tenant', { team_name: 'slowco', admins: 'alice' });
    const deps: InvokeDeps = { platform: slow, config: loadConfig({ PDS_DOMAIN: 'apps.test' }), confirmSecret: new Uint8Array(32) };
    const view = (await invoke(getWorkflow, { name, wait_seconds: 1 }, who('alice'), deps)) as any;
    expect(view).toMatchObject({ workflow: name, settled: false, phase: 'submitted', audit: { status: 'submitted' } });
    expect(view.steps.every((s: { status: string }) => s.status === 'pending')).toBe(true);
  });

  it('answers at once with the current state when pds shuts down', async () => {
    // A minute a step: nothing settles while the test runs.
    const slow = await openSandbox(await tempDir(), { stepMs: 60_000 });
    const name = await execute(slow, 'create-tenant', { team_name: 'slowco', admins: 'alice' });
    const deps: InvokeDeps = { platform: slow, config: loadConfig({ PDS_DOMAIN: 'apps.test' }), confirmSecret: new Uint8Array(32) };
    const waitingNow = subscribed(slow);
    // 45 s is past the test's own timeout: only an answer at shutdown lets the test pass.
    const waiting = invoke(getWorkflow, { name, wait_seconds: 45 }, who('alice'), deps);
    await waitingNow;
    await slow.close();
    const view = (await waiting) as any;
    expect(view).toMatchObject({ settled: false, phase: 'submitted' });
  });

  it('answers a waiting HTTP request with the current state when the server closes', async () => {
    const slow = await startTestServer({ PDS_SANDBOX_STEP_MS: '60000' });
    const res = await slow.api('root', 'POST', '/api/v1/operations/create-tenant/execute', { team_name: 'slowco' });
    const waitingNow = subscribed(slow.platform);
    const waiting = slow.api('root', 'GET', `/api/v1/workflows/${res.body.workflowName}?wait_seconds=45`);
    await waitingNow;
    const stopped = slow.stop();
    const answer = await waiting;
    await stopped;
    expect(answer).toMatchObject({ status: 200, body: { settled: false, phase: 'submitted' } });
  });
});
