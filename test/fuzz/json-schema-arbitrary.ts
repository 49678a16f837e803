/**
 * A fast-check arbitrary for the JSON Schema (draft 2020-12) that zod 4's `z.toJSONSchema` emits for tool inputs:
 * `type` object/array/string/integer/number/boolean/null, `properties` + `required`, `additionalProperties` and
 * `propertyNames` (records), `items`, `minItems`/`maxItems`, `enum`, `const`, `minLength`/`maxLength`, `pattern`,
 * `format` (email, uri), `minimum`/`maximum`, `anyOf`/`oneOf` (alone, or narrowing the keywords beside them), local
 * `$ref`s. Unknown keywords are ignored, so a schema using one still gets values (not always valid ones, which the
 * fuzz suite does not need).
 *
 * Values are built from fast-check's own arbitraries; example values quoted in `description`s (`e.g. "acme"`) are
 * offered too, so schemas whose `pattern` fast-check cannot generate from still get valid values.
 */
import fc from 'fast-check';

/** The subset of JSON Schema read here. */
export interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: JsonSchema | boolean;
  propertyNames?: JsonSchema;
  items?: JsonSchema;
  minItems?: number;
  maxItems?: number;
  enum?: unknown[];
  const?: unknown;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  format?: string;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  $ref?: string;
  $defs?: Record<string, JsonSchema>;
  description?: string;
  default?: unknown;
}

/** Longest generated string or array when the schema sets no bound (large values are the mutations' job). */
const SOFT_MAX = 24;

/** Example values a description quotes: `e.g. "acme"` → `acme`; `e.g. 100` → `100`. */
export function describedExamples(description: string | undefined): string[] {
  if (!description) return [];
  return [...description.matchAll(/e\.g\. "((?:[^"\\]|\\.)*)"/g)].map((m) => m[1]!.replace(/\\"/g, '"').replace(/\\n/g, '\n'));
}

function fromPattern(pattern: string): fc.Arbitrary<string> | undefined {
  try {
    const regex = new RegExp(pattern);
    const arb = fc.stringMatching(regex);
    // stringMatching may build values for a pattern it only partly understands (lookarounds): keep what matches.
    return arb.filter((s) => regex.test(s));
  } catch {
    return undefined;
  }
}

function stringArbitrary(schema: JsonSchema): fc.Arbitrary<string> {
  const minLength = schema.minLength ?? 0;
  const maxLength = Math.max(minLength, Math.min(schema.maxLength ?? SOFT_MAX, SOFT_MAX));
  const examples = describedExamples(schema.description).filter((e) => !schema.pattern || new RegExp(schema.pattern).test(e));
  const fits = (s: string) => s.length >= minLength && s.length <= (schema.maxLength ?? Infinity);
  let base: fc.Arbitrary<string>;
  // Plain addresses: fc.emailAddress() covers all of RFC 5322, more than the `pattern` zod puts beside the format.
  if (schema.format === 'email') base = fc.tuple(fc.stringMatching(/^[a-z0-9]{1,12}$/), fc.stringMatching(/^[a-z]{1,12}$/)).map(([user, host]) => `${user}@${host}.example`);
  else if (schema.format === 'uri') base = fc.webUrl();
  else if (schema.pattern) base = fromPattern(schema.pattern) ?? fc.constantFrom(...(examples.length ? examples : ['']));
  else base = fc.string({ minLength, maxLength });
  const bounded = base.filter(fits);
  return examples.length > 0 ? fc.oneof(bounded, fc.constantFrom(...examples)) : bounded;
}

function numberArbitrary(schema: JsonSchema, integer: boolean): fc.Arbitrary<number> {
  const min = schema.minimum ?? (schema.exclusiveMinimum !== undefined ? schema.exclusiveMinimum + 1 : -1_000_000);
  const max = schema.maximum ?? (schema.exclusiveMaximum !== undefined ? schema.exclusiveMaximum - 1 : 1_000_000);
  return integer ? fc.integer({ min: Math.ceil(min), max: Math.floor(max) }) : fc.double({ min, max, noNaN: true });
}

function objectArbitrary(schema: JsonSchema, root: JsonSchema): fc.Arbitrary<Record<string, unknown>> {
  const properties = schema.properties ?? {};
  const required = new Set(schema.required ?? []);
  const known = Object.fromEntries(Object.entries(properties).map(([k, s]) => [k, arbitraryFor(s, root)]));
  const requiredKeys = Object.keys(properties).filter((k) => required.has(k));
  const record = fc.record(known, { requiredKeys });
  const extra = schema.additionalProperties;
  if (!extra || Object.keys(properties).length > 0) return record;
  // A record (`z.record`): keys from `propertyNames`, values from `additionalProperties`.
  const keys = schema.propertyNames ? (arbitraryFor(schema.propertyNames, root) as fc.Arbitrary<string>) : fc.string({ maxLength: SOFT_MAX });
  const values = extra === true ? fc.jsonValue({ maxDepth: 2 }) : arbitraryFor(extra, root);
  return fc.dictionary(keys, values, { maxKeys: 6 });
}

/** `base` narrowed by `alternative` (both apply): the alternative's keywords win, properties merge, required adds up. */
function conjunction(base: JsonSchema, alternative: JsonSchema): JsonSchema {
  const { anyOf: _anyOf, oneOf: _oneOf, ...own } = base;
  const properties = { ...own.properties };
  for (const [key, narrower] of Object.entries(alternative.properties ?? {})) properties[key] = { ...properties[key], ...narrower };
  return {
    ...own,
    ...alternative,
    ...(own.properties || alternative.properties ? { properties } : {}),
    required: [...new Set([...(own.required ?? []), ...(alternative.required ?? [])])],
  };
}

/**
 * An arbitrary of values for `schema`.
 * @param root the document `$ref`s resolve against (`#/$defs/…`); defaults to `schema`.
 * @example fc.sample(arbitraryFor(z.toJSONSchema(tool.input, { io: 'input' })), 5)
 */
export function arbitraryFor(schema: JsonSchema, root: JsonSchema = schema): fc.Arbitrary<unknown> {
  if (schema.$ref) {
    const name = schema.$ref.replace(/^#\/\$defs\//, '');
    const target = root.$defs?.[name];
    if (!target) throw new TypeError(`unresolved $ref ${schema.$ref}`);
    return fc.constant(null).chain(() => arbitraryFor(target, root));
  }
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (schema.enum) return fc.constantFrom(...schema.enum);
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (alternatives) {
    const { anyOf: _anyOf, oneOf: _oneOf, description: _description, ...base } = schema;
    // Beside keywords of its own (an object whose oneOf states what each `action` requires), each alternative narrows
    // the schema, as JSON Schema reads it: generate from the two together.
    const narrowed = Object.keys(base).length ? alternatives.map((alternative) => conjunction(schema, alternative)) : alternatives;
    return fc.oneof(...narrowed.map((s) => arbitraryFor(s, root)));
  }
  const types = Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : [];
  if (types.length > 1) return fc.oneof(...types.map((type) => arbitraryFor({ ...schema, type }, root)));
  switch (types[0]) {
    case 'object':
      return objectArbitrary(schema, root);
    case 'array': {
      const items = schema.items ? arbitraryFor(schema.items, root) : fc.jsonValue({ maxDepth: 1 });
      const minLength = schema.minItems ?? 0;
      return fc.array(items, { minLength, maxLength: Math.max(minLength, Math.min(schema.maxItems ?? 6, 6)) });
    }
    case 'string':
      return stringArbitrary(schema);
    case 'integer':
      return numberArbitrary(schema, true);
    case 'number':
      return numberArbitrary(schema, false);
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}
