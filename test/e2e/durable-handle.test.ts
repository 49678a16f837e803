/**
 * The durable handle of an agent's work (issue 22 item 6; README "Cancel, retry and durable handles"): the SDK v2
 * packages serve no MCP tasks, so `workflowName` with `wait_seconds` is the handle. A wait whose stream drops midway
 * (the client went away after a progress notification) leaves the workflow running, and the same request repeated
 * answers exactly as a fresh one does, and as REST does, once the workflow has settled. A step is held open by the test
 * (`test/helpers/step-hold.ts`), so nothing sleeps.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createParser } from 'eventsource-parser';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createSandboxPlatform } from '../../adapters/sandbox/index.js';
import { registerRepository, startTestServer, waitForWorkflow, type TestServer } from '../helpers/server.js';
import { stepHolds } from '../helpers/step-hold.js';

const holds = stepHolds();
let pds: TestServer;

beforeAll(async () => {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'pds-durable-'));
  const platform = await createSandboxPlatform({ dataDir, domain: 'apps.test', stepMs: 5, githubAppSlug: 'pds-test', beforeStep: holds.beforeStep });
  pds = await startTestServer({ PDS_DATA_DIR: dataDir }, { platform });
  const tenant = await pds.api('root', 'POST', '/api/v1/operations/create-tenant/execute', { team_name: 'acme', admins: 'alice' });
  await waitForWorkflow(pds, 'root', tenant.body.workflowName);
  await registerRepository(pds, 'alice', 'acme', 'acme/web');
  const onboard = await pds.api('alice', 'POST', '/api/v1/operations/deploy-service/execute', {
    action: 'onboard', team_name: 'acme', component_name: 'web', dockerfile_repo: 'acme/web', git_tag: '0.1.0', port: '8080',
  });
  await waitForWorkflow(pds, 'alice', onboard.body.workflowName);
}, 60_000);

afterAll(async () => {
  holds.releaseAll();
  await pds?.stop();
});

/** A raw MCP `tools/call` of platform_get_workflow waiting 45 s, with a progress token (so the answer is a stream). */
async function waitCall(name: string, signal?: AbortSignal): Promise<Response> {
  return fetch(`${pds.url}/mcp`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${await pds.token('alice')}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-11-25',
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 42,
      method: 'tools/call',
      params: { name: 'platform_get_workflow', arguments: { name, wait_seconds: 45 }, _meta: { progressToken: 'handle' } },
    }),
    signal,
  });
}

/** The JSON-RPC messages of a whole SSE answer. */
async function messages(res: Response): Promise<any[]> {
  const out: any[] = [];
  const parser = createParser({ onEvent: (e) => out.push(JSON.parse(e.data)) });
  parser.feed(await res.text());
  return out;
}

it('a wait dropped mid-stream leaves the workflow running; the repeated request answers as a fresh one and as REST', async () => {
  const held = holds.hold('deploy-service-', 2);
  const deploy = await pds.api('alice', 'POST', '/api/v1/operations/deploy-service/execute', {
    action: 'deploy', team_name: 'acme', component_name: 'web', dockerfile_repo: 'acme/web', git_tag: '0.1.1',
  });
  const name: string = deploy.body.workflowName;
  try {
    await held.reached;
    // The first wait: read until its first progress notification, then drop the connection.
    const dropping = new AbortController();
    const first = await waitCall(name, dropping.signal);
    expect(first.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const decoder = new TextDecoder();
    let seen = '';
    for await (const chunk of first.body!) {
      seen += decoder.decode(chunk as Uint8Array, { stream: true });
      if (seen.includes('notifications/progress')) break;
    }
    dropping.abort();
    expect(seen).toContain('"progressToken":"handle"');
    // Dropping the wait is not a cancellation: the workflow is still running.
    expect((await pds.api('alice', 'GET', `/api/v1/workflows/${name}`)).body).toMatchObject({ phase: 'running', settled: false });
  } finally {
    held.release();
  }

  // The same request again, from the start: it waits and answers once settled.
  const repeated = (await messages(await waitCall(name))).at(-1);
  expect(repeated).toMatchObject({ id: 42, result: { structuredContent: { workflow: name, phase: 'succeeded', settled: true } } });
  const fresh = (await messages(await waitCall(name))).at(-1);
  expect(repeated.result).toEqual(fresh.result);
  const rest = await pds.api('alice', 'GET', `/api/v1/workflows/${name}`);
  expect(repeated.result.structuredContent).toEqual(rest.body);
});
