/**
 * The world the fuzz suite attacks: a real pds (sandbox backend, GitHub stand-in) with two tenants, `alpha` (admin
 * ada, member mel, viewer vic) and `bravo` (admin bruno, a service `vault` at 7.7.7 from the registered repository
 * `bravo/secret-repo`), plus what every property needs: calling a tool over REST exactly as its binding says, the
 * platform's observable state through the API (for "a refused call changes nothing"), and waiting for workflows.
 *
 * Reproduce a failure with the seed fast-check prints: `FUZZ_SEED=<seed> npx vitest run test/fuzz`. `FUZZ_RUNS`
 * multiplies the number of runs (default 1; the suite is sized for about a minute on two cores).
 */
import { z } from 'zod';
import type { Parameters as FcParameters } from 'fast-check';
import type { AnyTool } from '../../tools/define.js';
import { fillPath } from '../../tools/define.js';
import { startGitHubFixture, type GitHubFixture } from '../fixtures/github-api.js';
import { executeAndWait, registerRepository, startTestServer, type TestServer } from '../helpers/server.js';
import { CLIENTS, connectHttp, type TestClient } from '../helpers/mcp-clients.js';
import { closeAgents, send, type Reply } from '../limits/http.js';
import type { JsonSchema } from './json-schema-arbitrary.js';
import { show } from './mutations.js';

const scale = Number(process.env.FUZZ_RUNS ?? '1');

/**
 * A time box for one property: `expired()` turns true `ms` (scaled by `FUZZ_RUNS`) after the call. Properties return
 * at once when it has, so a slow machine runs fewer cases instead of overrunning. (fast-check's own
 * `interruptAfterTimeLimit` abandons a running case in the background, whose late effects would then be blamed on
 * the next property.)
 */
export function timeBox(ms: number): { expired(): boolean } {
  const end = Date.now() + ms * scale;
  return { expired: () => Date.now() > end };
}

/** fast-check run parameters: `numRuns` scaled by `FUZZ_RUNS`, and `FUZZ_SEED` when set. */
export function runParameters<T>(numRuns: number): FcParameters<T> {
  const seed = process.env.FUZZ_SEED === undefined ? undefined : Number(process.env.FUZZ_SEED);
  return {
    numRuns: Math.max(1, Math.round(numRuns * scale)),
    ...(seed === undefined ? {} : { seed }),
    endOnFailure: true, // shrinking replays calls against a server whose state moved on; the first failure is the report
    // fast-check's own report prints the counterexample whole (a 1 MiB string, for one); this one abbreviates it.
    reporter(details) {
      if (!details.failed) return;
      throw new Error(
        `fuzz property failed: seed ${details.seed}, path "${details.counterexamplePath}" ` +
          `(reproduce with FUZZ_SEED=${details.seed})\ncounterexample: ${show(details.counterexample)}\n` +
          String((details.errorInstance as Error | undefined)?.message ?? details.errorInstance),
      );
    },
  };
}

/** Strings of bravo's (admin, deployed tag, contact, port): one in an answer to a question without it is a leak. */
export const BRAVO_SECRETS = ['bruno', '7.7.7', 'bravo-secret@example.com', '8443'];

export interface World {
  pds: TestServer;
  github: GitHubFixture;
  /** Bearer header value per user. */
  auth: Record<'root' | 'ada' | 'mel' | 'vic' | 'bruno', string>;
  /** A workflow bravo ran (its audit entry is bravo's). */
  bravoWorkflow: string;
  close(): Promise<void>;
}

async function execute(pds: TestServer, user: string, operation: string, params: Record<string, string>): Promise<string> {
  const done = await executeAndWait(pds, user, operation, params);
  if (done.audit.status !== 'succeeded') throw new Error(`seeding ${operation}: ${JSON.stringify(done.audit)}`);
  return done.workflow;
}

/** Start pds with unlimited writes (the write limit is not under test here, and would refuse most calls). */
export async function startWorld(): Promise<World> {
  const github = await startGitHubFixture();
  const pds = await startTestServer({ PDS_GITHUB_API_URL: github.url }, { writeLimiter: { consume: async () => {} } });
  await execute(pds, 'root', 'create-tenant', { team_name: 'alpha', admins: 'ada', members: 'mel', viewers: 'vic' });
  await execute(pds, 'root', 'create-tenant', { team_name: 'bravo', admins: 'bruno', contact_email: 'bravo-secret@example.com' });
  await registerRepository(pds, 'ada', 'alpha', 'alpha/web');
  await registerRepository(pds, 'bruno', 'bravo', 'bravo/secret-repo');
  await execute(pds, 'ada', 'deploy-service', { action: 'onboard', team_name: 'alpha', component_name: 'web', dockerfile_repo: 'alpha/web', git_tag: '0.1.0', port: '8080' });
  const bravoWorkflow = await execute(pds, 'bruno', 'deploy-service', {
    action: 'onboard', team_name: 'bravo', component_name: 'vault', dockerfile_repo: 'bravo/secret-repo', git_tag: '7.7.7', port: '8443',
  });
  const auth = {} as World['auth'];
  for (const user of ['root', 'ada', 'mel', 'vic', 'bruno'] as const) auth[user] = `Bearer ${await pds.token(user)}`;
  return {
    pds,
    github,
    auth,
    bravoWorkflow,
    async close() {
      closeAgents();
      await pds.stop();
      await github.close();
    },
  };
}

/**
 * MCP clients for `users`, each over every toolset, the first on the v2 client with protocol 2026-07-28, the next on
 * 2025-11-25, then the v1 client: one fuzz run covers every client the other MCP tests use.
 */
export async function mcpClients<U extends keyof World['auth']>(world: World, users: readonly U[]): Promise<Record<U, TestClient>> {
  const kinds = [...CLIENTS].reverse();
  const clients = {} as Record<U, TestClient>;
  for (const [i, user] of users.entries()) {
    clients[user] = await connectHttp(kinds[i % kinds.length]!, `${world.pds.url}/mcp?toolsets=all`, { authorization: world.auth[user] });
  }
  return clients;
}

/**
 * The HTTP status an MCP client's error reports, or `undefined` when it is not an HTTP refusal (a JSON-RPC or
 * protocol error): the v1 client puts it in `code`, the v2 client's `SdkHttpError` in `status`.
 */
export function httpStatusOf(err: unknown): number | undefined {
  const e = err as { name?: string; code?: unknown; status?: unknown };
  if (typeof e.status === 'number') return e.status;
  if (e.name !== 'McpError' && typeof e.code === 'number' && e.code >= 100) return e.code;
  return undefined;
}

/** The published input schema of a tool, as MCP lists it. */
export function inputSchema(tool: AnyTool): JsonSchema {
  return z.toJSONSchema(tool.input, { io: 'input' }) as JsonSchema;
}

/** A value as one query parameter or path segment: strings as they are, anything else as JSON. */
function asText(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value) ?? '';
}

/**
 * The HTTP request that calls `tool` with `input` over REST, as its binding says (path parameters pinned by
 * `pathValues`, e.g. each operation's `name`, from the binding). Non-object inputs are sent as the body as they are.
 * @throws TypeError for a tool without a REST binding.
 */
export function restRequest(tool: AnyTool, input: unknown): { method: string; path: string; body?: string } {
  const binding = tool.rest;
  if (!binding) throw new TypeError(`${tool.name} has no REST route`);
  const fields: Record<string, unknown> = input && typeof input === 'object' && !Array.isArray(input) ? { ...input } : {};
  const path = fillPath(binding.path, (name) => {
    const pinned = binding.pathValues?.[name];
    const value = pinned ?? fields[name];
    if (pinned === undefined) delete fields[name];
    return encodeURIComponent(asText(value ?? ''));
  });
  if (binding.method === 'GET') {
    const query = new URLSearchParams();
    for (const [k, v] of Object.entries(fields)) {
      if (v === undefined) continue;
      for (const item of Array.isArray(v) ? v : [v]) query.append(k, asText(item));
    }
    const qs = query.toString();
    return { method: 'GET', path: qs ? `${path}?${qs}` : path };
  }
  const objectInput = input && typeof input === 'object' && !Array.isArray(input);
  const body = !objectInput ? input : binding.bodyField ? fields[binding.bodyField] : fields;
  return { method: 'POST', path, body: JSON.stringify(body ?? {}) };
}

/** Send a tool call over REST as the holder of `authorization`. */
export function callRest(world: World, authorization: string, tool: AnyTool, input: unknown): Promise<Reply> {
  const request = restRequest(tool, input);
  return send(world.pds.url, {
    method: request.method,
    rawPath: request.path,
    rawBody: request.body,
    headers: { authorization, ...(request.body === undefined ? {} : { 'content-type': 'application/json' }) },
  });
}

/** GET as root, the parsed body. */
async function read(world: World, path: string): Promise<unknown> {
  const reply = await send(world.pds.url, { rawPath: path, headers: { authorization: world.auth.root } });
  if (reply.status !== 200) throw new Error(`GET ${path}: ${reply.status} ${reply.body}`);
  return reply.json();
}

/** Everything a call could change that the API shows: audit trail, tenants, services, registered repositories. */
export async function snapshot(world: World): Promise<string> {
  const tenants = (await read(world, '/api/v1/tenants')) as { items: { name: string }[] };
  const repos = await Promise.all(tenants.items.map((t) => read(world, `/api/v1/repos?team=${t.name}`)));
  return JSON.stringify([await read(world, '/api/v1/audit'), tenants, await read(world, '/api/v1/services'), repos]);
}

/** Where two snapshots first differ, with some context on each side, for a failure message. */
export function firstDifference(before: string, after: string): string {
  let i = 0;
  while (i < before.length && before[i] === after[i]) i++;
  return `before: …${before.slice(Math.max(0, i - 150), i + 150)}…\nafter:  …${after.slice(Math.max(0, i - 150), i + 150)}…`;
}

/** bravo's state alone: its tenant, services, repositories and audit entries. */
export async function bravoSnapshot(world: World): Promise<string> {
  const audit = (await read(world, '/api/v1/audit')) as { items: { parameters: Record<string, string>; userId: string }[] };
  return JSON.stringify([
    await read(world, '/api/v1/tenants/bravo'),
    await read(world, '/api/v1/repos?team=bravo'),
    audit.items.filter((e) => e.parameters.team_name === 'bravo' || e.userId === 'bruno'),
  ]);
}

/** Wait until no audit entry is `submitted` (every accepted workflow has finished). */
export async function settle(world: World, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const audit = (await read(world, '/api/v1/audit')) as { items: { status: string }[] };
    if (!audit.items.some((e) => e.status === 'submitted')) return;
    if (Date.now() > deadline) throw new Error('workflows still running after 10 s');
    await new Promise((r) => setTimeout(r, 10));
  }
}

/**
 * Why an error answer is not a proper `{ "error" }` naming the field or the reason, or `undefined` when it is.
 * A 400 must name a field of the schema or of the input, or say what was wrong with the body.
 */
export function errorBodyProblem(reply: Reply, fieldNames: readonly string[]): string | undefined {
  let body: unknown;
  try {
    body = reply.json();
  } catch {
    return `not JSON: ${reply.body.slice(0, 120)}`;
  }
  if (!body || typeof body !== 'object' || Object.keys(body).join() !== 'error') return `not { error }: ${reply.body.slice(0, 120)}`;
  const error = (body as { error: unknown }).error;
  if (typeof error !== 'string' || error.trim().length < 8) return `error says nothing: ${JSON.stringify(error)}`;
  if (reply.status === 400 && !fieldNames.some((f) => f && error.includes(f)) && !/JSON|body|Content-/.test(error)) {
    return `400 names no field: ${error}`;
  }
  return undefined;
}
