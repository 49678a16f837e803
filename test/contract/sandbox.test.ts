/** The API contract suite (test/contract/suite.ts) on the sandbox backend. */
import { createWriteLimiter } from '../../rest/ratelimit.js';
import { startGitHubActionsIssuer } from '../fixtures/github-actions-oidc.js';
import { startTestServer } from '../helpers/server.js';
import { describeContract } from './suite.js';

describeContract('sandbox', async () => {
  const actions = await startGitHubActionsIssuer();
  // Webhooks go to a receiver on 127.0.0.1, over http, and the GitHub Actions issuer is on 127.0.0.1: only with
  // private addresses allowed. Rollout pauses at a twentieth: "2s" holds 100 ms, "1h" 3 minutes (long enough to
  // promote or abort by hand). The suite's people write more than 20 times a minute between them (the limit has tests
  // of its own).
  const pds = await startTestServer(
    {
      PDS_GITHUB_OIDC_ISSUER: actions.url,
      PDS_OUTBOUND_ALLOW_PRIVATE: 'true',
      PDS_WEBHOOK_BACKOFF_MS: '100',
      PDS_SANDBOX_PAUSE_SCALE: '0.05',
      PDS_SANDBOX_UNHEALTHY_TAGS: '1.3.0',
    },
    { writeLimiter: createWriteLimiter({ max: 1000 }) },
  );
  return {
    pds,
    actions,
    workflowSeconds: 20,
    rollouts: { unhealthyTag: '1.3.0', quickSteps: '10%:2s,50%:2s', heldSteps: '10%:1h,50%:1h' },
    async stop() {
      await pds.stop();
      await actions.close();
    },
  };
});
