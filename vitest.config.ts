import { defineConfig } from 'vitest/config';

const isMissingSourcesWarning = (message: string) =>
  message.includes('@actions/workflow-parser') && message.includes('points to missing source files');

export default defineConfig({
  plugins: [
    {
      // @actions/workflow-parser ships source maps naming files it does not ship, and Vite warns once per module
      // (dozens of lines a run). Drop exactly that warning so real output stays readable. (Vitest installs its own
      // logger, so this wraps the resolved one rather than setting customLogger.)
      name: 'pds:quiet-workflow-parser-sourcemaps',
      configResolved(config) {
        const warnOnce = config.logger.warnOnce.bind(config.logger);
        config.logger.warnOnce = (message, options) => {
          if (!isMissingSourcesWarning(message)) warnOnce(message, options);
        };
      },
    },
  ],
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
