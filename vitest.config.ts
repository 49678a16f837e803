import { createLogger } from 'vite';
import { defineConfig } from 'vitest/config';

// @actions/workflow-parser ships source maps that name files it does not ship; Vite warns once per module (dozens of
// lines per run). Drop exactly that warning so real output stays readable.
const logger = createLogger();
const isMissingSourcesWarning = (message: string) =>
  message.includes('@actions/workflow-parser') && message.includes('points to missing source files');
const warnOnce = logger.warnOnce.bind(logger);
logger.warnOnce = (message, options) => {
  if (!isMissingSourcesWarning(message)) warnOnce(message, options);
};

export default defineConfig({
  customLogger: logger,
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
