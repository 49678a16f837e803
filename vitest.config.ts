import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'tools/**/*.test.ts', 'templates/**/*.test.ts', 'auth/**/*.test.ts', 'adapters/**/*.test.ts', 'rest/**/*.test.ts'],
    // A real redis-server on a free loopback port for the run (inject('redisUrl')).
    globalSetup: ['test/setup/redis.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // @actions/workflow-parser ships ESM that vitest must transform itself.
    server: { deps: { inline: ['@actions/workflow-parser'] } },
  },
});
