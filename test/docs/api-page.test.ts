/**
 * `docs/api.md`, the API contract page, against the OpenAPI document pds serves (`rest/openapi.ts`): every path and
 * method of the document has its row on the page, and every API path the page names is in the document.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { buildOpenApi } from '../../rest/openapi.js';
import { allTools } from '../../tools/registry.js';

const page = readFileSync(new URL('../../docs/api.md', import.meta.url), 'utf8');
const doc = buildOpenApi(allTools, 'http://localhost:8080') as { paths: Record<string, Record<string, unknown>> };
const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'];

/** `GET /api/v1/tenants` for every operation of the OpenAPI document. */
const documented = Object.entries(doc.paths).flatMap(([path, item]) =>
  Object.keys(item)
    .filter((m) => METHODS.includes(m))
    .map((m) => `${m.toUpperCase()} ${path}`),
);

/** `GET /api/v1/tenants` for every endpoint row of the page (`| GET | \`/api/v1/tenants\` | …`). */
const rows = [...page.matchAll(/^\|\s*(GET|PUT|POST|DELETE|PATCH)\s*\|\s*`([^`]+)`/gm)].map((m) => `${m[1]} ${m[2]}`);

describe('docs/api.md', () => {
  it('has a row for every path and method of the OpenAPI document', () => {
    expect(documented.length).toBeGreaterThan(15);
    expect(documented.filter((op) => !rows.includes(op))).toEqual([]);
  });

  it('has no endpoint row the OpenAPI document lacks, and no row twice', () => {
    expect(rows.filter((op) => !documented.includes(op))).toEqual([]);
    expect(rows.filter((op, i) => rows.indexOf(op) !== i)).toEqual([]);
  });

  it('names no API path the OpenAPI document lacks (a concrete path matches its template)', () => {
    const templates = Object.keys(doc.paths).map((p) => new RegExp(`^${p.replace(/\{[^}]+\}/g, '[^/]+')}$`));
    const named = new Set([...page.matchAll(/`(?:(?:GET|POST|PUT|DELETE|PATCH) )?(\/api\/v1\/[^`\s?*]*)`/g)].map((m) => m[1]!));
    expect(named.size).toBeGreaterThan(15);
    expect([...named].filter((p) => !templates.some((t) => t.test(p)))).toEqual([]);
  });
});
