/**
 * Fuzz tenant isolation (issue 7, "The fuzz suite"): a member (mel) or viewer (vic) of tenant alpha calls every tool
 * in the registry, over REST and MCP, with generated and mutated inputs whose names are all bravo's (tenant, service,
 * repository, workflow). Never a 5xx; nothing of bravo's comes back; bravo's state is unchanged afterwards.
 */
import type { TestClient } from '../helpers/mcp-clients.js';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AnyTool } from '../../tools/define.js';
import { allTools } from '../../tools/registry.js';
import { BRAVO_SECRETS, bravoSnapshot, callRest, firstDifference, httpStatusOf, mcpClients, runParameters, settle, startWorld, timeBox, type World } from './harness.js';
import { toolInputs } from './inputs.js';
import { show } from './mutations.js';

let world: World;
let clients: Record<'mel' | 'vic', TestClient>;

beforeAll(async () => {
  world = await startWorld();
  clients = await mcpClients(world, ['mel', 'vic'] as const);
});
afterAll(async () => {
  for (const client of Object.values(clients)) await client.close();
  await world.close();
});

/** Every name in `input` made bravo's: tenant fields, service fields, repositories, the workflow, nested parameters. */
function bravoize(tool: AnyTool, input: Record<string, unknown>): Record<string, unknown> {
  const names: Record<string, unknown> = {
    team: 'bravo', team_name: 'bravo', tenant: 'bravo', component_name: 'vault', app: 'vault',
    dockerfile_repo: 'bravo/secret-repo', repo: 'bravo/secret-repo',
  };
  if (tool.name === 'platform_get_tenant') names.name = 'bravo';
  if (tool.name === 'platform_get_workflow') names.name = world.bravoWorkflow;
  const schemaKeys = Object.keys(tool.input.shape as object);
  const out: Record<string, unknown> = { ...input };
  for (const [key, value] of Object.entries(names)) if (schemaKeys.includes(key)) out[key] = value;
  if (tool.name === 'platform_execute_operation') {
    const parameters = out.parameters && typeof out.parameters === 'object' ? out.parameters : {};
    out.parameters = { ...parameters, team_name: 'bravo', component_name: 'vault' };
  }
  return out;
}

/** A secret of bravo's in an answer that the question did not contain. */
function leaked(text: string, input: unknown): string | undefined {
  const asked = JSON.stringify(input);
  return BRAVO_SECRETS.find((secret) => text.includes(secret) && !asked.includes(secret));
}

const callers = fc.constantFrom('mel' as const, 'vic' as const);

/** One call as alpha's `caller`: what came back as text, and whether the tool accepted it. */
type Transport = (caller: 'mel' | 'vic', tool: AnyTool, input: Record<string, unknown>) => Promise<{ text: string; accepted: boolean }>;

const overRest: Transport = async (caller, tool, input) => {
  const reply = await callRest(world, world.auth[caller], tool, input);
  expect(reply.status, `${caller} ${tool.name} ${show(input)} → ${reply.status} ${reply.body.slice(0, 300)}`).toBeLessThan(500);
  return { text: reply.body, accepted: reply.status < 300 };
};

const overMcp: Transport = async (caller, tool, input) => {
  try {
    const result = await clients[caller].callTool({ name: tool.name, arguments: input });
    return { text: JSON.stringify(result), accepted: !result.isError };
  } catch (err) {
    // Only the HTTP edge may refuse before the tool: a 4xx, never a 5xx or a JSON-RPC internal error.
    const code = httpStatusOf(err);
    expect(code !== undefined && code >= 400 && code < 500, `${caller} ${tool.name} ${show(input)} → ${String(err).slice(0, 300)}`).toBe(true);
    return { text: String(err), accepted: false };
  }
};

describe.each(allTools.map((tool) => [tool.name, tool] as const))('%s with bravo names, as alpha', (_name, tool) => {
  const transports: [string, Transport][] = tool.rest ? [['REST', overRest], ['MCP', overMcp]] : [['MCP', overMcp]];
  it.each(transports)('over %s: never reads or changes bravo', async (_transport, call) => {
    const box = timeBox(350);
    await fc.assert(
      fc.asyncProperty(callers, toolInputs(tool), async (caller, raw) => {
        if (box.expired()) return;
        const input = bravoize(tool, raw);
        const before = await bravoSnapshot(world);
        const { text, accepted } = await call(caller, tool, input);
        const where = `${caller} ${tool.name} ${show(input)} → ${text.slice(0, 300)}`;
        expect(leaked(text, input), where).toBeUndefined();
        if (accepted && tool.kind === 'write') await settle(world);
        const after = await bravoSnapshot(world);
        expect(after === before, `${where}: bravo changed\n${firstDifference(before, after)}`).toBe(true);
      }),
      runParameters(12),
    );
  });
});
