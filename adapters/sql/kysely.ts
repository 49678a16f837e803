/**
 * The Kysely values pds uses, loaded from Kysely's CommonJS build. Kysely's ES module build is about 980 files, and
 * Node keeps a module record per file: alone, importing it costs 19 MiB of resident memory over a bare Node and
 * requiring the CommonJS build of the same code 11 MiB; an idle pds holds 4–5 MiB less with the CommonJS build
 * (image flags; BENCHMARKS.md "Memory on the shipped path"). Import Kysely's values from here, never from `kysely`, so one build is loaded; types
 * may still be imported from `kysely` (`import type` is erased).
 *
 * The same API: https://kysely-org.github.io/kysely-apidoc/
 */
import { createRequire } from 'node:module';
import type * as KyselyModule from 'kysely';

const kysely = createRequire(import.meta.url)('kysely') as typeof KyselyModule;

export const { CompiledQuery, Kysely, Migrator, PostgresDialect, SqliteDialect, sql } = kysely;
/** The query builder's type, under the same name as its class (`import { Kysely } from './kysely.js'`). */
export type Kysely<DB> = KyselyModule.Kysely<DB>;
