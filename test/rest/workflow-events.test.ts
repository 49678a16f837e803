/**
 * `GET /api/v1/workflows/{name}/events` (issue 19 item 1): one workflow's step changes and its settlement as
 * server-sent events, read with a real SSE parser (eventsource-parser) from a started pds whose sandbox takes a while
 * per step; the same access as the workflow read (404 for a non-member, as for an unknown name); heartbeats; closed
 * after the settled event; counted by the 300/min route limit; described in OpenAPI.
 */
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { executeAndWait, registerRepository, startTestServer, type TestServer } from '../helpers/server.js';

let pds: TestServer;
beforeAll(async () => {
  // 40 ms a step, and a heartbeat every 20 ms: a deploy's steps arrive as separate changes, with heartbeats between.
  pds = await startTestServer({ PDS_SANDBOX_STEP_MS: '40' }, { heartbeatMs: 20 });
  await executeAndWait(pds, 'root', 'create-tenant', { team_name: 'acme', admins: 'alice', viewers: 'dave' });
  await executeAndWait(pds, 'root', 'create-tenant', { team_name: 'other', admins: 'olga' });
  await registerRepository(pds, 'alice', 'acme', 'acme/web');
});
afterAll(() => pds.stop());

interface Read {
  status: number;
  type: string | null;
  events: EventSourceMessage[];
  comments: string[];
  /** True when the server ended the response (rather than the deadline). */
  closed: boolean;
}

/** Read the stream of `name` as `user` until the server closes it, at most `deadlineMs`. */
async function follow(user: string, name: string, deadlineMs = 20_000): Promise<Read> {
  const res = await fetch(`${pds.url}/api/v1/workflows/${name}/events`, {
    headers: { authorization: `Bearer ${await pds.token(user)}`, accept: 'text/event-stream' },
    signal: AbortSignal.timeout(deadlineMs),
  });
  const read: Read = { status: res.status, type: res.headers.get('content-type'), events: [], comments: [], closed: false };
  if (!res.ok) {
    read.events.push({ event: 'http', data: await res.text(), id: undefined });
    return read;
  }
  const parser = createParser({ onEvent: (e) => read.events.push(e), onComment: (c) => read.comments.push(c.trim()) });
  const decoder = new TextDecoder();
  for await (const chunk of res.body!) parser.feed(decoder.decode(chunk as Uint8Array, { stream: true }));
  read.closed = true;
  return read;
}

const deploy = (tag: string) => ({ action: 'deploy', team_name: 'acme', component_name: 'web', dockerfile_repo: 'acme/web', git_tag: tag });

describe('GET /api/v1/workflows/{name}/events', () => {
  it('sends each step change once, in order, then the settlement, and closes', async () => {
    await executeAndWait(pds, 'alice', 'deploy-service', { ...deploy('0.1.0'), action: 'onboard', port: '8080' });
    const res = await pds.api('alice', 'POST', '/api/v1/operations/deploy-service/execute', deploy('0.1.1'));
    expect(res.status).toBe(200);
    const read = await follow('dave', res.body.workflowName);
    expect(read.status).toBe(200);
    expect(read.type).toMatch(/^text\/event-stream/);
    expect(read.closed).toBe(true);
    const kinds = read.events.map((e) => e.event);
    expect(kinds.at(-1)).toBe('settled');
    expect(kinds.filter((n) => n === 'settled')).toHaveLength(1);
    const steps = read.events.filter((e) => e.event === 'step').map((e) => JSON.parse(e.data));
    const settled = JSON.parse(read.events.at(-1)!.data);
    expect(settled).toMatchObject({ workflow: res.body.workflowName, phase: 'succeeded', settled: true, host: 'acme-web.apps.test' });
    const names: string[] = settled.steps.map((s: { name: string }) => s.name);
    expect(names.length).toBeGreaterThan(3);
    // Every step finished exactly once, and no step is reported twice in the same status.
    const keys = steps.map((s) => `${s.step.name}:${s.step.status}`);
    expect(new Set(keys).size).toBe(keys.length);
    for (const name of names) expect(keys, name).toContain(`${name}:succeeded`);
    // A step never moves back (running after succeeded), whatever order reads came in.
    for (const name of names) {
      const seen = steps.filter((s) => s.step.name === name).map((s) => s.step.status);
      expect(seen.at(-1), name).toBe('succeeded');
    }
    // The heartbeat comes between events while a step runs (40 ms a step, a beat every 20 ms).
    expect(read.comments).toContain('heartbeat');
  });

  it('replays the steps of a settled workflow and closes at once', async () => {
    const done = await executeAndWait(pds, 'alice', 'deploy-service', deploy('0.1.2'));
    const read = await follow('alice', done.workflow);
    expect(read.closed).toBe(true);
    expect(read.events.at(-1)!.event).toBe('settled');
    expect(read.events.filter((e) => e.event === 'step').length).toBe(JSON.parse(read.events.at(-1)!.data).steps.length);
  });

  it('answers 404 to a caller who may not see the workflow, as to an unknown name, before any event', async () => {
    const done = await executeAndWait(pds, 'alice', 'deploy-service', deploy('0.1.3'));
    const denied = await follow('olga', done.workflow);
    const unknown = await follow('olga', 'deploy-service-nope1');
    for (const read of [denied, unknown]) {
      expect(read.status).toBe(404);
      expect(read.type).toMatch(/^application\/json/);
    }
    expect(JSON.parse(denied.events[0]!.data)).toEqual({ error: `workflow not found: ${done.workflow}` });
    expect(JSON.parse(unknown.events[0]!.data)).toEqual({ error: 'workflow not found: deploy-service-nope1' });
    const bad = await follow('alice', 'Not_A_Name');
    expect(bad.status).toBe(400);
  });

  it('ends the stream, without a settlement, when pds shuts down; the drain does not wait for it', async () => {
    const slow = await startTestServer({ PDS_SANDBOX_STEP_MS: '60000' });
    try {
      const created = await slow.api('root', 'POST', '/api/v1/operations/create-tenant/execute', { team_name: 'slowco', admins: 'root' });
      const res = await fetch(`${slow.url}/api/v1/workflows/${created.body.workflowName}/events`, {
        headers: { authorization: `Bearer ${await slow.token('root')}` },
        signal: AbortSignal.timeout(20_000),
      });
      expect(res.status).toBe(200);
      const reader = res.body!.getReader();
      await reader.read(); // the opening comment: the stream is up
      const { unfinished } = await slow.shutdown(20_000);
      expect(unfinished).toBe(0);
      let text = '';
      for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) text += new TextDecoder().decode(chunk.value);
      expect(text).not.toContain('event: settled');
    } finally {
      await slow.stop();
    }
  });

  it('is a GET in OpenAPI with a text/event-stream answer', async () => {
    const doc = parse(await (await fetch(`${pds.url}/openapi.yaml`)).text());
    const op = doc.paths['/api/v1/workflows/{name}/events'].get;
    expect(op.operationId).toBe('platform_follow_workflow');
    expect(Object.keys(op.responses['200'].content)).toEqual(['text/event-stream']);
    expect(op.responses['404']).toBeDefined();
  });
});
