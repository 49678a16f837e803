/** The API contract suite (test/contract/suite.ts) on the sandbox backend, with a clock the suite can move. */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createSandboxPlatform } from '../../adapters/sandbox/index.js';
import { startTestServer } from '../helpers/server.js';
import { describeContract } from './suite.js';

describeContract('sandbox', async () => {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'pds-test-'));
  let offset = 0;
  const platform = await createSandboxPlatform({
    dataDir,
    domain: 'apps.test',
    stepMs: 5,
    githubAppSlug: 'pds-platform',
    now: () => new Date(Date.now() + offset),
  });
  const pds = await startTestServer({ PDS_DATA_DIR: dataDir }, { platform });
  return { pds, workflowSeconds: 20, advanceClock: (ms) => void (offset += ms), stop: () => pds.stop() };
});
