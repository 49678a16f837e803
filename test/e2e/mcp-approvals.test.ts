/**
 * Approvals through MCP clients (issue 20 item 2): a decision over MCP needs the person's own answer — `pds mcp` on
 * stdio asks them (elicitation; the 2025-11-25 client through the SDK's shim) and a client that cannot ask is
 * refused without ever seeing a value it could confirm with; a classic PAT (which may sit in CI) cannot decide over
 * REST either — and a `wait_seconds` wait follows the workflow through its approval, reporting "waiting for approval
 * by …" as progress until the approval starts it and it succeeds.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGitHubFixture, type GitHubFixture } from '../fixtures/github-api.js';
import { CLIENTS, connectHttp, connectStdio, textOf, type StdioTarget } from '../helpers/mcp-clients.js';
import { executeAndWait, registerRepository, startTestServer, waitForWorkflow, type TestServer } from '../helpers/server.js';

let pds: TestServer;
let github: GitHubFixture;
let stdio: (user: string) => Promise<StdioTarget>;

/** carol's rollback, held for alice's approval: its workflow name and approval id. */
async function held(): Promise<{ name: string; id: string }> {
  const res = await pds.api('carol', 'POST', '/api/v1/operations/rollback-service/execute', { team_name: 'acme', component_name: 'web', target_tag: '0.1.0' });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  const w = await pds.api('carol', 'GET', `/api/v1/workflows/${res.body.workflowName}`);
  return { name: res.body.workflowName, id: w.body.approval.id };
}

beforeAll(async () => {
  github = await startGitHubFixture();
  pds = await startTestServer({ PDS_GITHUB_API_URL: github.url });
  await executeAndWait(pds, 'root', 'create-tenant', { team_name: 'acme', admins: 'alice', members: 'carol' });
  await registerRepository(pds, 'alice', 'acme', 'acme/web');
  const onboard = { action: 'onboard', team_name: 'acme', component_name: 'web', dockerfile_repo: 'acme/web', git_tag: '0.1.0', port: '8080', service_template: 'default' };
  expect((await executeAndWait(pds, 'alice', 'deploy-service', onboard)).audit.status).toBe('succeeded');
  const policy = { approvals: { operations: ['rollback-service'], required: 1, approvers: ['alice'] } };
  expect((await pds.api('root', 'PUT', '/api/v1/tenants/acme/policy', policy)).status).toBe(200);
  stdio = async (user) => ({
    command: process.execPath,
    args: ['bin/pds-src.js', 'mcp', '--toolsets', 'all'],
    env: { ...(process.env as Record<string, string>), PDS_BASE_URL: pds.url, PDS_TOKEN: await pds.token(user) },
  });
}, 90_000);
afterAll(async () => {
  await pds?.stop();
  await github?.close();
});

describe('over REST', () => {
  it('refuses a decision made with a classic PAT, the same rule as override_reason, and changes nothing', async () => {
    const { id } = await held();
    const pat = `ghp_approvals${'A'.repeat(30)}`;
    github.addToken(pat, 'alice', ['read:user']);
    const res = await fetch(`${pds.url}/api/v1/approvals/${id}/approve`, {
      method: 'POST',
      headers: { authorization: `Bearer ${pat}`, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(res.status).toBe(403);
    expect(((await res.json()) as { error: string }).error).toMatch(/needs a person signed in to pds .* personal access token/);
    expect((await pds.api('alice', 'GET', `/api/v1/approvals?team=acme`)).body.items.find((a: any) => a.id === id)).toMatchObject({ state: 'pending', approvedBy: [] });
    expect((await pds.api('alice', 'POST', `/api/v1/approvals/${id}/reject`, { reason: 'clean up' })).status).toBe(200);
  });
});

describe.each([CLIENTS[0]!, CLIENTS.at(-1)!])('pds mcp on stdio: $name', (kind) => {
  it('asks the person, and decides only on their yes', async () => {
    const { name, id } = await held();
    const questions: string[] = [];
    const client = await connectStdio(kind, await stdio('alice'), {
      onElicit: (params) => {
        questions.push(params.message);
        return { action: 'accept', content: { confirm: true } };
      },
    });
    try {
      const result = await client.callTool({ name: 'platform_review_approval', arguments: { id, decision: 'approve', comment: 'ok' } });
      expect(result.isError, textOf(result as never)).toBeFalsy();
      expect(questions).toEqual([expect.stringContaining(`approve ${name} (rollback-service acme/web, requested by carol) with "ok"`)]);
    } finally {
      await client.close();
    }
    expect((await waitForWorkflow(pds, 'carol', name, 20_000)).audit.status).toBe('succeeded');
  });

  it('refuses a client that cannot ask, and gives the agent no value to confirm with', async () => {
    const { id } = await held();
    const client = await connectStdio(kind, await stdio('alice'));
    try {
      const result = await client.callTool({ name: 'platform_review_approval', arguments: { id, decision: 'reject', reason: 'no' } });
      expect(result.isError).toBe(true);
      expect(textOf(result as never)).toMatch(/needs the person's own answer/);
      expect(JSON.stringify(result)).not.toMatch(/"confirm"|\d{10}\.[A-Za-z0-9_-]+\./);
    } finally {
      await client.close();
    }
    expect((await pds.api('alice', 'GET', `/api/v1/approvals?state=pending`)).body.items.map((a: any) => a.id)).toContain(id);
    await pds.api('alice', 'POST', `/api/v1/approvals/${id}/reject`, { reason: 'clean up' });
  });
});

describe('a wait over MCP', () => {
  it('reports "waiting for approval by …" while it waits, and follows the workflow to its end once approved', async () => {
    const { name, id } = await held();
    const client = await connectHttp(CLIENTS.at(-1)!, `${pds.url}/mcp?toolsets=all`, { authorization: `Bearer ${await pds.token('carol')}` });
    try {
      const progress: Array<{ message?: string }> = [];
      let approve: Promise<unknown> | undefined;
      const waited = await client.callTool(
        { name: 'platform_get_workflow', arguments: { name, wait_seconds: 45 } },
        {
          onprogress: (p: { message?: string }) => {
            progress.push(p);
            // Approved once the waiting caller has been told what it waits for.
            approve ??= pds.api('alice', 'POST', `/api/v1/approvals/${id}/approve`, {});
          },
        },
      );
      expect(waited.isError, textOf(waited as never)).toBeFalsy();
      expect(waited.structuredContent).toMatchObject({ phase: 'succeeded', settled: true, approval: { state: 'approved', approvedBy: ['alice'] } });
      expect(progress[0]?.message).toMatch(/^waiting for approval by alice until .*Z \(0 of 1 approval\)$/);
      expect((await approve) as { status: number }).toMatchObject({ status: 200 });
    } finally {
      await client.close();
    }
  });
});
