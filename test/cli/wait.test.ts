/**
 * `pds wait` and `pds workflows` (issue 12 section 2) as real processes with their own config directory
 * (`XDG_CONFIG_HOME`) and a token from the environment, against a real pds: a failed workflow ends with exit 1 and
 * its failed step and log tail, a workflow that outlasts `--timeout` with exit 4, usage errors with exit 2.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandboxPlatform } from '../../adapters/sandbox/index.js';
import type { Platform } from '../../core/ports.js';
import { execute, ONBOARD, run as runOn } from '../sandbox/helpers.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const PDS = path.resolve('bin/pds-src.js');
let home: string;

function pds(args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [PDS, ...args], { env: { ...process.env, XDG_CONFIG_HOME: home, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr })));
}

/** A pds whose platform the test also holds, so it can submit a workflow past the preflight. */
async function serverWith(stepMs: number): Promise<{ server: TestServer; platform: Platform; env: Record<string, string> }> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'pds-cli-wait-'));
  const platform = await createSandboxPlatform({ dataDir, domain: 'apps.test', stepMs, githubAppSlug: 'pds-test' });
  const server = await startTestServer({ PDS_DATA_DIR: dataDir }, { platform });
  return { server, platform, env: { PDS_BASE_URL: server.url, PDS_TOKEN: await server.token('alice') } };
}

beforeAll(async () => {
  home = await mkdtemp(path.join(tmpdir(), 'pds-cli-home-'));
});
afterAll(() => rm(home, { recursive: true, force: true }));

describe('pds wait', () => {
  let fast: Awaited<ReturnType<typeof serverWith>>;
  beforeAll(async () => {
    fast = await serverWith(5);
    await runOn(fast.platform, 'create-tenant', { team_name: 'acme', admins: 'alice' });
    await runOn(fast.platform, 'deploy-service', ONBOARD);
  });
  afterAll(() => fast.server.stop());

  it('exits 1 for a failed workflow, naming the failed step, its message and log tail', async () => {
    // A second onboarding, which the preflight would refuse, submitted past it: it fails in its first step.
    const name = await execute(fast.platform, 'deploy-service', ONBOARD);
    const result = await pds(['wait', name, '-o', 'json'], fast.env);
    expect(result.code, result.stderr).toBe(1);
    expect(JSON.parse(result.stdout)).toMatchObject({ workflow: name, settled: true, phase: 'failed' });
    expect(result.stderr).toContain(`pds: ${name} failed at validate onboarding of acme/web: service acme/web is already onboarded`);
    expect(result.stderr).toMatch(/\n {2}.*failed/);
  });

  it('lists the history of a service, newest first, as a table or JSON', async () => {
    const json = await pds(['workflows', '--team', 'acme', '--service', 'web', '-o', 'json'], fast.env);
    expect(json.code, json.stderr).toBe(0);
    const items = JSON.parse(json.stdout).items;
    expect(items.map((w: { operation: string }) => w.operation)).toEqual(['deploy-service', 'deploy-service']);
    const table = await pds(['workflows', '--team', 'acme', '-o', 'table'], fast.env);
    expect(table.stdout).toMatch(/deploy-service \(onboard\).*succeeded.*acme\/web.*0\.1\.0/);
    expect((await pds(['workflows', '--service', 'web'], fast.env)).code).toBe(2);
  });

  it('exits 2 for a bad --timeout and 1 for a workflow that does not exist', async () => {
    expect((await pds(['wait', 'x', '--timeout', 'soon'], fast.env)).code).toBe(2);
    const missing = await pds(['wait', 'deploy-service-zzzzz'], fast.env);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('workflow not found: deploy-service-zzzzz');
  });
});

describe('pds wait --timeout', () => {
  it('exits 4 when the workflow has not settled in time, saying how to wait again', async () => {
    // A minute a step: nothing settles while the test runs.
    const slow = await serverWith(60_000);
    try {
      const name = await execute(slow.platform, 'create-tenant', { team_name: 'slowco', admins: 'alice' });
      const result = await pds(['wait', name, '--timeout', '1s', '-o', 'json'], slow.env);
      expect(result.code, result.stderr).toBe(4);
      expect(JSON.parse(result.stdout)).toMatchObject({ settled: false });
      expect(result.stderr).toContain(`wait again with: pds wait ${name}`);
    } finally {
      await slow.server.stop();
    }
  });
});
