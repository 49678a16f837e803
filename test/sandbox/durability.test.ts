import { spawn } from 'node:child_process';
import { appendFile, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createSandboxPlatform } from '../../adapters/sandbox/index.js';
import type { SandboxState } from '../../adapters/sandbox/state.js';
import { execute, ONBOARD, openSandbox, run, settled, tempDir, waitFor } from './helpers.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(here, '../..');

async function stateOnDisk(dir: string): Promise<SandboxState> {
  return JSON.parse(await readFile(path.join(dir, 'state.json'), 'utf8')) as SandboxState;
}

describe('sandbox durability', () => {
  it('resumes a workflow interrupted by close() and settles its audit entry after the restart', async () => {
    const dir = await tempDir();
    const first = await openSandbox(dir, { stepMs: 30 });
    await run(first, 'create-tenant', { team_name: 'acme' });
    const name = await execute(first, 'deploy-service', ONBOARD);
    await waitFor(async () => (await first.workflows.get(name))?.message.startsWith('step 3/'), 'the workflow to be under way');
    await first.close();
    expect(await first.ready()).toBe(false);

    const onDisk = (await stateOnDisk(dir)).workflows[name]!;
    expect(onDisk.phase).toBe('submitted');
    expect(onDisk.nextStep).toBeGreaterThanOrEqual(2);
    expect(onDisk.nextStep).toBeLessThan(onDisk.steps.length);

    const second = await openSandbox(dir, { stepMs: 5 });
    expect(await second.ready()).toBe(true);
    const seen: string[] = [];
    second.workflows.onSettled((r) => seen.push(`${r.name}:${r.phase}`));
    expect(await settled(second, name)).toMatchObject({ phase: 'succeeded' });
    expect(await second.audit.get(name)).toMatchObject({ status: 'succeeded' });
    await waitFor(() => seen.length > 0, 'the listener');
    expect(seen).toEqual([`${name}:succeeded`]);
    expect((await second.backend.status('acme', 'web')).argocd).toMatchObject({ syncStatus: 'Synced', healthStatus: 'Healthy' });
    // every step ran exactly once across the two processes
    const steps = (await stateOnDisk(dir)).workflows[name]!.steps;
    expect(steps.every((s) => s.status === 'succeeded')).toBe(true);
    const { lines } = await second.backend.logs('acme', 'web', { lines: 1000, sinceSeconds: 3600 });
    const headers = lines.filter((l) => /^step \d+\/9:/.test(l.line)).map((l) => l.line.slice(0, 8));
    expect(headers).toEqual(['step 1/9', 'step 2/9', 'step 3/9', 'step 4/9', 'step 5/9', 'step 6/9', 'step 7/9', 'step 8/9', 'step 9/9']);
  });

  it('finishes a workflow after the process running it was killed (SIGKILL), with its audit entry', async () => {
    const dir = await tempDir();
    const setup = await openSandbox(dir);
    await run(setup, 'create-tenant', { team_name: 'acme' });
    await setup.close();

    const child = spawn(process.execPath, ['--import', 'tsx', path.join(here, 'fixtures/crash-child.ts'), dir], {
      cwd: repoRoot,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, signal) => resolve(signal)));
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (d: Buffer) => d.toString().includes('progress') && resolve());
      child.on('exit', (code) => reject(new Error(`child exited early (${code}): ${stderr}`)));
    });
    child.kill('SIGKILL');
    expect(await exited).toBe('SIGKILL');

    const before = await stateOnDisk(dir);
    expect(before.workflows['deploy-service-crash']).toMatchObject({ phase: 'submitted' });
    expect(before.audit.find((e) => e.workflowName === 'deploy-service-crash')).toMatchObject({ status: 'submitted' });
    expect(Number(await readFile(path.join(dir, 'lock'), 'utf8'))).toBe(child.pid); // stale lock of a dead process

    const after = await openSandbox(dir);
    expect(await settled(after, 'deploy-service-crash')).toMatchObject({ phase: 'succeeded' });
    expect(await after.audit.get('deploy-service-crash')).toMatchObject({ status: 'succeeded' });
    expect((await stateOnDisk(dir)).audit.find((e) => e.workflowName === 'deploy-service-crash')?.status).toBe('succeeded');
    expect(await after.backend.getService('acme', 'web')).toMatchObject({ imageTag: '0.1.0' });
  });

  it('ignores and removes a torn or garbage temp file next to the state', async () => {
    const dir = await tempDir();
    const first = await openSandbox(dir);
    await run(first, 'create-tenant', { team_name: 'acme' });
    await first.close();
    const good = await readFile(path.join(dir, 'state.json'), 'utf8');
    await writeFile(path.join(dir, 'state.json.0a1b2c3d4e5f.tmp'), good.slice(0, Math.floor(good.length / 2)));
    await writeFile(path.join(dir, 'state.json.ffffffffffff.tmp'), '\u0000garbage{{{');

    const second = await openSandbox(dir);
    expect((await second.backend.listTenants()).map((t) => t.name)).toEqual(['acme']);
    expect((await readdir(dir)).filter((f) => f.endsWith('.tmp'))).toEqual([]);
    await run(second, 'create-tenant', { team_name: 'beta' });
    expect(Object.keys((await stateOnDisk(dir)).tenants).sort()).toEqual(['acme', 'beta']);
  });

  it('refuses to start on a corrupt state.json instead of overwriting it', async () => {
    const dir = await tempDir();
    await writeFile(path.join(dir, 'state.json'), '{"version":1,"tenants":{"acme"');
    await expect(createSandboxPlatform({ dataDir: dir, domain: 'apps.test', stepMs: 5, githubAppSlug: 'x' })).rejects.toThrow(
      /state\.json is not valid JSON/,
    );
    expect(await readFile(path.join(dir, 'state.json'), 'utf8')).toBe('{"version":1,"tenants":{"acme"');
    await writeFile(path.join(dir, 'state.json'), '{"version":99}');
    await expect(createSandboxPlatform({ dataDir: dir, domain: 'apps.test', stepMs: 5, githubAppSlug: 'x' })).rejects.toThrow(
      /does not match this version/,
    );
  });

  it('refuses a second open of the same directory while the first is open', async () => {
    const dir = await tempDir();
    const first = await openSandbox(dir);
    await expect(openSandbox(dir)).rejects.toThrow(/already open in this process/);
    await first.close();
    await openSandbox(dir);
  });

  it('keeps the logs across a restart, skipping a torn last line, bounded per service', async () => {
    const dir = await tempDir();
    const first = await openSandbox(dir, { maxLogLinesPerService: 25 });
    await run(first, 'create-tenant', { team_name: 'acme' });
    await run(first, 'deploy-service', ONBOARD);
    await run(first, 'deploy-service', { action: 'deploy', team_name: 'acme', component_name: 'web', git_tag: '0.1.1', dockerfile_repo: 'acme/web' });
    const query = { lines: 1000, sinceSeconds: 3600 };
    const before = (await first.backend.logs('acme', 'web', query)).lines;
    expect(before.length).toBeGreaterThan(0);
    expect(before.length).toBeLessThanOrEqual(25);
    expect(before.at(-1)?.line).toMatch(/^workflow deploy-service-.* succeeded: deployed acme\/web 0\.1\.1$/);
    await first.close();

    await appendFile(path.join(dir, 'logs.jsonl'), '{"team":"acme","app":"web","timestamp":"20');
    const second = await openSandbox(dir, { maxLogLinesPerService: 25 });
    expect((await second.backend.logs('acme', 'web', query)).lines).toEqual(before);
    const fileLines = (await readFile(path.join(dir, 'logs.jsonl'), 'utf8')).split('\n').filter(Boolean);
    expect(fileLines.length).toBeLessThanOrEqual(25 + 20); // compacted: the web lines kept plus the tenant's own
  });
});
