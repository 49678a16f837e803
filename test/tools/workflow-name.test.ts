/**
 * Workflow names (`tools/operations/execute.ts`): unique in the record store for as long as records are kept, so the
 * random suffix must not repeat. With five characters the soak's 7,000 deploys met four repeats, each refused with
 * 409 `workflow … already exists` (BENCHMARKS.md, "Sixth pass").
 */
import { describe, expect, it } from 'vitest';
import { workflowNameFor } from '../../tools/operations/execute.js';

describe('workflowNameFor', () => {
  it('names the operation, then a DNS-safe suffix of 10 characters', () => {
    expect(workflowNameFor('deploy-service')).toMatch(/^deploy-service-[bcdfghjklmnpqrstvwxz2456789]{10}$/);
  });

  it('does not repeat a name in 200,000 submissions', () => {
    const names = new Set<string>();
    for (let i = 0; i < 200_000; i++) names.add(workflowNameFor('deploy-service'));
    expect(names.size).toBe(200_000);
  });
});
