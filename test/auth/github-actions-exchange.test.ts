/**
 * CI without a personal token (issue 20 item 6), on a started pds (sandbox) with a fake GitHub Actions issuer on
 * loopback: RFC 8693 token exchange at `/oauth/token`, every claim mismatch refused (at the exchange, or at the door with
 * 403 and nothing recorded), and a successful exchange deploying its own repository, through REST and MCP.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { parse as parseYaml } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLIENTS, connectHttp } from '../helpers/mcp-clients.js';
import { startGitHubActionsIssuer, type GitHubActionsIssuer, type RunClaims } from '../fixtures/github-actions-oidc.js';
import { executeAndWait, registerRepository, startTestServer, waitForWorkflow, type TestServer } from '../helpers/server.js';

const TEAM = 'acme';
const WEB = 'acme/web';
const API = 'acme/api';
const EXCHANGE = {
  grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
  subject_token_type: 'urn:ietf:params:oauth:token-type:id_token',
  client_id: 'pds-ci',
};
const CI_POLICY = { ci: { githubOidc: true, refs: ['refs/heads/main', 'refs/tags/*'] } };

let pds: TestServer;
let actions: GitHubActionsIssuer;
const ids: Record<string, { name: string; id: string; ownerId: string }> = {};
/** The workflow that onboarded acme/web (alice's). */
let onboarded = '';

/** POST the token endpoint as a CI job does (a form), with `fields` over the exchange's own. */
async function exchange(subjectToken: string, fields: Record<string, string> = {}): Promise<{ status: number; body: any }> {
  const res = await fetch(`${pds.url}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
    body: new URLSearchParams({ ...EXCHANGE, subject_token: subjectToken, ...fields }),
  });
  return { status: res.status, body: await res.json() };
}

/** An ID token of `repo`'s run (audience pds) with `claims` changed, exchanged; the pds token. */
async function ciToken(repo: string, claims: Partial<RunClaims> = {}): Promise<string> {
  const answer = await exchange(await actions.idToken(pds.config.baseUrl, ids[repo]!, claims));
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return answer.body.access_token as string;
}

/** Call the API with a bearer token. */
async function as(token: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(pds.url + path, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

const deploy = (tag: string, extra: Record<string, string> = {}) => ({ action: 'deploy', team_name: TEAM, component_name: 'web', dockerfile_repo: WEB, git_tag: tag, ...extra });
const EXECUTE = '/api/v1/operations/deploy-service/execute';

/** The newest audit entry's workflow name (refusals must not add one). */
async function newestAudit(): Promise<string | undefined> {
  return (await pds.api('alice', 'GET', '/api/v1/audit')).body.items[0]?.workflowName;
}

beforeAll(async () => {
  actions = await startGitHubActionsIssuer();
  pds = await startTestServer({ PDS_GITHUB_OIDC_ISSUER: actions.url, PDS_OUTBOUND_ALLOW_PRIVATE: 'true' });
  await executeAndWait(pds, 'root', 'create-tenant', { team_name: TEAM, admins: 'alice' });
  for (const repo of [WEB, API]) await registerRepository(pds, 'alice', TEAM, repo);
  for (const r of (await pds.api('alice', 'GET', `/api/v1/repos?team=${TEAM}`)).body.items) ids[r.fullName] = { name: r.fullName, id: r.id, ownerId: r.ownerId };
  for (const [app, repo] of [['web', WEB], ['api', API]] as const) {
    const onboard = await executeAndWait(pds, 'alice', 'deploy-service', { action: 'onboard', team_name: TEAM, component_name: app, dockerfile_repo: repo, git_tag: '0.1.0', port: '8080' });
    expect(onboard.audit.status).toBe('succeeded');
    if (app === 'web') onboarded = onboard.workflow;
  }
}, 60_000);
afterAll(async () => {
  await pds?.stop();
  await actions?.close();
});

describe('GitHub Actions OIDC token exchange', () => {
  it('records the code host ids of each registered repository', () => {
    expect(ids[WEB]).toEqual({ name: WEB, id: expect.stringMatching(/^\d+$/), ownerId: expect.stringMatching(/^\d+$/) });
    expect(ids[API]!.ownerId).toBe(ids[WEB]!.ownerId);
    expect(ids[API]!.id).not.toBe(ids[WEB]!.id);
  });

  it('is refused at the door while the tenant has not opted in, with nothing recorded', async () => {
    const token = await ciToken(WEB);
    const before = await newestAudit();
    const refused = await as(token, 'POST', EXECUTE, deploy('0.1.1'));
    expect(refused.status).toBe(403);
    expect(refused.body.error).toMatch(/tenant acme does not accept GitHub Actions OIDC tokens.*"githubOidc": true/);
    expect(await newestAudit()).toBe(before);
  });

  it('refuses, at the exchange, an ID token that is not a verified run of an allowed event', async () => {
    const web = ids[WEB]!;
    const audience = pds.config.baseUrl;
    const now = Math.floor(Date.now() / 1000);
    const cases: Array<[string, Promise<string>, RegExp]> = [
      ['wrong issuer', actions.idToken(audience, web, { iss: 'https://token.actions.example.com' }), /issuer/],
      ['wrong audience', actions.idToken('https://other.example.com', web), /audience.*must be/],
      ['expired', actions.idToken(audience, web, { iat: now - 900, nbf: now - 900, exp: now - 600 }), /expired/],
      ['bad signature', actions.idToken(audience, web, {}, { foreignKey: true }), /signature/],
      ['disallowed event', actions.idToken(audience, web, { event_name: 'pull_request' }), /pull_request event; only push and workflow_dispatch/],
      ['no repository id', actions.idToken(audience, web, { repository_id: undefined }), /repository_id/],
    ];
    for (const [what, idToken, reason] of cases) {
      const answer = await exchange(await idToken);
      expect(answer.status, what).toBe(400);
      expect(answer.body, what).toMatchObject({ error: 'invalid_request', error_description: expect.stringMatching(reason) });
    }
    const wrongType = await exchange(await actions.idToken(audience, web), { subject_token_type: 'urn:ietf:params:oauth:token-type:access_token' });
    expect(wrongType.body).toMatchObject({ error: 'invalid_request', error_description: expect.stringMatching(/subject_token_type must be/) });
  });

  it('fetches the issuer\'s key set through the outbound rule: a loopback issuer is refused unless PDS_OUTBOUND_ALLOW_PRIVATE', async () => {
    const strict = await startTestServer({ PDS_GITHUB_OIDC_ISSUER: actions.url });
    try {
      const before = actions.keySetRequests;
      const res = await fetch(`${strict.url}/oauth/token`, {
        method: 'POST',
        headers: { accept: 'application/json' },
        body: new URLSearchParams({ ...EXCHANGE, subject_token: await actions.idToken(strict.config.baseUrl, ids[WEB]!) }),
      });
      expect(res.status).toBe(503);
      expect(await res.json()).toMatchObject({ error: 'temporarily_unavailable', error_description: expect.stringMatching(/key set of http:\/\/127\.0\.0\.1:\d+ could not be fetched/) });
      expect(actions.keySetRequests).toBe(before);
    } finally {
      await strict.stop();
    }
  });

  it('deploys its own repository once the tenant opts in: audited as github-actions:<repo> with the run URL', async () => {
    expect((await pds.api('alice', 'PUT', `/api/v1/tenants/${TEAM}/policy`, CI_POLICY)).status).toBe(200);
    const answer = await exchange(await actions.idToken(pds.config.baseUrl, ids[WEB]!));
    expect(answer.body).toMatchObject({ token_type: 'Bearer', expires_in: 600, issued_token_type: 'urn:ietf:params:oauth:token-type:access_token' });
    const res = await as(answer.body.access_token, 'POST', EXECUTE, deploy('0.1.1'));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ operation: 'deploy-service', status: 'submitted' });
    const run = await waitForWorkflow(pds, 'alice', res.body.workflowName, 20_000);
    expect(run.audit).toMatchObject({
      status: 'succeeded',
      userId: 'github-actions:acme/web',
      parameters: { ...deploy('0.1.1'), ci_run_url: 'https://github.com/acme/web/actions/runs/7104331' },
      riskLevel: 'medium',
    });
    expect((await pds.api('alice', 'GET', `/api/v1/services/${TEAM}/web`)).body.imageTag).toBe('0.1.1');
    // It follows the workflows it submitted (the scaffolded job waits for its deploy), and no other.
    expect(await as(answer.body.access_token, 'GET', `/api/v1/workflows/${res.body.workflowName}?wait_seconds=1`)).toMatchObject({ status: 200, body: { settled: true } });
    // A tag push matches refs/tags/*; a workflow_dispatch run may deploy too.
    const tag = await as(await ciToken(WEB, { ref: 'refs/tags/0.1.2', event_name: 'workflow_dispatch' }), 'POST', EXECUTE, deploy('0.1.2'));
    expect(tag.status, JSON.stringify(tag.body)).toBe(200);
    expect((await waitForWorkflow(pds, 'alice', tag.body.workflowName, 20_000)).audit.status).toBe('succeeded');
  });

  it('refuses at the door, with 403 and nothing recorded, every run, repository and call it does not allow', async () => {
    const web = ids[WEB]!;
    const before = await newestAudit();
    const refusals: Array<[string, Promise<{ status: number; body: any }>, RegExp]> = [
      ['same name re-created (new id)', ciToken(WEB, { repository_id: String(Number(web.id) + 1) }).then((t) => as(t, 'POST', EXECUTE, deploy('0.1.1'))), /is not the one registered to tenant acme/],
      ['other owner id', ciToken(WEB, { repository_owner_id: String(Number(web.ownerId) + 1) }).then((t) => as(t, 'POST', EXECUTE, deploy('0.1.1'))), /owner id .* is not the one registered/],
      ['disallowed ref', ciToken(WEB, { ref: 'refs/heads/dev' }).then((t) => as(t, 'POST', EXECUTE, deploy('0.1.1'))), /ref refs\/heads\/dev of acme\/web is not one tenant acme lets CI deploy from/],
      ['another repository\'s run', ciToken(API).then((t) => as(t, 'POST', EXECUTE, deploy('0.1.1'))), /dockerfile_repo acme\/web is not the run's repository/],
      ['a service of another repository', ciToken(API).then((t) => as(t, 'POST', EXECUTE, deploy('0.1.1', { dockerfile_repo: API }))), /service acme\/web builds from acme\/web, not from acme\/api/],
      ['other action', ciToken(WEB).then((t) => as(t, 'POST', EXECUTE, { action: 'update-config', team_name: TEAM, component_name: 'web', env_vars: 'A=1' })), /action=update-config is not for CI/],
      ['other operation', ciToken(WEB).then((t) => as(t, 'POST', '/api/v1/operations/rollback-service/execute', { team_name: TEAM, component_name: 'web', target_tag: '0.1.0' })), /platform_rollback_service is not for CI/],
      ['a read', ciToken(WEB).then((t) => as(t, 'GET', `/api/v1/services/${TEAM}/web`)), /is not for CI/],
      ['the policy', ciToken(WEB).then((t) => as(t, 'PUT', `/api/v1/tenants/${TEAM}/policy`, {})), /is not for CI/],
      ['another\'s workflow', ciToken(WEB).then((t) => as(t, 'GET', `/api/v1/workflows/${onboarded}`)), /was not submitted by github-actions:acme\/web/],
      ['moving the service', ciToken(WEB).then((t) => as(t, 'POST', EXECUTE, deploy('0.1.1', { move_from_repo: API }))), /needs a person/],
    ];
    for (const [what, answer, reason] of refusals) {
      const { status, body } = await answer;
      expect(status, `${what}: ${JSON.stringify(body)}`).toBe(403);
      expect(body.error, what).toMatch(reason);
    }
    expect(await newestAudit()).toBe(before);
  });

  it('may never override a freeze window (not a person)', async () => {
    const freeze = { ...CI_POLICY, freezeWindows: [{ name: 'always', schedule: '* * * * *', duration: '2m', operations: ['deploy-service'], reason: 'release freeze' }] };
    expect((await pds.api('alice', 'PUT', `/api/v1/tenants/${TEAM}/policy`, freeze)).status).toBe(200);
    try {
      const token = await ciToken(WEB);
      expect((await as(token, 'POST', EXECUTE, deploy('0.1.1'))).body.error).toMatch(/frozen/);
      const override = await as(token, 'POST', EXECUTE, { ...deploy('0.1.1'), override_reason: 'ship it' });
      expect(override.status).toBe(403);
      expect(override.body.error).toMatch(/needs a person.*a CI token/);
    } finally {
      expect((await pds.api('alice', 'PUT', `/api/v1/tenants/${TEAM}/policy`, CI_POLICY)).status).toBe(200);
    }
  });

  it('over MCP: deploys with platform_deploy_service, and any other tool is an error naming what CI may do', async () => {
    const mcp = await connectHttp(CLIENTS.at(-1)!, `${pds.url}/mcp?toolsets=all`, { authorization: `Bearer ${await ciToken(WEB)}` });
    try {
      const status = await mcp.callTool({ name: 'platform_get_status', arguments: { team: TEAM, app: 'web' } });
      expect(status.isError).toBe(true);
      expect(JSON.stringify(status.content)).toMatch(/not for CI/);
      const done = await mcp.callTool({ name: 'platform_deploy_service', arguments: { ...deploy('0.1.1'), wait_seconds: 20 } });
      expect(done.isError, JSON.stringify(done.content)).toBeFalsy();
      expect(done.structuredContent).toMatchObject({ status: 'submitted', phase: 'succeeded' });
    } finally {
      await mcp.close();
    }
  });
});

describe('the scaffolded deploy job with GitHub Actions OIDC', () => {
  const run = promisify(execFile);

  it('is what a tenant that enabled ci.githubOidc gets, with no secret; others get the PAT job', async () => {
    const request = { team_name: TEAM, component_name: 'web', files: ['package.json', 'server.js'], pattern: 'tag' };
    const job = async (user: string) => {
      const plan = await pds.api(user, 'POST', '/api/v1/scaffold', request);
      expect(plan.status, JSON.stringify(plan.body)).toBe(200);
      return (parseYaml(plan.body.files.find((f: any) => f.path === '.github/workflows/ci.yml').content) as any).jobs.deploy;
    };
    const oidc = await job('alice');
    expect(oidc.permissions).toEqual({ contents: 'write', 'id-token': 'write' });
    expect(JSON.stringify(oidc)).not.toContain('secrets.');
    const pat = await job('mallory');
    expect(pat.permissions).toEqual({ contents: 'write' });
    expect(pat.env.PLATFORM_GITHUB_TOKEN).toBe('${{ secrets.PLATFORM_GITHUB_TOKEN }}');
  });

  it('runs under bash as the runner would: exchanges the run\'s ID token and deploys the pushed tag', async () => {
    for (const tool of ['curl', 'jq', 'bash']) await run('sh', ['-c', `command -v ${tool}`]);
    const plan = await pds.api('alice', 'POST', '/api/v1/scaffold', { team_name: TEAM, component_name: 'web', files: ['package.json', 'server.js'], pattern: 'tag' });
    const steps = (parseYaml(plan.body.files.find((f: any) => f.path === '.github/workflows/ci.yml').content) as any).jobs.deploy.steps as Array<{ id?: string; if?: string; run?: string }>;
    // The runner's ID token endpoint (ACTIONS_ID_TOKEN_REQUEST_URL): a token of this run for the audience asked.
    const REQUEST_TOKEN = 'runner-request-token';
    const runner = createServer((req, res) => {
      const url = new URL(req.url!, 'http://runner');
      if (req.headers.authorization !== `Bearer ${REQUEST_TOKEN}`) return void res.writeHead(401).end();
      void actions.idToken(url.searchParams.get('audience') ?? '', ids[WEB]!, { ref: 'refs/tags/0.1.3' }).then((value) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ value })));
    });
    await new Promise<void>((resolve) => runner.listen(0, '127.0.0.1', resolve));
    const dir = mkdtempSync(path.join(tmpdir(), 'pds-oidc-job-'));
    try {
      const outputFile = path.join(dir, 'output');
      const envFile = path.join(dir, 'env');
      let env: NodeJS.ProcessEnv = {
        PATH: process.env.PATH,
        HOME: dir,
        PDS_BASE_URL: pds.config.baseUrl,
        PDS_TEAM: TEAM,
        PDS_COMPONENT: 'web',
        GITHUB_REF: 'refs/tags/0.1.3',
        GITHUB_REPOSITORY: WEB,
        GITHUB_OUTPUT: outputFile,
        GITHUB_ENV: envFile,
        ACTIONS_ID_TOKEN_REQUEST_URL: `http://127.0.0.1:${(runner.address() as AddressInfo).port}/token?api-version=2.0`,
        ACTIONS_ID_TOKEN_REQUEST_TOKEN: REQUEST_TOKEN,
      };
      const kv = (file: string) => Object.fromEntries(readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]));
      let log = '';
      for (const step of steps) {
        writeFileSync(outputFile, '');
        writeFileSync(envFile, '');
        const r = await run('bash', ['--noprofile', '--norc', '-eo', 'pipefail', '-c', step.run!], { cwd: dir, env }).catch((err) => {
          throw new Error(`step failed: ${err.stdout}${err.stderr}\n${log}`);
        });
        log += r.stdout + r.stderr;
        env = { ...env, ...kv(envFile) };
      }
      expect(log).toMatch(/::notice title=Deployed::0\.1\.3 of acme\/web is live/);
      expect(env.PDS_TOKEN).toMatch(/^ey/);
      const audit = (await pds.api('alice', 'GET', '/api/v1/audit')).body.items[0];
      expect(audit).toMatchObject({ userId: 'github-actions:acme/web', status: 'succeeded', parameters: { git_tag: '0.1.3', ci_run_url: 'https://github.com/acme/web/actions/runs/7104331' } });
    } finally {
      runner.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
