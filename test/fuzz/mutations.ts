/**
 * Mutations of tool inputs for the fuzz suite: wrong types, odd names (prototype members, traversal, encodings),
 * unicode, huge strings, deep nesting, extra and missing fields, prototype keys. A mutation is data (so fast-check
 * shrinks it to a readable counterexample) applied to a copy with own properties only — `__proto__` included.
 */
import fc from 'fast-check';
import type { JsonSchema } from './json-schema-arbitrary.js';

/** Names that have broken lookups and parsers before: prototype members, traversal, encodings, control bytes. */
export const ODD_NAMES = [
  'constructor', '__proto__', 'prototype', 'toString', 'hasOwnProperty', 'valueOf', 'tostring', 'valueof',
  '', ' ', '.', '..', '../..', '%2e%2e', '%2F', 'a/b', 'a\\b', 'a;b', 'a?b', 'a#b', 'ACME', '-acme', 'acme-',
  'é', '🚀', 'ａｃｍｅ', 'a\u0000b', 'a\nb', "' OR 1=1 --", '${jndi:ldap://x}', '{{7*7}}', 'x'.repeat(64),
];

/** Keys that must never reach `Object.prototype`. */
export const PROTOTYPE_KEYS = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty'];

/** Any value that is wrong somewhere: another type, an odd name, unicode, a huge string, deep nesting. */
export const nastyValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom<unknown>(null, true, false, 0, -1, 1e308, 1.5, [], {}, ['a'], { a: 1 }, 'true', '0'),
  fc.constantFrom(...ODD_NAMES),
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constantFrom(10_000, 200_000, 1_200_000).map((n) => 'a'.repeat(n)),
  fc.integer({ min: 1, max: 3_000 }).map((depth) => JSON.parse('['.repeat(depth) + ']'.repeat(depth)) as unknown),
  fc.jsonValue({ maxDepth: 3 }),
);

export type Mutation =
  | { kind: 'set'; key: string; value: unknown }
  | { kind: 'delete'; key: string }
  | { kind: 'extra'; key: string; value: unknown };

/** Mutations for an object schema: 1–3 of set (a known field to a nasty value), delete, extra (odd or prototype key). */
export function mutationsFor(schema: JsonSchema): fc.Arbitrary<Mutation[]> {
  const keys = Object.keys(schema.properties ?? {});
  const known = keys.length > 0 ? fc.constantFrom(...keys) : fc.constant('name');
  const extraKey = fc.oneof(fc.constantFrom(...PROTOTYPE_KEYS), fc.constantFrom(...ODD_NAMES), fc.string({ maxLength: 12 }));
  const mutation: fc.Arbitrary<Mutation> = fc.oneof(
    { weight: 4, arbitrary: fc.record({ kind: fc.constant('set' as const), key: known, value: nastyValue }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('delete' as const), key: known }) },
    { weight: 2, arbitrary: fc.record({ kind: fc.constant('extra' as const), key: extraKey, value: nastyValue }) },
  );
  return fc.array(mutation, { minLength: 1, maxLength: 3 });
}

/** Own, enumerable property (works for `__proto__`, which plain assignment would turn into a prototype change). */
function put(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/** A copy of `input` with `mutations` applied. */
export function applyMutations(input: Record<string, unknown>, mutations: readonly Mutation[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(input)) put(out, k, v);
  for (const m of mutations) {
    if (m.kind === 'delete') delete out[m.key];
    else put(out, m.key, m.value);
  }
  return out;
}

/** A short, readable rendering of an input for failure reports (huge strings abbreviated). */
export function show(value: unknown): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(value, (_k, v: unknown) => (typeof v === 'string' && v.length > 60 ? `${v.slice(0, 20)}…(${v.length} chars)` : v));
  } catch {
    text = `${JSON.stringify(value).slice(0, 60)}… (nested too deep to show whole)`; // a replacer costs stack per level
  }
  return text === undefined ? String(value) : text.length > 400 ? `${text.slice(0, 400)}…` : text;
}
