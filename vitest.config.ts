import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { configDefaults, defineConfig } from 'vitest/config';

/**
 * The run's log: every pds a test starts through test/helpers/server.ts writes its lines here (one file per worker,
 * test/helpers/run-log.ts), and the log-scan project, which runs after the others, searches them for secrets.
 */
const runLogDir = (process.env.PDS_RUN_LOG_DIR ??= mkdtempSync(path.join(tmpdir(), 'pds-run-log-')));
const scan = 'test/ops/run-log-scan.test.ts';

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
    provide: { runLogDir },
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['test/**/*.test.ts', 'tools/**/*.test.ts', 'templates/**/*.test.ts', 'auth/**/*.test.ts', 'adapters/**/*.test.ts', 'rest/**/*.test.ts'],
          exclude: [...configDefaults.exclude, 'test/cluster/**', scan],
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
          // A real redis-server, a real PostgreSQL (the kubernetes backend's records), and a real kube-apiserver with
          // etcd and kube-controller-manager (inject('kubeconfigPath')), started once, only when a cluster suite runs.
          globalSetup: ['test/setup/redis.ts', 'test/setup/postgres.ts', 'test/setup/kube-apiserver.ts'],
          // The suites share one control plane and its cluster-wide objects (the workflow ConfigMap's GitOps
          // repository, the Argo CD namespace, the stand-in controllers): one file at a time.
          fileParallelism: false,
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
      {
        extends: true,
        // After every other project (groups run from the lowest order up): the whole run's log is complete by then.
        test: { name: 'log-scan', include: [scan], sequence: { groupOrder: 1 } },
      },
    ],
  },
});
