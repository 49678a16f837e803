/** The API contract suite (test/contract/suite.ts) on the sandbox backend. */
import { startGitHubActionsIssuer } from '../fixtures/github-actions-oidc.js';
import { startTestServer } from '../helpers/server.js';
import { describeContract } from './suite.js';

describeContract('sandbox', async () => {
  const actions = await startGitHubActionsIssuer();
  const pds = await startTestServer({ PDS_GITHUB_OIDC_ISSUER: actions.url, PDS_OUTBOUND_ALLOW_PRIVATE: 'true' });
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
