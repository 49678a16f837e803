/** The inputs the fuzz suite sends to a tool: generated from its published JSON Schema, then mostly mutated. */
import fc from 'fast-check';
import type { AnyTool } from '../../tools/define.js';
import { inputSchema } from './harness.js';
import { arbitraryFor } from './json-schema-arbitrary.js';
import { applyMutations, mutationsFor } from './mutations.js';

/** One valid-by-schema input in four; the rest mutated (see `mutations.ts`). */
export function toolInputs(tool: AnyTool): fc.Arbitrary<Record<string, unknown>> {
  const schema = inputSchema(tool);
  const valid = arbitraryFor(schema) as fc.Arbitrary<Record<string, unknown>>;
  const mutated = fc.tuple(valid, mutationsFor(schema)).map(([value, mutations]) => applyMutations(value, mutations));
  return fc.oneof({ weight: 1, arbitrary: valid }, { weight: 3, arbitrary: mutated });
}

/** Names a 400 may cite for this call: the schema's fields and the keys sent (nested ones too). */
export function citableFields(tool: AnyTool, input: unknown): string[] {
  const names = new Set(Object.keys(inputSchema(tool).properties ?? {}));
  const pending: unknown[] = [input];
  while (pending.length > 0) {
    const value = pending.pop();
    if (!value || typeof value !== 'object') continue;
    for (const [k, v] of Object.entries(value)) {
      names.add(k);
      if (names.size < 200) pending.push(v);
    }
  }
  return [...names];
}
