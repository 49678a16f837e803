/** Two sandboxes on one PostgreSQL database (two pds processes' platforms): onChange tells of the other's progress. */
import { describe, expect, it } from 'vitest';
import type { WorkflowRun } from '../../core/ports.js';
import { testLocation } from '../sql/helpers.js';
import { execute, ONBOARD, openSandbox, run, tempDir, waitFor } from './helpers.js';

describe('sandboxes sharing one record store', () => {
  it("tell their onChange listeners of the steps and the outcome of a workflow the other one runs", async () => {
    const { databaseUrl } = await testLocation('postgres');
    // a's steps are slow and b polls often, so b (polling every 25 ms, its step time) reads several of a's steps however busy the machine is (with equal
    // 40 ms steps and polls, b once read only the last step and the outcome under load).
    const a = await openSandbox(await tempDir(), { databaseUrl, stepMs: 400 });
    await run(a, 'create-tenant', { team_name: 'acme' });
    const name = await execute(a, 'deploy-service', ONBOARD);
    await waitFor(async () => (await a.workflows.get(name))?.message.startsWith('step 3/'), 'a to be running it');

    // b starts while a holds the workflow's lease: a runs every step, b only reads.
    const b = await openSandbox(await tempDir(), { databaseUrl, stepMs: 25 });
    const seen: WorkflowRun[] = [];
    b.workflows.onChange((r) => seen.push(r));
    await waitFor(() => seen.some((r) => r.name === name && r.phase === 'succeeded'), 'b to hear of the outcome');
    const messages = seen.filter((r) => r.name === name).map((r) => r.message);
    expect(messages.length).toBeGreaterThan(2);
    expect(messages.at(-1)).toMatch(/^onboarded acme\/web/);
    expect(new Set(messages).size).toBe(messages.length); // each change once
  });
});
