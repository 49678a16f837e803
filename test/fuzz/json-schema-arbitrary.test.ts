/** The JSON-Schema-to-fast-check generator the fuzz suite relies on: it must produce valid inputs for every tool. */
import fc from 'fast-check';
import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { allTools } from '../../tools/registry.js';
import { inputSchema } from './harness.js';
import { arbitraryFor, describedExamples } from './json-schema-arbitrary.js';
import { applyMutations } from './mutations.js';

describe('arbitraryFor', () => {
  it.each(allTools.map((tool) => [tool.name, tool] as const))('generates inputs %s accepts', (_name, tool) => {
    const samples = fc.sample(arbitraryFor(inputSchema(tool)), { numRuns: 1000, seed: 7 });
    const valid = samples.filter((s) => tool.input.safeParse(s).success);
    // Cross-field rules are not in the JSON Schema (an action's fields another action refuses; canary_steps only with
    // strategy canary): with deploy-service's many optional fields most random inputs break one, so a thousand are
    // drawn for a few that pass.
    expect(valid.length).toBeGreaterThan(0);
    for (const sample of samples) expect(typeof sample).toBe('object');
  });

  it('honours pattern, length, enum, required, integer bounds, formats and records', () => {
    const schema = z.toJSONSchema(
      z.object({
        name: z.string().regex(/^[a-z]{2,5}$/),
        kind: z.enum(['a', 'b']),
        lines: z.number().int().min(1).max(10),
        mail: z.email(),
        tags: z.record(z.string().max(3), z.string()).optional(),
        list: z.array(z.string().min(1)).max(2),
      }),
      { io: 'input' },
    );
    for (const value of fc.sample(arbitraryFor(schema as never), { numRuns: 200, seed: 3 }) as Record<string, any>[]) {
      expect(value.name).toMatch(/^[a-z]{2,5}$/);
      expect(['a', 'b']).toContain(value.kind);
      expect(Number.isInteger(value.lines) && value.lines >= 1 && value.lines <= 10).toBe(true);
      expect(z.email().safeParse(value.mail).success).toBe(true);
      expect(value.list.length).toBeLessThanOrEqual(2);
      for (const key of Object.keys(value.tags ?? {})) expect(key.length).toBeLessThanOrEqual(3);
    }
  });

  it('reads example values from descriptions', () => {
    expect(describedExamples('Tenant name, e.g. "acme"; or e.g. "a\\"b"')).toEqual(['acme', 'a"b']);
  });
});

describe('applyMutations', () => {
  it('adds __proto__ as an own key, which JSON then carries', () => {
    const out = applyMutations({ a: 1 }, [{ kind: 'extra', key: '__proto__', value: { admin: true } }, { kind: 'delete', key: 'a' }]);
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(JSON.stringify(out)).toBe('{"__proto__":{"admin":true}}');
  });
});
