/** The API contract suite (test/contract/suite.ts) on the sandbox backend. */
import { startTestServer } from '../helpers/server.js';
import { describeContract } from './suite.js';

describeContract('sandbox', async () => {
  // Webhooks go to a receiver on 127.0.0.1, over http: only with private addresses allowed.
  const pds = await startTestServer({ PDS_OUTBOUND_ALLOW_PRIVATE: 'true', PDS_WEBHOOK_BACKOFF_MS: '100' });
  return { pds, workflowSeconds: 20, stop: () => pds.stop() };
});
