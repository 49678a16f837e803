/** The API contract suite (test/contract/suite.ts) on the sandbox backend. */
import { startGitHubActionsIssuer } from '../fixtures/github-actions-oidc.js';
import { startTestServer } from '../helpers/server.js';
import { describeContract } from './suite.js';

describeContract('sandbox', async () => {
  const actions = await startGitHubActionsIssuer();
  // Webhooks go to a receiver on 127.0.0.1, over http, and the GitHub Actions issuer is on 127.0.0.1: only with
  // private addresses allowed.
  const pds = await startTestServer({ PDS_GITHUB_OIDC_ISSUER: actions.url, PDS_OUTBOUND_ALLOW_PRIVATE: 'true', PDS_WEBHOOK_BACKOFF_MS: '100' });
  return {
    pds,
    actions,
    workflowSeconds: 20,
    async stop() {
      await pds.stop();
      await actions.close();
    },
  };
});
