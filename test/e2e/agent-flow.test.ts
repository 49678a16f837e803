/**
 * The agent flow of issue 11 ("Tests"): the real v1 and v2 MCP clients, on both protocol versions, over HTTP and over
 * `pds mcp` on stdio, onboard a repository — create the tenant, grant and sync the repository, onboard, status — in
 * five calls, none of them a poll: the operations wait (`wait_seconds`) and the client sees progress notifications
 * ("step 3/9: …") while they do.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLIENTS, connectHttp, connectStdio, type ClientKind, type TestClient } from '../helpers/mcp-clients.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

let pds: TestServer;
const ADMINS = CLIENTS.flatMap((kind) => [teamFor('http', kind), teamFor('stdio', kind)]).map((team) => `admin-${team}`);
beforeAll(async () => {
  // 20 ms a step: an onboarding's steps are each seen as progress, and the whole flow stays quick.
  // Each flow is its own platform admin: six flows of four writes would exceed one user's 20 writes a minute.
  pds = await startTestServer({ PDS_SANDBOX_STEP_MS: '20', PDS_ADMINS: ['root', ...ADMINS].join(',') });
});
afterAll(() => pds.stop());

/** The shipped `mcp.json`: each flow selects toolsets as its entry does, so the README's flow works with it as shipped. */
const SHIPPED = JSON.parse(readFileSync(new URL('../../mcp.json', import.meta.url), 'utf8')).mcpServers as {
  'pds-token': { headers: Record<string, string> };
  'pds-stdio': { args: string[] };
};
const { Authorization: _token, ...SHIPPED_HEADERS } = SHIPPED['pds-token'].headers;

function teamFor(door: string, kind: ClientKind): string {
  return `${door}-${kind.sdk}-${kind.protocol.slice(0, 4)}`;
}

type Progress = { progress: number; total?: number; message?: string };

/** The five calls, counted; returns what each answered and the progress seen during the two waits. */
async function onboard(client: TestClient, team: string) {
  const calls: string[] = [];
  const progress: Progress[] = [];
  const call = async (name: string, args: Record<string, unknown>, watch = false) => {
    calls.push(name);
    const result = await client.callTool({ name, arguments: args }, watch ? { onprogress: (p) => progress.push(p) } : undefined);
    expect(result.isError, `${name}: ${JSON.stringify(result.content)}`).toBeFalsy();
    return result.structuredContent;
  };
  const tenant = await call('platform_create_tenant', { team_name: team, admins: `admin-${team}`, wait_seconds: 30 });
  await call('platform_grant_repo_access', { team_name: team, repo: `${team}/web` });
  const synced = await call('platform_sync_repos', { team });
  const onboarded = await call('platform_deploy_service', {
    action: 'onboard', team_name: team, component_name: 'web', dockerfile_repo: `${team}/web`, git_tag: '0.1.0', port: 8080, wait_seconds: 30,
  }, true);
  const status = await call('platform_get_status', { team, app: 'web' });
  return { calls, progress, tenant, synced, onboarded, status };
}

function expectOnboarded(flow: Awaited<ReturnType<typeof onboard>>, team: string) {
  expect(flow.calls.length).toBeLessThanOrEqual(5);
  expect(flow.calls).not.toContain('platform_get_workflow');
  expect(flow.tenant).toMatchObject({ status: 'submitted', phase: 'succeeded', settled: true });
  expect(flow.synced.items.map((r: { fullName: string }) => r.fullName)).toContain(`${team}/web`);
  expect(flow.onboarded).toMatchObject({ phase: 'succeeded', settled: true, host: `${team}-web.apps.test` });
  expect(flow.status.argocd).toMatchObject({ syncStatus: 'Synced', healthStatus: 'Healthy' });
  // Progress while the onboarding ran: growing values, step messages.
  expect(flow.progress.length, JSON.stringify(flow.progress)).toBeGreaterThan(1);
  expect(flow.progress.some((p) => /^step \d+\/\d+: /.test(p.message ?? ''))).toBe(true);
  const values = flow.progress.map((p) => p.progress);
  expect(values).toEqual([...values].sort((a, b) => a - b));
  expect(new Set(values).size).toBe(values.length);
}


describe.each(CLIENTS)('onboarding over HTTP with the $name', (kind) => {
  it('takes five calls, none a poll, with progress while it waits', async () => {
    const team = teamFor('http', kind);
    const client = await connectHttp(kind, `${pds.url}/mcp`, { ...SHIPPED_HEADERS, authorization: `Bearer ${await pds.token(`admin-${team}`)}` });
    try {
      const flow = await onboard(client, team);
      expect(client.protocol).toBe(kind.protocol);
      expectOnboarded(flow, team);
    } finally {
      await client.close();
    }
  });
});

describe.each(CLIENTS)('onboarding over pds mcp (stdio) with the $name', (kind) => {
  // The bridge reports what it reads between REST waits of WAIT_SLICE_SECONDS; steps of 500 ms make an onboarding
  // span more than one slice, so progress is seen mid-way and not only at the start and the end.
  let slow: TestServer;
  beforeAll(async () => {
    slow = await startTestServer({ PDS_SANDBOX_STEP_MS: '500', PDS_ADMINS: ['root', ...ADMINS].join(',') });
  });
  afterAll(() => slow.stop());

  it('takes five calls, none a poll, with progress the bridge sends while it waits through REST', async () => {
    const team = teamFor('stdio', kind);
    const client = await connectStdio(kind, {
      command: process.execPath,
      args: ['bin/pds-src.js', ...SHIPPED['pds-stdio'].args.slice(1)],
      env: { ...(process.env as Record<string, string>), PDS_BASE_URL: slow.url, PDS_TOKEN: await slow.token(`admin-${team}`) },
    });
    try {
      expectOnboarded(await onboard(client, team), team);
    } finally {
      await client.close();
    }
  });
});
