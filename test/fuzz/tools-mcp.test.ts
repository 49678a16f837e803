/**
 * Fuzz every tool in the registry over MCP (Streamable HTTP, the SDK client the repo depends on): the same generated
 * and mutated inputs as over REST. Never a protocol error or an HTTP 5xx; a refusal is a tool result with
 * `isError: true` and a message (or, for a body the HTTP edge cannot read, an HTTP 4xx); a refused call changes nothing.
 */
import { textOf, type TestClient } from '../helpers/mcp-clients.js';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allTools } from '../../tools/registry.js';
import { firstDifference, httpStatusOf, mcpClients, runParameters, settle, snapshot, startWorld, timeBox, type World } from './harness.js';
import { toolInputs } from './inputs.js';
import { show } from './mutations.js';

let world: World;
let clients: Record<'root' | 'mel', TestClient>;

beforeAll(async () => {
  world = await startWorld();
  clients = await mcpClients(world, ['root', 'mel'] as const);
});
afterAll(async () => {
  for (const client of Object.values(clients)) await client.close();
  await world.close();
});

describe.each(allTools.map((tool) => [tool.name, tool] as const))('%s over MCP', (_name, tool) => {
  it('never fails with a protocol error or a 5xx, explains every refusal, and changes nothing when it refuses', async () => {
    const box = timeBox(800);
    await fc.assert(
      fc.asyncProperty(fc.constantFrom('root' as const, 'mel' as const), toolInputs(tool), async (caller, input) => {
        if (box.expired()) return;
        const before = await snapshot(world);
        const where = `${caller} ${tool.name} ${show(input)}`;
        let refused: boolean;
        try {
          const result = await clients[caller].callTool({ name: tool.name, arguments: input });
          refused = result.isError === true;
          if (refused) {
            expect(textOf(result), where).not.toBe('internal error');
            expect(textOf(result).length, where).toBeGreaterThan(8);
          }
        } catch (err) {
          // Only the HTTP edge may refuse before the tool (e.g. a body over 1 MiB): a 4xx, never a 5xx or -32603.
          const code = httpStatusOf(err);
          expect(code !== undefined && code >= 400 && code < 500, `${where} → ${String(err).slice(0, 300)}`).toBe(true);
          refused = true;
        }
        if (refused) {
          const after = await snapshot(world);
          expect(after === before, `${where}: a refused call changed the platform\n${firstDifference(before, after)}`).toBe(true);
        } else if (tool.kind === 'write') await settle(world);
      }),
      runParameters(30),
    );
  });
});
