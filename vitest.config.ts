import { configDefaults, defineConfig } from 'vitest/config';

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
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // @actions/workflow-parser ships ESM that vitest must transform itself.
    server: { deps: { inline: ['@actions/workflow-parser'] } },
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['test/**/*.test.ts', 'tools/**/*.test.ts', 'templates/**/*.test.ts', 'auth/**/*.test.ts', 'adapters/**/*.test.ts', 'rest/**/*.test.ts'],
          exclude: [...configDefaults.exclude, 'test/cluster/**'],
          // A real redis-server and a real PostgreSQL on free loopback ports for the run (inject('redisUrl'),
          // inject('postgresUrl')).
          globalSetup: ['test/setup/redis.ts', 'test/setup/postgres.ts'],
        },
      },
      {
        extends: true,
        test: {
          name: 'cluster',
          include: ['test/cluster/**/*.test.ts'],
          // A real redis-server, and a real kube-apiserver with etcd and kube-controller-manager
          // (inject('kubeconfigPath')), started once, only when a cluster suite runs.
          globalSetup: ['test/setup/redis.ts', 'test/setup/kube-apiserver.ts'],
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
    ],
  },
});
