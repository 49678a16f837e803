/**
 * The sandbox on the record store (SQLite here; `test/e2e/records-processes.test.ts` runs real pds processes on both
 * engines): a workflow interrupted by close() or SIGKILL finishes after a restart, every step once; logs survive a
 * restart, bounded per service; a corrupt state.json is refused, never imported or overwritten.
 */
import { spawn } from 'node:child_process';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import BetterSqlite3 from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { createSandboxPlatform } from '../../adapters/sandbox/index.js';
import { execute, ONBOARD, openSandbox, run, settled, tempDir, waitFor } from './helpers.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(here, '../..');

/** Rows of `pds.db`, read through a connection of its own. */
function rows<T>(dir: string, statement: string, ...params: unknown[]): T[] {
  const db = new BetterSqlite3(path.join(dir, 'pds.db'), { readonly: true });
  try {
    return db.prepare(statement).all(...params) as T[];
  } finally {
    db.close();
  }
}

function workflowRow(dir: string, name: string) {
  const [row] = rows<{ phase: string; next_step: number; steps: string }>(dir, 'select phase, next_step, steps from workflows where name = ?', name);
  return row && { phase: row.phase, nextStep: row.next_step, steps: JSON.parse(row.steps) as Array<{ status: string }> };
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

    const onDisk = workflowRow(dir, name)!;
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
    expect(workflowRow(dir, name)!.steps.every((s) => s.status === 'succeeded')).toBe(true);
    const { lines } = await second.backend.logs('acme', 'web', { lines: 1000, sinceSeconds: 3600 });
    const headers = lines.filter((l) => /^step \d+\/9:/.test(l.line)).map((l) => l.line.slice(0, 8));
    expect(headers).toEqual(['step 1/9', 'step 2/9', 'step 3/9', 'step 4/9', 'step 5/9', 'step 6/9', 'step 7/9', 'step 8/9', 'step 9/9']);
  });

  it('finishes a workflow after the process running it was killed (SIGKILL), with its audit entry, without waiting for its lease', async () => {
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

    expect(workflowRow(dir, 'deploy-service-crash')).toMatchObject({ phase: 'submitted' });
    expect(rows(dir, 'select status from audit_entries where workflow_name = ?', 'deploy-service-crash')).toEqual([{ status: 'submitted' }]);
    const [lease] = rows<{ lease_owner: string; lease_expires_at: number }>(dir, 'select lease_owner, lease_expires_at from workflows where name = ?', 'deploy-service-crash');
    expect(lease!.lease_owner).toContain(`:${child.pid}:`); // the lease of a dead process, not yet expired
    expect(lease!.lease_expires_at).toBeGreaterThan(Date.now() + 5_000);

    const after = await openSandbox(dir);
    expect(await settled(after, 'deploy-service-crash')).toMatchObject({ phase: 'succeeded' });
    expect(await after.audit.get('deploy-service-crash')).toMatchObject({ status: 'succeeded' });
    expect(rows(dir, 'select status from audit_entries where workflow_name = ?', 'deploy-service-crash')).toEqual([{ status: 'succeeded' }]);
    expect(await after.backend.getService('acme', 'web')).toMatchObject({ imageTag: '0.1.0' });
    const { lines } = await after.backend.logs('acme', 'web', { lines: 1000, sinceSeconds: 3600 });
    expect(lines.filter((l) => /^step \d+\/9:/.test(l.line)).map((l) => l.line.slice(0, 8))).toEqual(
      ['step 1/9', 'step 2/9', 'step 3/9', 'step 4/9', 'step 5/9', 'step 6/9', 'step 7/9', 'step 8/9', 'step 9/9'],
    );
  });

  it('refuses to start on a corrupt state.json instead of importing or overwriting it', async () => {
    const dir = await tempDir();
    await writeFile(path.join(dir, 'state.json'), '{"version":1,"tenants":{"acme"');
    await expect(createSandboxPlatform({ dataDir: dir, domain: 'apps.test', stepMs: 5, githubAppSlug: 'x' })).rejects.toThrow(
      /state\.json is not valid JSON/,
    );
    expect(await readFile(path.join(dir, 'state.json'), 'utf8')).toBe('{"version":1,"tenants":{"acme"');
    expect(await readdir(dir)).not.toContain('state.json.imported');
  });

  it('keeps the logs across a restart, bounded per service', async () => {
    const dir = await tempDir();
    const first = await openSandbox(dir, { maxLogLinesPerService: 25 });
    await run(first, 'create-tenant', { team_name: 'acme' });
    await run(first, 'deploy-service', ONBOARD);
    await run(first, 'deploy-service', { action: 'deploy', team_name: 'acme', component_name: 'web', git_tag: '0.1.1', dockerfile_repo: 'acme/web' });
    const query = { lines: 1000, sinceSeconds: 3600 };
    const before = (await first.backend.logs('acme', 'web', query)).lines;
    expect(before.length).toBe(25);
    expect(before.at(-1)?.line).toMatch(/^workflow deploy-service-.* succeeded: deployed acme\/web 0\.1\.1$/);
    await first.close();

    const second = await openSandbox(dir, { maxLogLinesPerService: 25 });
    expect((await second.backend.logs('acme', 'web', query)).lines).toEqual(before);
    expect(rows(dir, "select count(*) as n from log_lines where team = 'acme' and app = 'web'")).toEqual([{ n: 25 }]);
  });
});
