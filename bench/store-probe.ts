/**
 * The record-store benchmark's measuring process (`store.ts` forks one per engine and table size, so start-up and
 * resident memory are those of a fresh process): opens the seeded store, then times the store operations behind
 * the API, one at a time, and reports over IPC.
 *
 * argv[2]: JSON `{ dataDir, databaseUrl?, iterations, workflows, tenants }`.
 */
import { performance } from 'node:perf_hooks';
import { openRecordStore } from '../adapters/sql/index.js';
import type { AuditQuery } from '../core/ports.js';

interface ProbeOptions {
  dataDir: string;
  databaseUrl?: string;
  iterations: number;
  /** Seeded workflows are named `seed-1` … `seed-<workflows>`. */
  workflows: number;
  /** Seeded tenants are `t0` … `t<tenants - 1>` with uid `uid-t<k>`. */
  tenants: number;
}

/** Milliseconds per call: p50 and p99. */
export interface Timing {
  p50: number;
  p99: number;
}

/** What one probe reports. */
export interface ProbeResult {
  startMs: number;
  rssMiB: number;
  execute: Timing;
  auditAdmin: Timing;
  auditMember: Timing;
  workflowGet: Timing;
}

const options = JSON.parse(process.argv[2]!) as ProbeOptions;

const started = performance.now();
const store = await openRecordStore({ dataDir: options.dataDir, databaseUrl: options.databaseUrl });
if (!(await store.writable())) throw new Error('the seeded store is not writable');
const startMs = performance.now() - started;

async function time(what: () => Promise<unknown>): Promise<Timing> {
  for (let i = 0; i < Math.min(100, options.iterations); i++) await what(); // warm-up: JIT, statement cache, pool
  const samples: number[] = [];
  for (let i = 0; i < options.iterations; i++) {
    const t = performance.now();
    await what();
    samples.push(performance.now() - t);
  }
  samples.sort((a, b) => a - b);
  const at = (q: number) => Number(samples[Math.min(samples.length - 1, Math.floor(q * samples.length))]!.toFixed(3));
  return { p50: at(0.5), p99: at(0.99) };
}

let n = 0;
const run = `${process.pid}-${Date.now()}`;
const execute = await time(async () => {
  const name = `bench-${run}-${++n}`;
  const parameters = { team_name: `t${n % options.tenants}`, component_name: 'web', git_tag: '1.2.3', dockerfile_repo: 'acme/web', action: 'deploy' };
  await store.transaction(async (tx) => {
    await tx.audit.append({
      id: name,
      timestamp: new Date().toISOString(),
      userId: `u${n % 500}`,
      operation: 'deploy-service',
      parameters,
      workflowName: name,
      status: 'submitted',
      riskLevel: 'medium',
      message: '',
    });
    await tx.workflows.create({
      name,
      operation: 'deploy-service',
      workflowTemplate: 'deploy-service',
      parameters,
      userId: `u${n % 500}`,
      steps: ['validate', 'clone', 'build', 'push', 'gitops', 'sync', 'rollout', 'health'],
      message: 'queued; step 1/8: validate',
      startedAt: new Date().toISOString(),
      dueAt: Date.now() + 60_000,
    });
  });
});

const admin: AuditQuery = { visible: 'all', limit: 50 };
const auditAdmin = await time(() => store.audit.query(admin));

// A member of three tenants, who also sees their own entries elsewhere.
const k = 7;
const member: AuditQuery = {
  visible: {
    userId: `u${k}`,
    tenants: [k, k + 1, k + 2].map((t) => ({ name: `t${t % options.tenants}`, uid: `uid-t${t % options.tenants}` })),
  },
  limit: 50,
};
const auditMember = await time(() => store.audit.query(member));

let m = 0;
const workflowGet = await time(async () => {
  // Spread over the whole table: the cost of a cold-ish lookup, not of one cached row.
  const name = `seed-${1 + ((m++ * 7919) % options.workflows)}`;
  // As GET /api/v1/workflows/{name} does: the audit entry, then the workflow.
  const entry = await store.audit.get(name);
  const run = await store.workflows.get(name);
  if (!entry || !run) throw new Error(`seeded workflow ${name} is missing`);
});

const result: ProbeResult = { startMs, rssMiB: process.memoryUsage().rss / 2 ** 20, execute, auditAdmin, auditMember, workflowGet };
await store.close();
process.send!(result, () => process.exit(0));
