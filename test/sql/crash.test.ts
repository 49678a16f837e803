/**
 * kill -9 of a process writing records loses nothing it acknowledged, and leaves no half of a transaction: never an
 * audit entry without its workflow (issue 9 item 5). The child (fixtures/crash-writer.ts) is killed with SIGKILL: no
 * close, no flush.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ENGINES, openStore, testLocation, type TestLocation } from './helpers.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(here, '../..');

/** Start the writer, kill it with SIGKILL once `until` says so; resolves with every name it acknowledged. */
async function killWriter(location: TestLocation, mode: 'loop' | 'open', until: (acked: string[], inside: string[]) => boolean) {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', path.join(here, 'fixtures/crash-writer.ts'), location.dataDir, location.databaseUrl ?? '', mode],
    { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const acked: string[] = [];
  const inside: string[] = [];
  let stderr = '';
  let buffered = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, signal) => resolve(signal)));
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => {
      buffered += d.toString();
      const lines = buffered.split('\n');
      buffered = lines.pop()!;
      for (const line of lines) {
        const [what, name] = line.split(' ');
        if (what === 'ack') acked.push(name!);
        if (what === 'inside') inside.push(name!);
      }
      if (until(acked, inside)) {
        child.kill('SIGKILL');
        resolve();
      }
    });
    child.on('exit', (code) => reject(new Error(`writer exited early (${code}): ${stderr}`)));
  });
  expect(await exited).toBe('SIGKILL');
  return { acked, inside };
}

describe.each(ENGINES)('kill -9 of a writer on %s', (engine) => {
  it('keeps every acknowledged transaction whole and nothing half-written', async () => {
    const location = await testLocation(engine);
    const { acked } = await killWriter(location, 'loop', (a) => a.length >= 40);
    const store = await openStore(location);
    const workflows = await store.db.selectFrom('workflows').select('name').execute();
    const audit = await store.db.selectFrom('audit_entries').select('workflow_name').execute();
    const workflowNames = new Set(workflows.map((w) => w.name));
    for (const name of acked) {
      expect(workflowNames.has(name), `acknowledged ${name} lost`).toBe(true);
      expect(await store.audit.get(name)).toMatchObject({ status: 'submitted', workflowName: name });
    }
    // All or nothing: every audit entry has its workflow and every workflow its entry (the one in flight included).
    expect(audit.map((a) => a.workflow_name).sort()).toEqual([...workflowNames].sort());
    expect(workflowNames.size - acked.length).toBeLessThanOrEqual(1);
  });

  it('rolls back a transaction the process was killed in the middle of', async () => {
    const location = await testLocation(engine);
    const { acked, inside } = await killWriter(location, 'open', (_a, i) => i.length > 0);
    expect(acked).toEqual(['committed']);
    expect(inside).toEqual(['uncommitted']);
    const store = await openStore(location);
    expect(await store.workflows.get('committed')).toBeDefined();
    expect(await store.audit.get('committed')).toBeDefined();
    expect(await store.workflows.get('uncommitted')).toBeUndefined();
    expect(await store.audit.get('uncommitted')).toBeUndefined();
    // The store takes writes again at once (no lock left behind by the dead process).
    expect(await store.writable()).toBe(true);
  });
});
