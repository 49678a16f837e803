/** The API contract suite (test/contract/suite.ts) on the sandbox backend, with a clock the suite can move. */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createSandboxPlatform } from '../../adapters/sandbox/index.js';
import { createWriteLimiter } from '../../rest/ratelimit.js';
import { startGitHubActionsIssuer } from '../fixtures/github-actions-oidc.js';
import { startTestServer } from '../helpers/server.js';
import { stepHolds } from '../helpers/step-hold.js';
import { describeContract } from './suite.js';

describeContract('sandbox', async () => {
  const holds = stepHolds();
  const actions = await startGitHubActionsIssuer();
  const dataDir = await mkdtemp(path.join(tmpdir(), 'pds-test-'));
  let offset = 0;
  const platform = await createSandboxPlatform({
    dataDir,
    domain: 'apps.test',
    stepMs: 5,
    githubAppSlug: 'pds-platform',
    now: () => new Date(Date.now() + offset),
    beforeStep: holds.beforeStep,
    // Webhooks go to a receiver on 127.0.0.1, over http: only with private addresses allowed.
    webhooks: { allowPrivate: true, backoffMs: 100 },
    // Rollout pauses at a twentieth: "2s" holds 100 ms, "1h" 3 minutes (long enough to promote or abort by hand).
    rollout: { pauseScale: 0.05, unhealthyTags: ['1.3.0'] },
  });
  // The GitHub Actions issuer is on 127.0.0.1 too: private addresses allowed. The suite's people write more than 20
  // times a minute between them (the limit has tests of its own).
  const pds = await startTestServer(
    {
      PDS_DATA_DIR: dataDir,
      PDS_ADMINS: 'root,ops',
      PDS_GITHUB_OIDC_ISSUER: actions.url,
      PDS_OUTBOUND_ALLOW_PRIVATE: 'true',
      PDS_WEBHOOK_BACKOFF_MS: '100',
      PDS_SANDBOX_PAUSE_SCALE: '0.05',
      PDS_SANDBOX_UNHEALTHY_TAGS: '1.3.0',
    },
    { platform, writeLimiter: createWriteLimiter({ max: 1000 }) },
  );
  return {
    pds,
    actions,
    workflowSeconds: 20,
    advanceClock: (ms) => void (offset += ms),
    // After the first step (validate), which marks the service being rolled out.
    hold: (prefix) => holds.hold(prefix, 1).release,
    rollouts: { unhealthyTag: '1.3.0', quickSteps: '10%:2s,50%:2s', heldSteps: '10%:1h,50%:1h' },
    async stop() {
      holds.releaseAll();
      await pds.stop();
      await actions.close();
    },
  };
});
