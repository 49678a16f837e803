/**
 * vitest global setup: one real PostgreSQL server on a free loopback port for the whole run (`test/fixtures/postgres.ts`).
 * Tests read its URL with `inject('postgresUrl')` and take a database of their own with `createTestDatabase`.
 */
import type {} from 'vitest';
import type { TestProject } from 'vitest/node';
import { startPostgres } from '../fixtures/postgres.js';

declare module 'vitest' {
  export interface ProvidedContext {
    postgresUrl: string;
  }
}

export default async function setup(project: TestProject) {
  const server = await startPostgres();
  project.provide('postgresUrl', server.url);
  return () => server.stop();
}
