/**
 * Two pds processes on one PostgreSQL, at store level: two record stores (each with its own connection pool, as two
 * replicas have) on one database.
 */
import { describe, expect, it } from 'vitest';
import type { RecordStore, WorkflowRecord } from '../../adapters/sql/index.js';
import { LeaseLost, leaseOwnerId } from '../../adapters/sql/index.js';
import { openStore, testLocation } from './helpers.js';
import { auditEntry, workflow } from './records.js';

async function twoStores(): Promise<[RecordStore, RecordStore]> {
  const location = await testLocation('postgres');
  const a = await openStore(location);
  const b = await openStore(location);
  return [a, b];
}

const LEASE = 30_000;

describe('two processes on one PostgreSQL', () => {
  it('hand each workflow to one lease holder, whoever claims at the same time', async () => {
    const [a, b] = await twoStores();
    await a.transaction(async (tx) => {
      for (let i = 0; i < 40; i++) await tx.workflows.create(workflow(`w${i}`, { team_name: `t${i}`, component_name: 'web' }));
    });
    const now = Date.now();
    const owners = [leaseOwnerId(), leaseOwnerId()];
    expect(owners[0]).not.toBe(owners[1]);
    const rounds = await Promise.all(
      Array.from({ length: 10 }, (_, i) => [a, b][i % 2]!.workflows.claim({ owner: owners[i % 2]!, now, leaseMs: LEASE, limit: 7 })),
    );
    const claimed = rounds.flat();
    expect(claimed).toHaveLength(40);
    expect(new Set(claimed.map((w) => w.name)).size).toBe(40);
    const leases = await a.db.selectFrom('workflows').select(['name', 'lease_owner']).execute();
    for (const w of claimed) expect(leases.find((o) => o.name === w.name)?.lease_owner).toBe(w.leaseOwner);
    expect(new Set(claimed.map((w) => w.leaseOwner))).toEqual(new Set(owners));
  });

  it('commit a step once when both processes try it', async () => {
    const [a, b] = await twoStores();
    await a.workflows.create(workflow('w1', { team_name: 'acme', component_name: 'web' }));
    const now = Date.now();
    await a.workflows.claim({ owner: 'a', now, leaseMs: LEASE });
    const attempt = (store: RecordStore, owner: string) =>
      store.transaction(async (tx) => {
        const run = await tx.workflows.hold('w1', owner, 0);
        await tx.workflows.advance('w1', owner, { steps: run.steps, nextStep: 1, message: `by ${owner}`, dueAt: now, leaseUntil: now + LEASE });
        return owner;
      });
    const results = await Promise.allSettled([attempt(a, 'a'), attempt(b, 'b'), attempt(a, 'a')]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    for (const r of results) if (r.status === 'rejected') expect(r.reason).toBeInstanceOf(LeaseLost);
    expect(await b.workflows.get('w1')).toMatchObject({ nextStep: 1, message: 'by a' });
  });

  it('accept a confirmation value once across both processes', async () => {
    const [a, b] = await twoStores();
    for (let round = 0; round < 5; round++) {
      const key = `confirm:${round}`;
      const results = await Promise.all([a, b, a, b, a, b].map((s) => s.once.claim(key, 300)));
      expect(results.filter(Boolean)).toHaveLength(1);
    }
  });

  it('show each process every audit entry the other recorded, at once', async () => {
    const [a, b] = await twoStores();
    await a.audit.append(auditEntry('from-a', { team_name: 'acme' }));
    await b.audit.append(auditEntry('from-b', { team_name: 'acme' }));
    expect((await a.audit.query({ visible: 'all', limit: 50 })).map((e) => e.workflowName)).toEqual(['from-b', 'from-a']);
    expect((await b.audit.query({ visible: 'all', limit: 50 })).map((e) => e.workflowName)).toEqual(['from-b', 'from-a']);
  });

  it('let the other process take a workflow over once the holder died and its lease expired', async () => {
    const [a, b] = await twoStores();
    await a.workflows.create(workflow('w1', { team_name: 'acme', component_name: 'web' }));
    const start = Date.now();
    const [run] = await a.workflows.claim({ owner: 'a', now: start, leaseMs: 200 });
    await a.transaction(async (tx) => {
      await tx.workflows.hold('w1', 'a', 0);
      const steps = run!.steps.map((s, i) => (i === 0 ? { ...s, status: 'succeeded' as const } : s));
      await tx.workflows.advance('w1', 'a', { steps, nextStep: 1, message: 'step 2/3', dueAt: start, leaseUntil: start + 200 });
    });
    await a.close(); // the holder dies: nothing renews its lease

    expect(await b.workflows.claim({ owner: 'b', now: start + 100, leaseMs: LEASE })).toEqual([]);
    const [taken] = await b.workflows.claim({ owner: 'b', now: start + 200, leaseMs: LEASE });
    expect(taken).toMatchObject({ name: 'w1', leaseOwner: 'b', nextStep: 1 });
    await b.workflows.settle('w1', { phase: 'succeeded', message: 'done', finishedAt: new Date().toISOString() }, 'b');
    expect(await b.workflows.get('w1')).toMatchObject({ phase: 'succeeded' });
  });

  it('run every workflow of a service once and in submission order while both processes work the queue', async () => {
    const [a, b] = await twoStores();
    const services = ['web', 'api', 'cli'];
    await a.transaction(async (tx) => {
      for (let i = 0; i < 30; i++) {
        await tx.workflows.create(workflow(`w${String(i).padStart(2, '0')}`, { team_name: 'acme', component_name: services[i % 3]! }));
      }
      // A tenant operation in the middle holds back everything of the tenant submitted after it.
      await tx.workflows.create(workflow('tenant-op', { team_name: 'acme' }, { operation: 'delete-tenant' }));
      for (let i = 30; i < 36; i++) await tx.workflows.create(workflow(`w${i}`, { team_name: 'acme', component_name: services[i % 3]! }));
    });
    const log: Array<{ name: string; service: string; seq: number; event: 'start' | 'end'; by: string }> = [];

    async function work(store: RecordStore, owner: string): Promise<void> {
      for (;;) {
        const claimed = await store.workflows.claim({ owner, now: Date.now(), leaseMs: LEASE, limit: 2 });
        if (claimed.length === 0) {
          if ((await store.workflows.unfinished()).length === 0) return;
          await new Promise((r) => setTimeout(r, 2));
          continue;
        }
        await Promise.all(claimed.map((run) => runToEnd(store, owner, run)));
      }
    }
    async function runToEnd(store: RecordStore, owner: string, run: WorkflowRecord): Promise<void> {
      log.push({ name: run.name, service: run.service, seq: run.seq, event: 'start', by: owner });
      for (let step = run.nextStep; step < run.steps.length; step++) {
        await store.transaction(async (tx) => {
          const current = await tx.workflows.hold(run.name, owner, step);
          const steps = current.steps.map((s, i) => (i === step ? { ...s, status: 'succeeded' as const } : s));
          if (step === run.steps.length - 1) {
            log.push({ name: run.name, service: run.service, seq: run.seq, event: 'end', by: owner });
            await tx.workflows.settle(run.name, { phase: 'succeeded', message: 'ok', finishedAt: new Date().toISOString(), steps, nextStep: step + 1 }, owner);
          } else {
            await tx.workflows.advance(run.name, owner, { steps, nextStep: step + 1, message: '', dueAt: 0, leaseUntil: Date.now() + LEASE });
          }
        });
      }
    }
    await Promise.all([work(a, 'a'), work(b, 'b')]);

    const starts = log.filter((e) => e.event === 'start');
    expect(starts).toHaveLength(37);
    expect(new Set(starts.map((e) => e.name)).size).toBe(37);
    expect(new Set(starts.map((e) => e.by))).toEqual(new Set(['a', 'b']));
    // Per service (the tenant operation conflicts with all): runs never overlap and start in submission order.
    for (const svc of services) {
      const events = log.filter((e) => e.service === svc || e.service === '');
      let running: string | undefined;
      let lastSeq = 0;
      for (const e of events) {
        if (e.event === 'start') {
          expect(running, `${e.name} started while ${running} ran`).toBeUndefined();
          expect(e.seq).toBeGreaterThan(lastSeq);
          running = e.name;
          lastSeq = e.seq;
        } else {
          expect(e.name).toBe(running);
          running = undefined;
        }
      }
    }
  });
});
