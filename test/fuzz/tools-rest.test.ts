/**
 * Fuzz every tool in the registry over REST (issue 7, "The fuzz suite"): inputs generated from each tool's published
 * JSON Schema and mutated, sent by a platform admin and by a tenant member. Never a 5xx; every 4xx is `{ "error" }`
 * naming the field or the reason; a refused call changes nothing the API shows (audit, tenants, services, repositories).
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allTools } from '../../tools/registry.js';
import { callRest, errorBodyProblem, firstDifference, runParameters, timeBox, settle, snapshot, startWorld, type World } from './harness.js';
import { citableFields, toolInputs } from './inputs.js';
import { show } from './mutations.js';

let world: World;
beforeAll(async () => {
  world = await startWorld();
});
afterAll(() => world.close());

// Tools without a REST route (platform_execute_operation dispatches over MCP only) are fuzzed in tools-mcp.test.ts.
describe.each(allTools.filter((tool) => tool.rest).map((tool) => [tool.name, tool] as const))('%s over REST', (_name, tool) => {
  it('never fails with a 5xx, explains every 4xx, and changes nothing when it refuses', async () => {
    const callers = fc.constantFrom('root' as const, 'mel' as const);
    const nonObjects = fc.constantFrom<unknown>(null, [], 'x', 42, [{}]);
    const input = fc.oneof({ weight: 12, arbitrary: toolInputs(tool) as fc.Arbitrary<unknown> }, { weight: 1, arbitrary: nonObjects });
    const box = timeBox(800);
    await fc.assert(
      fc.asyncProperty(callers, input, async (caller, value) => {
        if (box.expired()) return;
        const before = await snapshot(world);
        const reply = await callRest(world, world.auth[caller], tool, value);
        const where = `${caller} ${tool.name} ${show(value)} → ${reply.status} ${reply.body.slice(0, 300)}`;
        expect(reply.status, where).toBeLessThan(500);
        if (reply.status >= 400) {
          expect(errorBodyProblem(reply, citableFields(tool, value)), where).toBeUndefined();
          const after = await snapshot(world);
          expect(after === before, `${where}: a refused call changed the platform\n${firstDifference(before, after)}`).toBe(true);
        } else if (tool.kind === 'write') {
          await settle(world);
        }
      }),
      runParameters(30),
    );
  });
});
