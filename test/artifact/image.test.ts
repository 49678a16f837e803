/**
 * The artifact as it ships (issue 18 item 2): the Dockerfile carried out on the local disk (test/artifact/image.ts:
 * its stages, COPY lines, `npm run build` and the production-only `npm ci`), then the final stage's `CMD` run in its
 * `WORKDIR` with its `ENV`, and the same for what deploy/kubernetes/pds.yaml runs (test/cluster/artifact.test.ts runs
 * deploy/kubernetes/cluster/30-pds.yaml, whose backend needs the test API server). No Docker engine here or in CI, so
 * the image's base (Node, alpine, tini) is the one thing taken on trust; the files, the command, the environment and
 * the health check are the image's own.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { CLIENTS, connectHttp, connectStdio } from '../helpers/mcp-clients.js';
import { freePort } from '../fixtures/free-port.js';
import { until } from '../helpers/until.js';
import { layOutImage, type ImageLayout } from './image.js';
import { api, environmentOf, program, run, settled, stop, token, type Running } from './run.js';

const repo = path.resolve('.');
const { version } = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };
let scratch: string;
let image: ImageLayout;

beforeAll(() => {
  scratch = mkdtempSync(path.join(tmpdir(), 'pds-artifact-'));
  image = layOutImage(repo, path.join(scratch, 'image'));
}, 240_000);
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe("the Dockerfile's final stage", () => {
  let pds: Running;
  let dataDir: string;
  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(scratch, 'data-'));
    pds = await run(image, image.cmd, {
      ...image.env,
      PORT: String(await freePort()),
      HOST: '127.0.0.1',
      PDS_DATA_DIR: dataDir,
      PDS_ADMINS: 'root',
      PDS_SANDBOX_STEP_MS: '20',
    });
  }, 90_000);
  afterAll(() => pds?.child.kill('SIGKILL'));

  it('is laid out as the image: package.json, dist/ and only production packages in the WORKDIR', () => {
    expect(image.env).toMatchObject({ NODE_ENV: 'production', PDS_DATA_DIR: '/data' });
    expect(image.base).toBe('node:24-alpine'); // Node 24 LTS in production; development still runs on 20
    expect(image.entrypoint).toEqual(['/sbin/tini', '--']);
    expect(image.apkPackages).toContain('tini');
    const modules = path.join(image.workdir, 'node_modules');
    expect(readFileSync(path.join(image.workdir, 'package.json'), 'utf8')).toContain('"name": "pds"');
    expect(() => readFileSync(path.join(modules, 'koa/package.json'))).not.toThrow();
    expect(() => readFileSync(path.join(modules, 'vitest/package.json'))).toThrow(); // a devDependency
  });

  it('answers /healthz and /readyz', async () => {
    expect((await fetch(`${pds.url}/healthz`)).status).toBe(200);
    expect((await fetch(`${pds.url}/readyz`)).status).toBe(200);
  });

  it('serves the web console at / to a browser, built into the image by npm run build (issue 21)', async () => {
    const page = await fetch(`${pds.url}/`, { headers: { accept: 'text/html' } });
    expect(page.status).toBe(200);
    const script = /src="(\/console\/assets\/[^"]+\.js)"/.exec(await page.text())?.[1];
    expect(script).toBeDefined();
    expect((await fetch(pds.url + script)).status).toBe(200);
    expect((await fetch(`${pds.url}/`, { headers: { accept: 'application/json' } })).status).toBe(404);
  });

  it('prints its version', () => {
    const [command, ...args] = program(['node', image.cmd.find((a) => a.startsWith('dist/'))!, '--version']);
    const result = spawnSync(command!, args, { cwd: image.workdir, env: { PATH: process.env.PATH!, ...pds.env }, encoding: 'utf8' });
    expect(result.stderr).toBe('');
    expect(result.stdout.trim()).toBe(version);
  });

  it('onboards a service over REST with tokens from its own token command', async () => {
    const root = token(image, pds, 'root');
    const alice = token(image, pds, 'alice');
    const created = await api(pds, root, 'POST', '/api/v1/operations/create-tenant/execute', { team_name: 'acme', admins: 'alice' });
    expect(created.status).toBe(200);
    expect(await settled(pds, root, created.body.workflowName)).toBe('succeeded');
    expect((await api(pds, alice, 'POST', '/api/v1/repos/grant-access', { team_name: 'acme', repo: 'acme/web' })).status).toBe(200);
    expect((await api(pds, alice, 'POST', '/api/v1/repos/sync', { team: 'acme' })).status).toBe(200);
    const onboard = await api(pds, alice, 'POST', '/api/v1/operations/deploy-service/execute', {
      action: 'onboard', team_name: 'acme', component_name: 'web', dockerfile_repo: 'acme/web', git_tag: '0.1.0', port: '8787',
    });
    expect(onboard.status).toBe(200);
    expect(await settled(pds, alice, onboard.body.workflowName)).toBe('succeeded');
    const status = await api(pds, alice, 'GET', '/api/v1/status/acme/web');
    expect(status.body.argocd).toMatchObject({ syncStatus: 'Synced', healthStatus: 'Healthy' });
  });

  it('onboards a service over MCP: create-tenant as an admin, then deploy-service onboard', async () => {
    const connect = (bearer: string) => connectHttp(CLIENTS[0]!, `${pds.url}/mcp?toolsets=all`, { Authorization: `Bearer ${bearer}` });
    const root = await connect(token(image, pds, 'root'));
    const bob = await connect(token(image, pds, 'bob'));
    try {
      const waited = async (client: typeof root, name: string) => {
        const deadline = Date.now() + 60_000;
        for (;;) {
          const wf = await client.callTool({ name: 'platform_get_workflow', arguments: { name, wait_seconds: '30' } });
          expect(wf.isError, JSON.stringify(wf.content)).toBeFalsy();
          if (wf.structuredContent.audit.status !== 'submitted' || Date.now() > deadline) return wf.structuredContent.audit.status;
        }
      };
      const created = await root.callTool({ name: 'platform_create_tenant', arguments: { team_name: 'beta', admins: 'bob' } });
      expect(created.isError).toBeFalsy();
      expect(await waited(root, created.structuredContent.workflowName)).toBe('succeeded');
      for (const [name, args] of [
        ['platform_grant_repo_access', { team_name: 'beta', repo: 'beta/api' }],
        ['platform_sync_repos', { team: 'beta' }],
      ] as const) expect((await bob.callTool({ name, arguments: args })).isError).toBeFalsy();
      const onboard = await bob.callTool({
        name: 'platform_deploy_service',
        arguments: { action: 'onboard', team_name: 'beta', component_name: 'api', dockerfile_repo: 'beta/api', git_tag: '0.1.0', port: '8000' },
      });
      expect(onboard.isError).toBeFalsy();
      expect(await waited(bob, onboard.structuredContent.workflowName)).toBe('succeeded');
    } finally {
      await root.close();
      await bob.close();
    }
  });

  it('serves MCP over stdio with `pds mcp` (tools/list)', async () => {
    const entry = image.cmd.find((a) => a.startsWith('dist/'))!;
    const [command, ...args] = program(['node', path.join(image.workdir, entry), 'mcp']);
    const client = await connectStdio(CLIENTS[0]!, {
      command: command!,
      args,
      cwd: image.workdir,
      env: { PATH: process.env.PATH!, ...image.env, PDS_BASE_URL: pds.url, PDS_TOKEN: token(image, pds, 'alice') },
    });
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toContain('platform_deploy_service');
    } finally {
      await client.close();
    }
  });

  it("passes its HEALTHCHECK, run with the image's own program, and fails it once stopped; SIGTERM ends it with 0", async () => {
    // The check's program must be in the final image: node, which CMD runs, or a package the stage adds.
    expect([image.cmd[0], ...image.apkPackages]).toContain(image.healthcheck[0]);
    const check = () => {
      const [command, ...args] = program(image.healthcheck);
      return spawnSync(command!, args, { cwd: image.workdir, env: { PATH: process.env.PATH!, ...pds.env }, timeout: 20_000 }).status;
    };
    expect(check()).toBe(0);
    expect(await stop(pds)).toBe(0);
    expect(check()).toBe(1);
  });
});

/** V8's major version: from 13 (Node 24) the memory reducer needs server.ts's `keepMemoryReducerAwake` to run. */
const V8_MAJOR = Number(process.versions.v8.split('.')[0]);

describe.runIf(V8_MAJOR >= 13)("the image's CMD after a load, on Node 24's V8 (issue 23)", () => {
  it('gives memory back: V8 starts a memory-reducing collection within seconds of the load, not at its 100 s watchdog', async () => {
    const [node, ...args] = image.cmd;
    // V8 prints the reducer's decisions to stdout: "high alloc" on every tick without pds's tick, "started GC" with it.
    const pds = await run(image, [node!, '--trace-memory-reducer', ...args], {
      ...image.env,
      PORT: String(await freePort()),
      HOST: '127.0.0.1',
      PDS_DATA_DIR: mkdtempSync(path.join(scratch, 'data-')),
      PDS_ADMINS: 'root',
    });
    try {
      const headers = { authorization: `Bearer ${token(image, pds, 'root')}` };
      // The load: 2,000 reads of the operation catalog (loopback is exempt from the route limit), about 90 MB of
      // allocation, which grows the old generation and so ends in full collections: each arms the reducer.
      for (let round = 0; round < 40; round++) {
        const answers = await Promise.all(Array.from({ length: 50 }, () => fetch(`${pds.url}/api/v1/operations`, { headers })));
        expect(answers.map((r) => r.status)).toEqual(answers.map(() => 200));
        await Promise.all(answers.map((r) => r.arrayBuffer()));
      }
      const loadEnded = pds.output().length;
      // The reducer looks every 8 s; V8's watchdog would start one only 100 s after the last full collection.
      await until('"Memory reducer: started GC" after the load', () => /Memory reducer: started GC/.test(pds.output().slice(loadEnded)), 60);
    } finally {
      pds.child.kill('SIGKILL');
    }
  }, 150_000);
});

describe('deploy/kubernetes/pds.yaml (sandbox backend)', () => {
  it('starts the image with its environment, answers its probes and a token from its Secret, and exits 0 on SIGTERM', async () => {
    const data = mkdtempSync(path.join(scratch, 'data-'));
    const { argv, env } = environmentOf(image, ['deploy/kubernetes/pds.yaml'], {}, { '/data': data, '/tmp': mkdtempSync(path.join(scratch, 'tmp-')) });
    // The cluster's addresses become the test's: its Redis Service, and free ports for the pod's.
    const pds = await run(image, argv, { ...env, REDIS_URL: inject('redisUrl'), PORT: String(await freePort()), PDS_METRICS_PORT: String(await freePort()), HOST: '127.0.0.1' });
    try {
      expect((await fetch(`${pds.url}/healthz`)).status).toBe(200);
      const admin = env.PDS_ADMINS!.split(',')[0]!;
      expect((await api(pds, token(image, pds, admin), 'GET', '/api/v1/tenants')).status).toBe(200);
      expect((await fetch(`http://127.0.0.1:${pds.env.PDS_METRICS_PORT}/metrics`)).status).toBe(200);
    } finally {
      expect(await stop(pds)).toBe(0);
    }
  }, 90_000);
});

