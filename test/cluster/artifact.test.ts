/**
 * deploy/kubernetes/cluster/30-pds.yaml as it ships (issue 18 item 2): the image laid out from the Dockerfile
 * (test/artifact/image.ts), its `CMD` run with the environment the manifest gives the container (the ConfigMap of
 * 20-config.yaml, the Secrets deploy/README.md has a platform team create, the pod's fields, the GitHub App key at its
 * mount path) against the test API server, under the ServiceAccount `pds` from deploy/ as in a pod.
 */
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { layOutImage, type ImageLayout } from '../artifact/image.js';
import { api, environmentOf, run, stop, token } from '../artifact/run.js';
import { adminKubeConfig } from '../fixtures/kube-apiserver.js';
import { createTestDatabase } from '../fixtures/postgres.js';
import { freePort } from '../fixtures/free-port.js';
import { installDeploy, serviceAccountKubeConfig } from './deploy.js';

let scratch: string;
let image: ImageLayout;

beforeAll(() => {
  scratch = mkdtempSync(path.join(tmpdir(), 'pds-artifact-cluster-'));
  image = layOutImage(path.resolve('.'), path.join(scratch, 'image'));
}, 240_000);
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('deploy/kubernetes/cluster/30-pds.yaml (kubernetes backend)', () => {
  it('starts the image with its ConfigMap, Secrets and ServiceAccount, becomes ready, answers a token, exits 0 on SIGTERM', async () => {
    const admin = adminKubeConfig(inject('kubeconfigPath'));
    await installDeploy(admin);
    const account = await serviceAccountKubeConfig(admin, { namespace: 'pds', name: 'pds' }, scratch);
    const mounted = mkdtempSync(path.join(scratch, 'github-app-'));
    writeFileSync(
      path.join(mounted, 'private-key.pem'),
      generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs1', format: 'pem' }),
    );
    const database = await createTestDatabase(inject('postgresUrl'));
    try {
      const { argv, env } = environmentOf(
        image,
        ['deploy/kubernetes/cluster/20-config.yaml', 'deploy/kubernetes/cluster/30-pds.yaml'],
        // The Secrets deploy/README.md has the platform team create, with the test's PostgreSQL and Redis.
        { PDS_JWT_SECRET: 'cluster-manifest-test-secret-0123456789', PDS_DATABASE_URL: database.url, REDIS_URL: inject('redisUrl') },
        { '/var/run/pds/github-app': mounted, '/tmp': mkdtempSync(path.join(scratch, 'tmp-')) },
      );
      expect(env.PDS_BACKEND).toBe('kubernetes');
      // KUBECONFIG stands for the pod's mounted ServiceAccount token: the same account, the same RBAC.
      const pds = await run(image, argv, {
        ...env,
        KUBECONFIG: account.path,
        PORT: String(await freePort()),
        PDS_METRICS_PORT: String(await freePort()),
        HOST: '127.0.0.1',
      });
      try {
        expect((await fetch(`${pds.url}/healthz`)).status).toBe(200);
        const adminUser = env.PDS_ADMINS!.split(',')[0]!;
        expect((await api(pds, token(image, pds, adminUser), 'GET', '/api/v1/tenants')).status).toBe(200);
      } finally {
        expect(await stop(pds)).toBe(0);
      }
    } finally {
      await database.drop();
    }
  }, 120_000);
});
