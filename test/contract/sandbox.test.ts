/** The API contract suite (test/contract/suite.ts) on the sandbox backend. */
import { startTestServer } from '../helpers/server.js';
import { describeContract } from './suite.js';

describeContract('sandbox', async () => {
  const pds = await startTestServer();
  return { pds, workflowSeconds: 20, stop: () => pds.stop() };
});
