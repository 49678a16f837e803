/**
 * vitest global setup: one real `redis-server` on a free loopback port for the whole run, without persistence.
 * Tests read its URL with `inject('redisUrl')` and isolate themselves by key namespace.
 */
import type {} from 'vitest';
import type { TestProject } from 'vitest/node';
import { startRedisServer } from '../fixtures/redis-server.js';

declare module 'vitest' {
  export interface ProvidedContext {
    redisUrl: string;
  }
}

export default async function setup(project: TestProject) {
  const server = await startRedisServer();
  project.provide('redisUrl', server.url);
  return () => server.stop();
}
